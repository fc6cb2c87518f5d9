// A small browser app on llm-baton, as a user writes it: `import ... from "llm-baton"` and nothing
// else. tests/e2e/bundlers.test.mjs builds it with esbuild and with Vite, each by its plain CLI,
// serves the output on loopback and drives it in Chromium: one whole answer, one stream, and one
// OpenAI-style request through `baton.fetch` (the gateway in the page, loaded on that first call).
// The config comes from the page's caller, since the provider's URL is only known at run time.
import { Baton, BatonError } from "llm-baton";

const out = document.getElementById("out");
const show = (line) => {
  out.textContent += `${line}\n`;
};

const ask = (prompt) => ({ messages: [{ role: "user", content: prompt }] });

window.batonApp = {
  /** `baton.complete`: the whole answer and the target that gave it. */
  async complete(config, route, prompt) {
    const answer = await new Baton(config).complete(route, ask(prompt));
    show(`complete: ${answer.text} (from ${answer.target})`);
    return { text: answer.text, target: answer.target };
  },

  /** `baton.stream`: the text items in order, then the done item's target. */
  async stream(config, route, prompt) {
    const pieces = [];
    let target;
    for await (const item of new Baton(config).stream(route, ask(prompt))) {
      if (item.type === "reset") pieces.length = 0;
      else if (item.type === "text") pieces.push(item.text);
      else if (item.type === "done") target = item.target;
    }
    show(`stream: ${pieces.join("")} (from ${target})`);
    return { pieces, target };
  },

  /**
   * `baton.fetch` as an OpenAI Chat Completions endpoint, streamed: the SSE deltas' text, the
   * status and llm-baton's x-baton-target header.
   */
  async fetchChat(config, route, prompt) {
    const baton = new Baton(config);
    const response = await baton.fetch("https://llm-baton.invalid/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: route, stream: true, ...ask(prompt) }),
    });
    const body = await response.text();
    const pieces = body
      .split("\n")
      .filter((line) => line.startsWith("data: ") && line !== "data: [DONE]")
      .map((line) => JSON.parse(line.slice("data: ".length)).choices?.[0]?.delta?.content)
      .filter((text) => typeof text === "string" && text !== "");
    show(`fetch: ${pieces.join("")} (HTTP ${response.status})`);
    return { status: response.status, target: response.headers.get("x-baton-target"), pieces };
  },

  /** A config mistake, to check that BatonError survived the bundler as the class it exports. */
  configError() {
    try {
      new Baton({ targets: {} });
      return null;
    } catch (e) {
      return { isBatonError: e instanceof BatonError, kind: e.kind, message: e.message };
    }
  },
};
window.batonAppReady = true;
