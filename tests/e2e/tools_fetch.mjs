// The official SDKs (openai 7, @anthropic-ai/sdk) over `baton.fetch`, in process, in Node, workerd
// and Chromium (tools.test.mjs). Every SDK is built with llm-baton's fetch and a baseURL that does
// not exist: nothing leaves the process but llm-baton's own requests to the scripted provider,
// whose log tells what each target received and how many requests it got. The routes fail over
// from a primary that answers 503.
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { fail, requests, sameJson as eq, script, sleep } from "./scenarios.mjs";
import { checkResent, LOOP, MODELS, QUESTION, TOOLS } from "./agents.mjs";

const KEY = "sk-test-fetch-not-a-secret";
// Nothing listens here: a request that left the process would fail to connect.
const NOWHERE = "http://llm-baton.invalid";

/** `fn()` must throw; returns the error. */
async function thrown(fn, what) {
  try {
    await fn();
  } catch (e) {
    return e;
  }
  fail(`${what}: expected an error, the call succeeded`);
}

const target = (env, id, format = "openai_chat") => ({ format, baseUrl: `${env.providerUrl}/s/${id}/v1`, model: "scripted-model", apiKey: KEY });

/**
 * A Baton whose route "chat" fails over from `primary` (503 on every request) to `backup`
 * (scripted with `backupSteps`); `options` are the Baton's. Returns the ids and the Baton.
 */
async function setup(env, label, backupSteps, { options, backupFormat, config = {} } = {}) {
  const p = await script(env, `${label}-p`, [{ status: 503, message: "primary overloaded" }]);
  const b = await script(env, `${label}-b`, backupSteps);
  const baton = new env.llm.Baton({
    targets: { primary: target(env, p), backup: target(env, b, backupFormat) },
    routes: { chat: { fallback: ["primary", "backup"] } },
    ...config,
  }, options);
  return { p, b, baton };
}

// The SDKs refuse to run in a browser unless told that the key may be seen there: here the key
// is "-" and llm-baton holds the provider's.
const openai = (baton, options = {}) => new OpenAI({ apiKey: "-", baseURL: `${NOWHERE}/v1`, fetch: baton.fetch, maxRetries: 0, dangerouslyAllowBrowser: true, ...options });
const anthropic = (baton, options = {}) => new Anthropic({ apiKey: "-", baseURL: NOWHERE, fetch: baton.fetch, maxRetries: 0, dangerouslyAllowBrowser: true, ...options });

/** `target`'s breaker, as `baton.health()` shows it. */
const breaker = (baton, target) => baton.health().targets.find((t) => t.target === target);

/** A health store that grants everything and keeps what it is told. */
function recordingStore() {
  const legs = [];
  return {
    legs,
    admit: (targets) => ({ targets: targets.map((t) => ({ target: t, state: "closed", probe: false })) }),
    report: (events) => {
      for (const ev of events) legs.push(`${ev.leg.target} ${ev.leg.outcome}${ev.leg.status ? ` ${ev.leg.status}` : ""}`);
    },
  };
}

const TEXT = "The backup answers through baton.fetch.";
// A 1x1 PNG.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/**
 * One turn of each official SDK's own tool loop, whole or streamed: it sends `history` and pushes
 * the answer as the SDK gives it, and the tool results; returns the turn's text and call count.
 */
const SDK_TURNS = {
  async "openai chat.completions"(baton, history, stream) {
    const client = openai(baton);
    const body = { model: "agent", messages: history, reasoning_effort: "low", tools: TOOLS.map((t) => ({ type: "function", function: t })) };
    const done = stream ? await client.chat.completions.stream(body).finalChatCompletion() : await client.chat.completions.create(body);
    const message = done.choices[0].message;
    history.push(message);
    for (const call of message.tool_calls ?? []) history.push({ role: "tool", tool_call_id: call.id, content: "sunny" });
    return { text: message.content ?? "", calls: message.tool_calls?.length ?? 0 };
  },
  async "anthropic messages"(baton, history, stream) {
    const client = anthropic(baton);
    const body = { model: "agent", max_tokens: 4096, messages: history, thinking: { type: "enabled", budget_tokens: 2048 }, tools: TOOLS.map((t) => ({ name: t.name, input_schema: t.parameters })) };
    const done = stream ? await client.messages.stream(body).finalMessage() : await client.messages.create(body);
    history.push({ role: "assistant", content: done.content });
    const calls = done.content.filter((b) => b.type === "tool_use");
    if (calls.length) history.push({ role: "user", content: calls.map((c) => ({ type: "tool_result", tool_use_id: c.id, content: "sunny" })) });
    return { text: done.content.filter((b) => b.type === "text").map((b) => b.text).join(""), calls: calls.length };
  },
  async "openai responses"(baton, history, stream) {
    const client = openai(baton);
    const body = { model: "agent", input: history, reasoning: { effort: "low" }, include: ["reasoning.encrypted_content"], tools: TOOLS.map((t) => ({ type: "function", ...t })) };
    const done = stream ? await client.responses.stream(body).finalResponse() : await client.responses.create(body);
    history.push(...done.output);
    const calls = done.output.filter((i) => i.type === "function_call");
    for (const c of calls) history.push({ type: "function_call_output", call_id: c.call_id, output: "sunny" });
    return { text: done.output_text, calls: calls.length };
  },
};

