// Request parameters through the gateway (docs/parameters.md), in workerd, Deno and Node, read by
// clients we did not write: the official `openai` SDK asks a Chat member for logprobs and reads
// them, whole (`choices[0].logprobs.content`) and streamed (each chunk's), and a Responses member
// for its output text's (`include`, `top_logprobs`), whole and streamed, as the AI SDK's OpenAI
// provider (`@ai-sdk/openai`, its `providerMetadata.openai.logprobs`) does too; the fields the gateway
// does not model (`service_tier`, `metadata`, `prediction`…) reach a member of the client's
// format unchanged, as `@anthropic-ai/sdk`'s do an Anthropic member; on a member of another
// format they are dropped, and `x-baton-warning` says which, whole and streamed. Then, in
// process, the same drop as the call's `warning` event in its trace.
// gateway.test.mjs imports this file; it also runs on its own.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, streamText } from "ai";
import { createGateway } from "llm-baton/gateway";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { putScenario, startProvider, upstream } from "./provider.mjs";
import { startDenoGateway, startNodeGateway, startWorkerdGateway } from "./gateway_hosts.mjs";

const KEY = "gw-parameters-key";
const HOSTS = { workerd: startWorkerdGateway, deno: startDenoGateway, node: startNodeGateway };
const ASK = [{ role: "user", content: "Say hello" }];
// Chat fields llm-baton does not model, each as a Chat member must receive it.
const CHAT_EXTRAS = {
  service_tier: "flex",
  metadata: { team: "search" },
  user: "u-42",
  safety_identifier: "sid-7",
  prompt_cache_key: "pck-1",
  prediction: { type: "content", content: "Hello" },
  frequency_penalty: 0.5,
  logit_bias: { 50256: -100 },
  store: false,
};

function config(providerUrl, host) {
  const at = (name) => `${providerUrl}/s/${host}-parameters-${name}/v1`;
  const target = (format, name, extra = {}) => ({ format, baseUrl: at(name), model: `up-${name}`, apiKey: "sk-upstream", ...extra });
  return {
    targets: {
      chat: target("openai_chat", "chat"),
      native: target("openai_responses", "native"),
      claude: target("anthropic_messages", "claude"),
      down: target("openai_chat", "down"),
      // The operator's extraBody wins over a client's field of the same name.
      tiered: target("openai_chat", "tiered", { extraBody: { service_tier: "priority" } }),
    },
    routes: { mixed: { fallback: ["down", "claude"] } },
    deadlineMs: 5000,
    gateway: { apiKeys: [KEY] },
    health: false,
  };
}

/**
 * The tokens of logprob entries, joined, after checking each has `top` alternatives, the token
 * first, and its bytes (the AI SDK's schema keeps no `bytes`).
 */
function tokens(content, top, { bytes = true } = {}) {
  for (const entry of content) {
    assert.equal(typeof entry.logprob, "number");
    if (bytes) assert.deepEqual(entry.bytes, [...Buffer.from(entry.token)]);
    assert.equal(entry.top_logprobs.length, top);
    assert.equal(entry.top_logprobs[0].token, entry.token);
  }
  return content.map((e) => e.token).join("");
}

let provider;
before(async () => {
  provider = await startProvider();
});
after(() => provider?.stop());

