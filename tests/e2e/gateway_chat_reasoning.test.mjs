// Chat Completions reasoning and the models endpoints, read by clients we did not write: the
// official `openai` and `@anthropic-ai/sdk` clients (retries off) and the AI SDK's
// OpenAI-compatible provider (`@ai-sdk/openai-compatible`, which reads `reasoning_content` or
// `reasoning` into reasoning parts and sends `reasoning_content` back), against the gateway in
// workerd, Deno and Node, in front of the scripted provider's Chat reasoning models in the styles
// of DeepSeek, Kimi K2, GLM (`reasoning_content`; each refuses a tool turn sent back without it)
// and vLLM/OpenRouter/gpt-oss (`reasoning`).
// gateway.test.mjs imports this file; it also runs on its own.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, isStepCount, streamText, tool } from "ai";
import { z } from "zod";
import { putScenario, startProvider, upstream } from "./provider.mjs";
import { startDenoGateway, startNodeGateway, startWorkerdGateway } from "./gateway_hosts.mjs";

const KEY = "gw-chat-reasoning-key";
const HOSTS = { workerd: startWorkerdGateway, deno: startDenoGateway, node: startNodeGateway };
const STYLES = { deepseek: "deepseek-reasoner", kimi: "kimi-k2-thinking", glm: "glm-4.6", reasoning: "gpt-oss-120b" };
/** The reasoning the scripted provider's Chat model of `model` writes (tests/provider/src/wire/reasoning.rs). */
const thought = (model) => `The user wants this; a tool may help. (${model} thinking)`;
const TOOLS = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
const QUESTION = { role: "user", content: "Weather in Paris and Lyon?" };
const call = (city) => ({ toolCall: { name: "get_weather", arguments: JSON.stringify({ city }) } });
globalThis.AI_SDK_LOG_WARNINGS = false;

function config(providerUrl, host) {
  const at = (name) => `${providerUrl}/s/${host}-chatr-${name}/v1`;
  const chat = (name, model) => ({ format: "openai_chat", baseUrl: at(name), model, apiKey: "sk-upstream" });
  const targets = Object.fromEntries(Object.entries(STYLES).map(([style, model]) => [style, chat(style, model)]));
  return {
    targets: { ...targets, vllm_backup: chat("vllm_backup", "qwen3-vllm") },
    // DeepSeek first; once it is down, a vLLM model that did not issue its reasoning.
    routes: { handoff: { fallback: ["deepseek", "vllm_backup"] } },
    deadlineMs: 5000,
    gateway: { apiKeys: [KEY] },
    health: false,
  };
}

/** The reasoning a Chat stream's deltas carry under each name. */
async function readReasoning(stream) {
  const read = { reasoning: "", reasoning_content: "", content: "", calls: [] };
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta ?? {};
    read.reasoning += delta.reasoning ?? "";
    read.reasoning_content += delta.reasoning_content ?? "";
    read.content += delta.content ?? "";
    for (const c of delta.tool_calls ?? []) {
      const call = (read.calls[c.index] ??= { id: c.id, type: "function", function: { name: c.function.name, arguments: "" } });
      call.function.arguments += c.function.arguments ?? "";
    }
  }
  return read;
}

/** Runs `fn`, which must throw; returns the error. */
async function throws(fn) {
  try {
    await fn();
  } catch (e) {
    return e;
  }
  assert.fail("expected an error, the call succeeded");
}

let provider;
before(async () => {
  provider = await startProvider();
});
after(() => provider?.stop());