export const scenarios = {
  async "each official SDK's tool loop via baton.fetch keeps Gemini 3's, Claude's and Responses' reasoning state, whole and streamed"(env) {
    for (const [sdk, turn] of Object.entries(SDK_TURNS)) {
      for (const format of ["gemini", "anthropic_messages", "openai_responses"]) {
        for (const stream of [false, true]) {
          const what = `${sdk} to ${format}${stream ? ", streamed" : ""}`;
          const id = await script(env, `sdk-agent-${sdk}-${format}-${stream}`.replace(/ /g, "-"), LOOP);
          const baton = new env.llm.Baton({
            targets: { t: { ...target(env, id, format), model: MODELS[format] } },
            routes: { agent: { fallback: ["t"] } },
          });
          const history = [sdk === "openai responses" ? { role: "user", content: QUESTION.content } : QUESTION];
          const turns = [];
          for (let i = 0; i < 3; i++) turns.push(await turn(baton, history, stream));
          eq(turns.map((t) => t.calls), [1, 1, 0], `${what}: the calls of each turn`);
          eq(turns[2].text, "Sunny in both.", `${what}: the final answer`);
          checkResent(format, (await requests(env, id, 3, what)).log, what);
        }
      }
    }
  },


  async "openai chat.completions.stream via baton.fetch: the primary's 503 fails over, legs reach the health store"(env) {
    const store = recordingStore();
    // Chunks 20 ms apart arrive in reads of their own; text that arrives in one read is one delta.
    const { p, b, baton } = await setup(env, "chat-stream", [{ text: TEXT, chunks: 4, chunkDelayMs: 20 }], { options: { healthStore: store } });
    const client = openai(baton);
    const deltas = [];
    const stream = client.chat.completions.stream({ model: "chat", messages: [{ role: "user", content: "Say hello." }], stream_options: { include_usage: true } });
    stream.on("content", (delta) => deltas.push(delta));
    const done = await stream.finalChatCompletion();
    eq(deltas.join(""), TEXT, "content deltas");
    if (deltas.length < 2) fail(`expected the text in several deltas, got ${deltas.length}`, deltas);
    eq(done.choices[0].message.content, TEXT, "finalChatCompletion text");
    eq(done.choices[0].finish_reason, "stop", "finish_reason");
    eq(done.model, "scripted-model", "model");
    await requests(env, p, 1, "primary");
    const up = await requests(env, b, 1, "backup");
    eq(up.log[0].stream, true, "backup request streamed");
    eq(store.legs, ["primary http 503", "backup ok"], "leg events the Baton's health store received");
    // The Baton is told the SDK's legs too: its breaker counted the primary's failure.
    const primary = breaker(baton, "primary");
    eq(primary?.consecutiveFailures, 1, "baton.health(): the primary's consecutive failures");
  },

  async "baton.fetch shares the Baton's breakers both ways: a primary opened by either stays skipped by both"(env) {
    const health = { failures: 1, cooldownMs: 60000 };
    const ask = { messages: [{ role: "user", content: "Say hello." }] };

    // The Baton's own call opens the primary's breaker: the SDK's call skips it.
    const first = await setup(env, "share-baton", [{ text: TEXT }], { config: { health } });
    eq((await first.baton.complete("chat", ask)).text, TEXT, "the Baton's call");
    eq(breaker(first.baton, "primary")?.state, "open", "the primary's breaker after the Baton's call");
    const viaSdk = await openai(first.baton).chat.completions.create({ model: "chat", messages: ask.messages });
    eq(viaSdk.choices[0].message.content, TEXT, "text through baton.fetch");
    eq((await first.baton.complete("chat", ask)).text, TEXT, "a later call of the Baton's");
    await requests(env, first.p, 1, "primary, opened by the Baton");
    await requests(env, first.b, 3, "backup");

    // The SDK's call opens it: the Baton's own calls skip it, and its health shows why.
    const second = await setup(env, "share-fetch", [{ text: TEXT }], { config: { health } });
    const opened = await openai(second.baton).chat.completions.create({ model: "chat", messages: ask.messages });
    eq(opened.choices[0].message.content, TEXT, "the SDK's call, failed over");
    const after = breaker(second.baton, "primary");
    eq(after?.state, "open", "the primary's breaker in baton.health() after the SDK's call");
    eq(after?.lastFailure?.status, 503, "its last failure");
    if (!(after.reopensInMs > 50000)) fail(`the cooldown did not start: reopens in ${after.reopensInMs} ms`);
    eq((await second.baton.complete("chat", ask)).text, TEXT, "the Baton's call after the SDK's");
    eq((await openai(second.baton).chat.completions.create({ model: "chat", messages: ask.messages })).choices[0].message.content, TEXT, "a second SDK call");
    await requests(env, second.p, 1, "primary, opened by the SDK's call");
    await requests(env, second.b, 3, "backup");
  },

  async "baton.fetch asks the Baton about its request's route only: a probe the Baton grants goes to a call that can take it"(env) {
    const x = await script(env, "probe-x", [{ status: 503, message: "x is down" }, { text: "x is back" }]);
    const y = await script(env, "probe-y", [{ text: "y answers" }]);
    const baton = new env.llm.Baton({ targets: { x: target(env, x), y: target(env, y) }, health: { failures: 1, cooldownMs: 300 } });
    const ask = { messages: [{ role: "user", content: "Say hello." }] };
    await thrown(() => baton.complete("x", ask), "x's first call");
    eq(breaker(baton, "x")?.state, "open", "x's breaker after its 503");
    await sleep(400);
    // x's cooldown is over: the next call to x is its probe. An SDK call to y comes first; had it
    // been granted x's probe, which it cannot take, the Baton's call to x would find x leased.
    const viaSdk = await openai(baton).chat.completions.create({ model: "y", messages: ask.messages });
    eq(viaSdk.choices[0].message.content, "y answers", "the SDK's call to y");
    eq((await baton.complete("x", ask)).text, "x is back", "the Baton's probe of x");
    eq(breaker(baton, "x")?.state, "closed", "x's breaker after the probe");
    await requests(env, x, 2, "x");
    await requests(env, y, 1, "y");
  },

  async "openai chat.completions.create, models.list and both SDKs' models.retrieve via baton.fetch, any baseURL, unbound"(env) {
    const { p, b, baton } = await setup(env, "chat-whole", [{ text: TEXT }]);
    const { fetch } = baton;
    const client = new OpenAI({ apiKey: "-", baseURL: "https://api.example.com/openai", fetch, maxRetries: 0, dangerouslyAllowBrowser: true });
    const done = await client.chat.completions.create({ model: "chat", messages: [{ role: "user", content: "Say hello." }] });
    eq(done.choices[0].message.content, TEXT, "text");
    const models = [];
    for await (const model of client.models.list()) models.push(model.id);
    eq(models.sort(), ["backup", "chat", "primary"], "models.list (every name a call may use)");
    const one = await client.models.retrieve("chat");
    eq([one.id, one.object], ["chat", "model"], "models.retrieve");
    const claude = await anthropic(baton).models.retrieve("chat");
    eq([claude.type, claude.id, claude.display_name], ["model", "chat", "chat"], "Anthropic's models.retrieve");
    const unknown = await client.models.retrieve("gpt-4o").then(() => null, (e) => e);
    eq([unknown?.status, unknown?.code], [404, "model_not_found"], "an unknown model");
    await requests(env, p, 1, "primary");
    await requests(env, b, 1, "backup");
  },

  async "anthropic messages.stream via baton.fetch: the primary's 503 fails over"(env) {
    const { p, b, baton } = await setup(env, "messages-stream", [{ text: TEXT, chunks: 4 }]);
    const client = anthropic(baton);
    const deltas = [];
    const stream = client.messages.stream({ model: "chat", max_tokens: 64, messages: [{ role: "user", content: "Say hello." }] });
    stream.on("text", (delta) => deltas.push(delta));
    const done = await stream.finalMessage();
    eq(deltas.join(""), TEXT, "text deltas");
    eq(done.content.map((block) => block.text).join(""), TEXT, "finalMessage text");
    eq(done.stop_reason, "end_turn", "stop_reason");
    await requests(env, p, 1, "primary");
    await requests(env, b, 1, "backup");
  },

  async "anthropic messages.stream with an image via baton.fetch: the backup receives the image in its own format"(env) {
    const { p, b, baton } = await setup(env, "image", [{ text: TEXT, chunks: 4 }]);
    const client = anthropic(baton);
    const messages = [{
      role: "user",
      content: [
        { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
        { type: "text", text: "What is in this picture?" },
      ],
    }];
    let text = "";
    const stream = client.messages.stream({ model: "chat", max_tokens: 64, messages });
    stream.on("text", (delta) => (text += delta));
    const done = await stream.finalMessage();
    eq(text, TEXT, "text deltas");
    eq(done.stop_reason, "end_turn", "stop_reason");
    await requests(env, p, 1, "primary");
    const up = await requests(env, b, 1, "backup");
    // The backup speaks OpenAI Chat: the image is an image_url part holding a data: URL.
    const parts = up.log[0].body.messages[0].content;
    eq(parts.map((part) => `${part.type}: ${part.image_url?.url ?? part.text}`), [`image_url: data:image/png;base64,${PNG}`, "text: What is in this picture?"], "the backup's user message");
  },

  async "openai responses.stream via baton.fetch: the primary's 503 fails over, one response to the SDK"(env) {
    const { p, b, baton } = await setup(env, "responses-stream", [{ text: TEXT, chunks: 4, chunkDelayMs: 20 }]);
    const client = openai(baton);
    let text = "";
    const types = [];
    const stream = client.responses.stream({ model: "chat", input: [{ role: "user", content: "Say hello." }], instructions: "Be brief." });
    stream.on("response.output_text.delta", (e) => (text += e.delta));
    stream.on("event", (e) => types.push(e.type));
    const done = await stream.finalResponse();
    eq(text, TEXT, "output_text deltas");
    eq(done.output_text, TEXT, "finalResponse().output_text");
    eq(done.status, "completed", "finalResponse().status");
    eq(types[0], "response.created", "first event");
    eq(types.at(-1), "response.completed", "last event");
    if (types.filter((t) => t === "response.output_text.delta").length < 2) fail("expected the text in several deltas", types);
    await requests(env, p, 1, "primary");
    const up = await requests(env, b, 1, "backup");
    const sent = up.log[0].body.messages;
    eq(sent.map((m) => m.role), ["system", "user"], "the backup's messages (instructions as the system message)");
  },

  async "a gateway with a health store asks it about the targets of its request's route only"(env) {
    const x = await script(env, "ask-x", [{ text: "x answers" }]);
    const y = await script(env, "ask-y", [{ text: "y answers" }]);
    const asked = [];
    const store = {
      admit: (targets) => {
        asked.push([...targets]);
        return { targets: targets.map((t) => ({ target: t, state: "closed", probe: false })) };
      },
      report: () => {},
    };
    const config = { targets: { x: target(env, x), y: target(env, y) }, routes: { both: { fallback: ["x", "y"] } }, gateway: { apiKeys: ["gw-key"] } };
    const gateway = env.llm.createGateway(config, { healthStore: store, healthCacheMs: 0 });
    const handler = (url, init) => gateway.fetch(new Request(url, init));
    const client = new OpenAI({ apiKey: "gw-key", baseURL: `${NOWHERE}/v1`, fetch: handler, maxRetries: 0, dangerouslyAllowBrowser: true });
    const ask = (model) => client.chat.completions.create({ model, messages: [{ role: "user", content: "Say hello." }] });
    eq((await ask("y")).choices[0].message.content, "y answers", "model y");
    eq((await ask("both")).choices[0].message.content, "x answers", "model both");
    const unknown = await thrown(() => ask("nowhere"), "an unknown model");
    eq(unknown.status, 404, "an unknown model's status");
    eq(asked, [["y"], ["x", "y"]], "the targets the store was asked about, per request (none for an unknown model)");
  },

  async "openai chat.completions.stream and responses.stream through the gateway's handler (createGateway, keyed) in this runtime"(env) {
    const p = await script(env, "gateway-p", [{ status: 503, message: "primary overloaded" }]);
    const b = await script(env, "gateway-b", [{ text: TEXT, chunks: 4 }, { text: TEXT, chunks: 4 }]);
    const gateway = env.llm.createGateway({
      targets: { primary: target(env, p), backup: target(env, b, "anthropic_messages") },
      routes: { chat: { fallback: ["primary", "backup"] } },
      health: false,
      gateway: { apiKeys: ["gw-key"] },
    });
    // The handler takes a Request, as a Worker's fetch does; the SDK calls fetch(url, init).
    const handler = (url, init) => gateway.fetch(new Request(url, init));
    const client = new OpenAI({ apiKey: "gw-key", baseURL: `${NOWHERE}/v1`, fetch: handler, maxRetries: 0, dangerouslyAllowBrowser: true });
    let chat = "";
    const chatStream = client.chat.completions.stream({ model: "chat", messages: [{ role: "user", content: "Say hello." }] });
    chatStream.on("content", (delta) => (chat += delta));
    eq((await chatStream.finalChatCompletion()).choices[0].message.content, TEXT, "chat.completions.stream's final text");
    eq(chat, TEXT, "chat.completions.stream's deltas");
    let output = "";
    const responseStream = client.responses.stream({ model: "chat", input: "Say hello." });
    responseStream.on("response.output_text.delta", (e) => (output += e.delta));
    const response = await responseStream.finalResponse();
    eq([output, response.output_text, response.status], [TEXT, TEXT, "completed"], "responses.stream's deltas, output_text and status");
    // The primary failed once per call; the Anthropic backup answered both.
    await requests(env, p, 2, "primary");
    const up = await requests(env, b, 2, "backup");
    eq(up.log.map((r) => r.path.endsWith("/messages")), [true, true], "the backup was asked in its own format, /v1/messages");
    const refused = await thrown(() => new OpenAI({ apiKey: "wrong", baseURL: `${NOWHERE}/v1`, fetch: handler, maxRetries: 0, dangerouslyAllowBrowser: true })
      .chat.completions.create({ model: "chat", messages: [{ role: "user", content: "hi" }] }), "a wrong gateway key");
    eq(refused.status, 401, "a wrong gateway key's status");
  },

  async "a failed route is the SDK's APIError with the gateway's status and message, never retried by the SDK"(env) {
    const p = await script(env, "failed-p", [{ status: 503, message: "primary overloaded" }]);
    const b = await script(env, "failed-b", [{ status: 500, message: "backup broken" }]);
    const baton = new env.llm.Baton({
      targets: { primary: target(env, p), backup: target(env, b) },
      routes: { chat: { fallback: ["primary", "backup"] } },
    });
    // Default maxRetries (2): only x-should-retry: false keeps the SDKs from running the route again.
    const oa = new OpenAI({ apiKey: "-", baseURL: `${NOWHERE}/v1`, fetch: baton.fetch, dangerouslyAllowBrowser: true });
    const e = await thrown(() => oa.chat.completions.create({ model: "chat", messages: [{ role: "user", content: "hi" }] }), "openai");
    if (!(e instanceof OpenAI.APIError)) fail(`openai: expected an OpenAI.APIError, got ${e?.constructor?.name}: ${e?.message}`);
    eq(e.status, 500, "openai: error.status (the last target's)");
    if (!e.message.includes("backup broken")) fail(`openai: the message should carry the provider's: ${e.message}`);
    eq(e.headers.get("x-should-retry"), "false", "openai: x-should-retry");
    eq(e.headers.get("x-baton-target"), "backup", "openai: x-baton-target");
    const an = new Anthropic({ apiKey: "-", baseURL: NOWHERE, fetch: baton.fetch, dangerouslyAllowBrowser: true });
    const a = await thrown(() => an.messages.create({ model: "chat", max_tokens: 16, messages: [{ role: "user", content: "hi" }] }), "anthropic");
    if (!(a instanceof Anthropic.InternalServerError)) fail(`anthropic: expected an Anthropic.InternalServerError, got ${a?.constructor?.name}: ${a?.message}`);
    eq(a.status, 500, "anthropic: error.status");
    eq(a.error?.error?.type, "api_error", "anthropic: error body type");
    // One request per target per SDK call: llm-baton's failover, no SDK retry on top.
    await requests(env, p, 2, "primary");
    await requests(env, b, 2, "backup");

    const unknown = await thrown(() => oa.chat.completions.create({ model: "nope", messages: [{ role: "user", content: "hi" }] }), "unknown model");
    if (!(unknown instanceof OpenAI.NotFoundError)) fail(`unknown model: expected OpenAI.NotFoundError, got ${unknown?.constructor?.name}`);
    if (!unknown.message.includes("chat")) fail(`unknown model: the message should list the routes: ${unknown.message}`);
    const path = await thrown(() => oa.embeddings.create({ model: "chat", input: "hi" }), "embeddings");
    eq(path.status, 404, "an endpoint baton.fetch does not serve: status");
    if (!path.message.includes("/embeddings")) fail(`embeddings: the message should name the path: ${path.message}`);
  },

  async "an aborted call closes the upstream: the user's signal, before and after the stream's start"(env) {
    const { b, baton } = await setup(env, "abort", [{ text: TEXT, headersDelayMs: 5000 }]);
    const client = openai(baton);
    const ask = { model: "chat", messages: [{ role: "user", content: "hi" }] };
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 200);
    const t0 = performance.now();
    const e = await thrown(() => client.chat.completions.create(ask, { signal: stop.signal }), "abort before headers");
    if (!(e instanceof OpenAI.APIUserAbortError)) fail(`expected OpenAI.APIUserAbortError, got ${e?.constructor?.name}: ${e?.message}`);
    const ms = performance.now() - t0;
    if (ms > 1500) fail(`the abort took ${ms.toFixed(0)} ms to settle`);
    const r = await requests(env, b, 1, "backup (aborted while waiting for headers)");
    eq(r.clientClosed, 1, "backup: connections closed by llm-baton");

    // After the stream's start, the abort errors the body as a network fetch's would; the SDK's
    // stream then ends quietly (its own rule for an abort), short of the answer.
    const full = "one two three four five six seven eight";
    const s = await setup(env, "abort-stream", [{ text: full, chunks: 8, chunkDelayMs: 300 }]);
    const streaming = openai(s.baton);
    const cancel = new AbortController();
    let seen = "";
    const stream = await streaming.chat.completions.create({ ...ask, stream: true }, { signal: cancel.signal });
    for await (const chunk of stream) {
      seen += chunk.choices[0]?.delta?.content ?? "";
      if (seen.length > 0) cancel.abort();
    }
    if (!(seen.length > 0 && seen.length < full.length)) fail(`stream: expected part of the answer before the abort, got ${JSON.stringify(seen)}`);
    const rs = await requests(env, s.b, 1, "backup (aborted mid-stream)");
    eq(rs.clientClosed, 1, "stream: backup connections closed by llm-baton");
  },

  // openai sends x-stainless-timeout for a per-request timeout, @anthropic-ai/sdk always (its
  // client's timeout). 2.5 s is sent as "2" (whole seconds): llm-baton's deadline is 2 s.
  async "the SDK's timeout caps the route's deadline: llm-baton's 504 arrives before the SDK gives up"(env) {
    const { b, baton } = await setup(env, "sdk-timeout", [{ text: TEXT, headersDelayMs: 5000 }]);
    const sdks = {
      openai: () => openai(baton).chat.completions.create({ model: "chat", messages: [{ role: "user", content: "hi" }] }, { timeout: 2500 }),
      anthropic: () => anthropic(baton, { timeout: 2500 }).messages.create({ model: "chat", max_tokens: 16, messages: [{ role: "user", content: "hi" }] }),
    };
    for (const [sdk, call] of Object.entries(sdks)) {
      const t0 = performance.now();
      const e = await thrown(call, sdk);
      const ms = performance.now() - t0;
      if (e?.status !== 504) fail(`${sdk}: expected an APIError 504, got ${e?.constructor?.name} ${e?.status}: ${e?.message}`);
      if (!(ms >= 1950 && ms < 2450)) fail(`${sdk}: the 504 came after ${ms.toFixed(0)} ms, expected ~2000 ms`);
      if (!e.message.includes("within 2000 ms")) fail(`${sdk}: the message should name the 2000 ms deadline: ${e.message}`);
    }
    const r = await requests(env, b, 2, "backup");
    eq(r.clientClosed, 2, "backup: connections closed at the deadline");
    // A timeout of a fraction of a millisecond is a deadline that tiny (never a malformed header, a 400).
    const tiny = await baton.fetch(`${NOWHERE}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-stainless-timeout": "0.0004" },
      body: JSON.stringify({ model: "chat", messages: [{ role: "user", content: "hi" }] }),
    });
    eq([tiny.status, (await tiny.json()).error?.code], [504, "upstream_timeout"], "x-stainless-timeout 0.0004: a 1 ms deadline");
  },
};