for (const [host, start] of Object.entries(HOSTS)) {
  describe(`gateway in ${host}: request parameters and logprobs`, { concurrency: 1 }, () => {
    let gw;
    let openai;
    let anthropic;
    const id = (target) => `${host}-parameters-${target}`;
    const P = () => provider.url;

    before(async () => {
      gw = await start(config(provider.url, host));
      openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
      anthropic = new Anthropic({ baseURL: gw.url, apiKey: KEY, maxRetries: 0 });
    });
    after(() => gw?.stop());

    test("a Chat member: logprobs come back whole and streamed, the other fields reach it unchanged", async () => {
      await putScenario(P(), id("chat"), [{ text: "Hello there friend" }, { text: "Streamed hello back" }]);
      const { data, response } = await openai.chat.completions
        .create({ model: "chat", messages: ASK, logprobs: true, top_logprobs: 2, ...CHAT_EXTRAS })
        .withResponse();
      assert.equal(data.choices[0].message.content, "Hello there friend");
      assert.equal(tokens(data.choices[0].logprobs.content, 2), "Hello there friend");
      assert.equal(response.headers.get("x-baton-warning"), null, "nothing was dropped");

      const stream = await openai.chat.completions.create({ model: "chat", messages: ASK, logprobs: true, top_logprobs: 1, stream: true });
      let text = "";
      const content = [];
      for await (const chunk of stream) {
        const choice = chunk.choices[0];
        if (!choice) continue;
        text += choice.delta?.content ?? "";
        if (choice.logprobs?.content) content.push(...choice.logprobs.content);
        if (choice.logprobs?.content?.length) assert.equal(choice.delta.content, choice.logprobs.content[0].token, "with the text it describes");
      }
      assert.equal(text, "Streamed hello back");
      assert.equal(tokens(content, 1), text);

      const r = await upstream(P(), id("chat"));
      const [whole, streamed] = r.log.map((e) => e.body);
      for (const [name, value] of Object.entries({ logprobs: true, top_logprobs: 2, ...CHAT_EXTRAS })) {
        assert.deepEqual(whole[name], value, `${name} reaches the Chat member unchanged`);
      }
      assert.deepEqual([streamed.logprobs, streamed.top_logprobs, streamed.stream], [true, 1, true]);
    });

    test("a Responses member: the output text's logprobs come back whole and streamed, its other fields reach it unchanged", async () => {
      await putScenario(P(), id("native"), [{ text: "Hello there friend" }, { text: "Streamed hello back" }]);
      const extras = { include: ["message.output_text.logprobs"], top_logprobs: 2, service_tier: "flex", safety_identifier: "sid-7", prompt_cache_key: "pck-1", metadata: { team: "search" } };
      const whole = await openai.responses.create({ model: "native", input: "Say hello", ...extras });
      assert.equal(whole.output_text, "Hello there friend");
      const part = whole.output.find((o) => o.type === "message").content[0];
      assert.equal(tokens(part.logprobs, 2), "Hello there friend");

      const stream = openai.responses.stream({ model: "native", input: "Say hello", include: ["message.output_text.logprobs"], top_logprobs: 1 });
      const streamed = [];
      stream.on("response.output_text.delta", (e) => {
        assert.equal(e.logprobs.map((l) => l.token).join(""), e.delta, "with the text it describes");
        streamed.push(...e.logprobs);
      });
      const final = await stream.finalResponse();
      assert.equal(tokens(streamed, 1), "Streamed hello back");
      assert.equal(tokens(final.output.find((o) => o.type === "message").content[0].logprobs, 1), "Streamed hello back");

      const [body] = (await upstream(P(), id("native"))).log.map((e) => e.body);
      for (const [name, value] of Object.entries(extras)) assert.deepEqual(body[name], value, `${name} reaches the Responses member unchanged`);
    });

    test("the AI SDK's OpenAI provider reads the logprobs, Chat and Responses, whole and streamed", async () => {
      const ai = createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY });
      const providerOptions = { openai: { logprobs: 2 } };
      const ask = { prompt: "Say hello", maxRetries: 0, providerOptions };
      for (const [target, model, flat] of [["chat", ai.chat("chat"), (l) => l], ["native", ai.responses("native"), (l) => l.flat()]]) {
        await putScenario(P(), id(target), [{ text: "Hello there friend" }, { text: "Streamed hello back" }]);
        const whole = await generateText({ model, ...ask });
        assert.equal(whole.text, "Hello there friend", target);
        assert.equal(tokens(flat(whole.providerMetadata.openai.logprobs), 2, { bytes: false }), whole.text, target);
        const streamed = streamText({ model, ...ask });
        assert.equal(await streamed.text, "Streamed hello back", target);
        const metadata = await streamed.providerMetadata;
        assert.equal(tokens(flat(metadata.openai.logprobs), 2, { bytes: false }), "Streamed hello back", target);
      }
    });

    test("a target's extraBody wins over the client's field of the same name", async () => {
      await putScenario(P(), id("tiered"), [{ text: "Tiered" }]);
      await openai.chat.completions.create({ model: "tiered", messages: ASK, service_tier: "flex", user: "u-1" });
      const body = (await upstream(P(), id("tiered"))).log[0].body;
      assert.deepEqual([body.service_tier, body.user], ["priority", "u-1"]);
    });

    test("an Anthropic member gets @anthropic-ai/sdk's metadata, service_tier and top_k unchanged", async () => {
      await putScenario(P(), id("claude"), [{ text: "Hi from Claude" }, { text: "Streamed Claude", chunks: 2 }]);
      const fields = { metadata: { user_id: "user-9" }, service_tier: "standard_only", top_k: 5, inference_geo: "eu" };
      const message = await anthropic.messages.create({ model: "claude", max_tokens: 64, messages: ASK, ...fields });
      assert.equal(message.content[0].text, "Hi from Claude");
      let text = "";
      await anthropic.messages.stream({ model: "claude", max_tokens: 64, messages: ASK, ...fields }).on("text", (t) => (text += t)).finalMessage();
      assert.equal(text, "Streamed Claude");
      for (const entry of (await upstream(P(), id("claude"))).log) {
        for (const [name, value] of Object.entries(fields)) assert.deepEqual(entry.body[name], value, `${name} reaches the Anthropic member`);
      }
    });

    test("a mixed route: a Chat client's fields are dropped on the Anthropic member, and x-baton-warning says so", async () => {
      const down = { status: 503, message: "down" };
      await putScenario(P(), id("down"), [down, down]);
      await putScenario(P(), id("claude"), [{ text: "Claude answers" }, { text: "Claude streams", chunks: 2 }]);
      const expected = `dropped logprobs, top_logprobs, user for target "claude": it speaks anthropic_messages, which has no such fields of openai_chat`;
      const ask = { model: "mixed", messages: ASK, logprobs: true, top_logprobs: 2, user: "u-1" };
      const { data, response } = await openai.chat.completions.create(ask).withResponse();
      assert.equal(data.choices[0].message.content, "Claude answers");
      assert.equal(data.choices[0].logprobs, null, "an Anthropic member has no logprobs");
      assert.equal(response.headers.get("x-baton-target"), "claude");
      assert.equal(response.headers.get("x-baton-warning"), expected);

      const { data: stream, response: head } = await openai.chat.completions.create({ ...ask, stream: true }).withResponse();
      assert.equal(head.headers.get("x-baton-warning"), expected, "known before the stream's first byte");
      let text = "";
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? "";
        assert.equal(chunk.choices[0]?.logprobs ?? null, null);
      }
      assert.equal(text, "Claude streams");

      const sent = (await upstream(P(), id("claude"))).log.map((e) => e.body);
      for (const body of sent) for (const name of ["logprobs", "top_logprobs", "user"]) assert.equal(body[name], undefined, name);
      const tried = (await upstream(P(), id("down"))).log.map((e) => [e.body.logprobs, e.body.user]);
      assert.deepEqual(tried, [[true, "u-1"], [true, "u-1"]], "the Chat member had them");
    });
  });
}

