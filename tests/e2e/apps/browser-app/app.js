// A small browser app on llm-baton, as a user writes it: `import ... from "llm-baton"` and nothing
// else. tests/e2e/bundlers.test.mjs builds it with esbuild and with Vite, each by its plain CLI,
// serves the output on loopback and drives it in Chromium: one whole answer, one stream, one
// traced answer (telemetry.js loaded on that first traced call), and one OpenAI-style request
// through `baton.fetch` (the gateway in the page, loaded on that first call).
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

  /**
   * `baton.complete` with `telemetry`, whose code the first traced call loads: the answer's text
   * and each span the call started, with whether it ended. The tracer is written by hand (the app
   * installs no OpenTelemetry): it gives spans that record their name and their end.
   */
  async traced(config, route, prompt) {
    const spans = [];
    const tracer = {
      startSpan(name) {
        const spanId = String(spans.length + 1).padStart(16, "0");
        const span = {
          name,
          ended: false,
          spanContext: () => ({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId, traceFlags: 1 }),
          setAttribute: () => span,
          setAttributes: () => span,
          addEvent: () => span,
          setStatus: () => span,
          end() {
            span.ended = true;
          },
        };
        spans.push(span);
        return span;
      },
    };
    const answer = await new Baton(config, { telemetry: { tracer } }).complete(route, ask(prompt));
    // An attempt's span ends after the poll that ended it.
    await new Promise((resolve) => setTimeout(resolve, 0));
    show(`traced: ${answer.text} (${spans.length} spans)`);
    return { text: answer.text, spans: spans.map((s) => [s.name, s.ended]) };
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