for (const [host, start] of Object.entries(HOSTS)) {
  describe(`gateway in ${host}: Chat reasoning and the models endpoints`, { concurrency: 1 }, () => {
    let gw;
    let openai;
    let anthropic;
    const id = (name) => `${host}-chatr-${name}`;
    const P = () => provider.url;

    before(async () => {
      gw = await start(config(provider.url, host));
      openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
      anthropic = new Anthropic({ baseURL: gw.url, apiKey: KEY, maxRetries: 0 });
    });
    after(() => gw?.stop());

    test("models.list() and models.retrieve() of both SDKs; an unknown id is a 404 naming the routes", async () => {
      const routes = ["handoff", "deepseek", "glm", "kimi", "reasoning", "vllm_backup"];
      const listed = [];
      for await (const m of openai.models.list()) listed.push(m);
      assert.deepEqual(listed.map((m) => m.id), routes);
      const glm = await openai.models.retrieve("glm");
      assert.deepEqual(Object.keys(glm).sort(), ["created", "id", "object", "owned_by"]);
      assert.equal(glm.id, "glm");
      assert.equal(glm.object, "model");
      assert.ok(Number.isInteger(glm.created) && Math.abs(glm.created - Date.now() / 1000) < 60, `${glm.created}`);

      const page = await anthropic.models.list();
      assert.deepEqual(page.data.map((m) => m.id), routes);
      assert.equal(page.has_more, false);
      assert.deepEqual([page.first_id, page.last_id], [routes[0], routes.at(-1)]);
      const all = [];
      for await (const m of anthropic.models.list()) all.push(m.id);
      assert.deepEqual(all, routes, "the SDK's auto-pagination stops at has_more: false");
      const kimi = await anthropic.models.retrieve("kimi");
      assert.deepEqual({ ...kimi, created_at: undefined }, { type: "model", id: "kimi", display_name: "kimi", created_at: undefined });
      assert.match(kimi.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/, "RFC 3339");
      assert.ok(Math.abs(Date.parse(kimi.created_at) - Date.now()) < 60_000, kimi.created_at);

      const named = /^model "gpt-4o" is not a route of this gateway \(known: handoff, deepseek, glm, kimi, reasoning, vllm_backup\)$/;
      const missing = await throws(() => openai.models.retrieve("gpt-4o"));
      assert.ok(missing instanceof OpenAI.NotFoundError, `${missing}`);
      assert.match(missing.error.message, named);
      assert.equal(missing.code, "model_not_found");
      const absent = await throws(() => anthropic.models.retrieve("gpt-4o"));
      assert.ok(absent instanceof Anthropic.NotFoundError, `${absent}`);
      assert.equal(absent.error.type, "error");
      assert.equal(absent.error.error.type, "not_found_error");
      assert.match(absent.error.error.message, named);
      // An id with a slash, as the SDKs encode it.
      const slashed = await throws(() => openai.models.retrieve("openai/gpt-4o"));
      assert.match(slashed.error.message, /^model "openai\/gpt-4o" is not a route/);
    });

    test("reasoning reaches the client as both reasoning and reasoning_content, whole and streamed, from either upstream convention", async () => {
      for (const [style, model] of Object.entries(STYLES)) {
        await putScenario(P(), id(style), [{ chatReasoning: style, text: "Sunny." }]);
        const whole = await openai.chat.completions.create({ model: style, messages: [QUESTION] });
        const message = whole.choices[0].message;
        assert.deepEqual([message.reasoning, message.reasoning_content, message.content], [thought(model), thought(model), "Sunny."], style);
        const streamed = await readReasoning(await openai.chat.completions.create({ model: style, messages: [QUESTION], stream: true }));
        assert.deepEqual([streamed.reasoning, streamed.reasoning_content, streamed.content], [thought(model), thought(model), "Sunny."], style);
        const r = await upstream(P(), id(style));
        assert.equal(r.requests, 2);
      }
    });

    test("a tool loop against DeepSeek-, Kimi- and GLM-style upstreams that refuse a tool turn without its reasoning_content", async () => {
      for (const style of ["deepseek", "kimi", "glm"]) {
        for (const stream of [false, true]) {
          const what = `${style}${stream ? ", streamed" : ""}`;
          await putScenario(P(), id(style), [{ chatReasoning: style, ...call("Paris") }, { chatReasoning: style, ...call("Lyon") }, { chatReasoning: style, text: "Sunny in both." }]);
          const history = [QUESTION];
          let final;
          for (let turn = 1; turn <= 3; turn++) {
            const ask = { model: style, messages: history, tools: TOOLS, reasoning_effort: "low" };
            let message;
            if (stream) {
              const read = await readReasoning(await openai.chat.completions.create({ ...ask, stream: true }).catch((e) => assert.fail(`${what}, turn ${turn}: ${e.message}`)));
              // As a client keeps it: the text, the calls, and the reasoning under the name it reads.
              message = { role: "assistant", content: read.content || null, reasoning_content: read.reasoning_content };
              if (read.calls.length) message.tool_calls = read.calls;
            } else {
              message = (await openai.chat.completions.create(ask).catch((e) => assert.fail(`${what}, turn ${turn}: ${e.message}`))).choices[0].message;
            }
            history.push(message);
            for (const c of message.tool_calls ?? []) history.push({ role: "tool", tool_call_id: c.id, content: "sunny" });
            final = message;
          }
          assert.equal(final.content, "Sunny in both.", what);
          const r = await upstream(P(), id(style));
          assert.equal(r.requests, 3, what);
          const model = STYLES[style];
          for (const entry of r.log.slice(1)) {
            const turns = entry.body.messages.filter((m) => m.tool_calls);
            assert.deepEqual(turns.map((m) => m.reasoning_content), turns.map(() => thought(model)), `${what}: ${JSON.stringify(entry.body)}`);
            assert.ok(turns.every((m) => m.tool_calls.every((c) => c.id.startsWith("call_"))), "the upstream sees its own ids");
          }
        }
      }
    });

    test("the Anthropic SDK's tool loop against the DeepSeek-style upstream: its reasoning rides as an unsigned thinking block", async () => {
      await putScenario(P(), id("deepseek"), [{ chatReasoning: "deepseek", ...call("Paris") }, { chatReasoning: "deepseek", ...call("Lyon") }, { chatReasoning: "deepseek", text: "Sunny in both." }]);
      const tools = [{ name: "get_weather", input_schema: TOOLS[0].function.parameters }];
      const messages = [QUESTION];
      let final;
      for (let turn = 1; turn <= 3; turn++) {
        final = await anthropic.messages.stream({ model: "deepseek", max_tokens: 4096, messages, tools }).finalMessage();
        messages.push({ role: "assistant", content: final.content });
        const calls = final.content.filter((b) => b.type === "tool_use");
        if (calls.length) messages.push({ role: "user", content: calls.map((c) => ({ type: "tool_result", tool_use_id: c.id, content: "sunny" })) });
      }
      assert.equal(final.content.find((b) => b.type === "text").text, "Sunny in both.");
      // Streamed, the SDK keeps a thinking block without a signature_delta as it started: unsigned.
      assert.deepEqual([final.content[0].type, final.content[0].thinking], ["thinking", thought(STYLES.deepseek)]);
      const r = await upstream(P(), id("deepseek"));
      const sent = r.log[2].body.messages.filter((m) => m.tool_calls).map((m) => m.reasoning_content);
      assert.deepEqual(sent, [thought(STYLES.deepseek), thought(STYLES.deepseek)]);
    });

    test("the control: a tool turn whose ids name no issuer reaches DeepSeek without reasoning_content, and its 400 reaches the client", async () => {
      await putScenario(P(), id("deepseek"), [{ chatReasoning: "deepseek", text: "unreached" }]);
      const history = [
        QUESTION,
        { role: "assistant", content: null, reasoning_content: thought(STYLES.deepseek), tool_calls: [{ id: "call_x", type: "function", function: { name: "get_weather", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "call_x", content: "sunny" },
      ];
      const e = await throws(() => openai.chat.completions.create({ model: "deepseek", messages: history, tools: TOOLS }));
      assert.equal(e.status, 400);
      assert.match(e.error.message, /^Missing `reasoning_content` field in the assistant message at message index 1\./);
    });

    test("reasoning goes back to its issuer alone: after a failover the vLLM member gets none of DeepSeek's", async () => {
      await putScenario(P(), id("deepseek"), [{ chatReasoning: "deepseek", ...call("Paris") }, { status: 503, message: "deepseek overloaded" }]);
      await putScenario(P(), id("vllm_backup"), [{ chatReasoning: "reasoning", text: "Sunny." }]);
      const first = (await openai.chat.completions.create({ model: "handoff", messages: [QUESTION], tools: TOOLS })).choices[0].message;
      const history = [QUESTION, first, { role: "tool", tool_call_id: first.tool_calls[0].id, content: "sunny" }];
      const second = (await openai.chat.completions.create({ model: "handoff", messages: history, tools: TOOLS })).choices[0].message;
      assert.equal(second.content, "Sunny.");
      assert.equal(second.reasoning, thought("qwen3-vllm"));
      const deepseek = await upstream(P(), id("deepseek"));
      assert.equal(deepseek.log[1].body.messages[1].reasoning_content, thought(STYLES.deepseek), "its issuer gets it back");
      const backup = await upstream(P(), id("vllm_backup"));
      assert.ok(!JSON.stringify(backup.log[0].body).includes(thought(STYLES.deepseek)), JSON.stringify(backup.log[0].body));
    });

    test("the AI SDK's OpenAI-compatible provider reads the reasoning, whole and streamed, and its tool loop passes DeepSeek's check", async () => {
      const compatible = createOpenAICompatible({ name: "baton", baseURL: `${gw.url}/v1`, apiKey: KEY });
      const model = STYLES.deepseek;
      for (const run of ["generateText", "streamText"]) {
        await putScenario(P(), id("deepseek"), [{ chatReasoning: "deepseek", ...call("Paris") }, { chatReasoning: "deepseek", ...call("Lyon") }, { chatReasoning: "deepseek", text: "Sunny in both." }]);
        const cities = [];
        const tools = {
          get_weather: tool({
            inputSchema: z.object({ city: z.string() }),
            execute: async ({ city }) => (cities.push(city), { city, sky: "sunny" }),
          }),
        };
        const options = { model: compatible.chatModel("deepseek"), prompt: QUESTION.content, tools, stopWhen: isStepCount(3), maxRetries: 0 };
        let result;
        if (run === "generateText") {
          result = await generateText(options);
        } else {
          const streamed = streamText({ ...options, onError: () => {} });
          await streamed.consumeStream();
          result = { steps: await streamed.steps, text: await streamed.text };
        }
        assert.equal(result.text, "Sunny in both.", run);
        assert.deepEqual(cities, ["Paris", "Lyon"], run);
        for (const step of result.steps) {
          const reasoning = step.content.filter((p) => p.type === "reasoning").map((p) => p.text).join("");
          assert.equal(reasoning, thought(model), `${run}: each step's reasoning part`);
        }
        const r = await upstream(P(), id("deepseek"));
        assert.equal(r.requests, 3, run);
        const sent = r.log[2].body.messages.filter((m) => m.tool_calls).map((m) => m.reasoning_content);
        assert.deepEqual(sent, [thought(model), thought(model)], `${run}: every tool turn's reasoning_content went back`);
      }
    });
  });
}