test("in process: the dropped fields are the call's warning event (baton.warning in its trace)", async () => {
  const exporter = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer("params");
  const at = `${provider.url}/s/inprocess-parameters-claude/v1`;
  const gateway = createGateway(
    { targets: { claude: { format: "anthropic_messages", baseUrl: at, model: "up", apiKey: "sk-upstream" } }, health: false },
    { telemetry: { tracer } },
  );
  await putScenario(provider.url, "inprocess-parameters-claude", [{ text: "Traced" }]);
  const openai = new OpenAI({ apiKey: "-", maxRetries: 0, fetch: (url, init) => gateway.fetch(new Request(url, init)) });
  const { data, response } = await openai.chat.completions.create({ model: "claude", messages: ASK, service_tier: "flex" }).withResponse();
  assert.equal(data.choices[0].message.content, "Traced");
  const message = `dropped service_tier for target "claude": it speaks anthropic_messages, which has no such field of openai_chat`;
  assert.equal(response.headers.get("x-baton-warning"), message);
  const events = exporter.getFinishedSpans().flatMap((s) => s.events).filter((e) => e.name === "baton.warning");
  assert.deepEqual(events.map((e) => [e.attributes["baton.target"], e.attributes["baton.attempt"], e.attributes["baton.message"]]), [["claude", 1, message]]);
});
