// OpenTelemetry traces of calls (issue 15), the same in every runtime: each scenario runs
// calls against the scripted provider with a real @opentelemetry/sdk-trace-base tracer and an
// in-memory exporter, then checks the spans (names, kinds, parents, attributes, events, status),
// that every span the library started was ended exactly once, that no configured secret reached
// a span, and that each attempt's `traceparent` reached the provider carrying its span's ids.
//
// `env`: { Baton, BatonError, createGateway, providerUrl, runtime, otel }, where `otel` holds the
// SDK's BasicTracerProvider, InMemorySpanExporter and SimpleSpanProcessor and the API's trace and
// context (Node and Deno import them; the workerd and Chromium runners bundle them with esbuild).

import { ASK, fail, sameJson as eq, script, sleep, upstream } from "./scenarios.mjs";

export const SECRET = "sk-otel-secret-4242";
export const CLIENT_KEY = "gw-otel-client-key-777";
const TRAP = Symbol.for("llm-baton.test.trap");
const CLIENT = 2;
const SERVER = 1;
const ERROR = 2;
const UNSET = 0;

export function target(env, id, { format = "openai_chat", model }) {
  return { format, baseUrl: `${env.providerUrl}/s/${id}/v1`, model, apiKey: SECRET };
}

/**
 * A real SDK tracer behind a wrapper that counts each span's `end` calls, so "ended exactly once"
 * is checked, not assumed (the SDK ignores a second end).
 */
export function tracing(env, moreProcessors = []) {
  const exporter = new env.otel.InMemorySpanExporter();
  const provider = new env.otel.BasicTracerProvider({ spanProcessors: [new env.otel.SimpleSpanProcessor(exporter), ...moreProcessors] });
  const real = provider.getTracer("llm-baton-test");
  const started = [];
  const tracer = {
    startSpan(name, options, context) {
      const span = real.startSpan(name, options, context);
      const entry = { name, span, ends: 0 };
      started.push(entry);
      return new Proxy(span, {
        get(target, key) {
          if (key === "end") {
            return (...args) => {
              entry.ends += 1;
              return target.end(...args);
            };
          }
          const value = target[key];
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
    },
    startActiveSpan() {
      throw new Error("llm-baton must not call startActiveSpan");
    },
  };
  return { tracer, real, exporter, started, provider };
}

/** Every span the library started ended exactly once (after the microtask that ends attempt spans). */
export async function allEnded(t, what) {
  await sleep(0);
  for (const entry of t.started) {
    if (entry.ends !== 1) fail(`${what}: span "${entry.name}" was ended ${entry.ends} times, expected exactly once`);
  }
  return t.exporter.getFinishedSpans();
}

/** The spans as plain data: what an exporter would ship. */
export function plain(spans) {
  return spans.map((s) => ({
    name: s.name,
    kind: s.kind,
    traceId: s.spanContext().traceId,
    spanId: s.spanContext().spanId,
    parentSpanId: s.parentSpanContext?.spanId,
    attributes: s.attributes,
    events: s.events.map((e) => ({ name: e.name, attributes: e.attributes })),
    status: s.status,
  }));
}

function noSecret(spans, secrets, what) {
  const text = JSON.stringify(plain(spans));
  for (const secret of secrets) if (text.includes(secret)) fail(`${what}: a span holds the secret ${secret}`, plain(spans));
}

function noContent(spans, what) {
  for (const s of plain(spans)) {
    for (const key of ["gen_ai.input.messages", "gen_ai.output.messages"]) {
      if (s.attributes[key] !== undefined) fail(`${what}: span "${s.name}" records ${key} without recordContent`, s);
    }
  }
}

function one(spans, predicate, what) {
  const found = spans.filter(predicate);
  if (found.length !== 1) fail(`${what}: expected exactly one such span, found ${found.length}`, plain(spans));
  return found[0];
}

function children(spans, parent) {
  const id = parent.spanContext().spanId;
  return spans.filter((s) => s.parentSpanContext?.spanId === id).sort((a, b) => a.attributes["baton.attempt"] - b.attributes["baton.attempt"]);
}

function attrs(span, expected, what) {
  for (const [key, value] of Object.entries(expected)) eq(span.attributes[key], value, `${what}: ${key}`);
}

function traceparentOf(span) {
  const c = span.spanContext();
  return `00-${c.traceId}-${c.spanId}-0${c.traceFlags}`;
}

async function drain(iterable) {
  const items = [];
  for await (const item of iterable) items.push(item);
  return items;
}

async function rejects(env, f, kind, what) {
  try {
    await f();
  } catch (e) {
    if (!(e instanceof env.BatonError)) fail(`${what}: expected a BatonError, got ${e?.stack ?? e}`);
    if (e.kind !== kind) fail(`${what}: expected kind ${kind}, got ${e.kind}: ${e.message}`);
    return e;
  }
  fail(`${what}: expected a BatonError kind ${kind}, but the call succeeded`);
}

/**
 * A stream retried on the primary (two 503s, the first echoing the request's credentials), then
 * failed over to the backup: one call span under the caller's span, three attempt spans, the
 * retry and failover as events, and each attempt's traceparent at the provider.
 */
export async function retriedThenFailedOver(env, t = tracing(env)) {
  const { tracer, real } = t;
  const p = await script(env, "p", [{ status: 503, echoCredentials: true }, { status: 503 }]);
  const b = await script(env, "b", [{ text: "Hello there friend", usage: { inputTokens: 7 } }]);
  const baton = new env.Baton(
    {
      targets: { primary: target(env, p, { model: "model-p" }), backup: target(env, b, { format: "anthropic_messages", model: "model-b" }) },
      routes: { main: { fallback: [{ retry: "primary", attempts: 2, backoff: { initialMs: 10, jitter: "none" } }, "backup"] } },
      health: false,
    },
    { telemetry: { tracer } },
  );
  const parent = real.startSpan("caller");
  const context = env.otel.trace.setSpan(env.otel.context.active(), parent);
  const items = await drain(baton.stream("main", ASK, { context }));
  parent.end();
  eq(items.at(-1).type, "done", "the stream's last item");
  const spans = await allEnded(t, "retried then failed over");
  const what = "retried then failed over";

  const call = one(spans, (s) => s.name === "chat main", `${what}: the call span`);
  eq(call.kind, CLIENT, `${what}: the call span's kind`);
  eq(call.spanContext().traceId, parent.spanContext().traceId, `${what}: the call span's trace`);
  eq(call.parentSpanContext?.spanId, parent.spanContext().spanId, `${what}: the call span's parent`);
  attrs(call, {
    "gen_ai.operation.name": "chat",
    "gen_ai.request.model": "main",
    "gen_ai.request.stream": true,
    "gen_ai.request.max_tokens": 32,
    "gen_ai.provider.name": "anthropic",
    "gen_ai.response.model": "model-b",
    "gen_ai.response.finish_reasons": ["stop"],
    "gen_ai.usage.input_tokens": 7,
    "gen_ai.usage.output_tokens": 3,
    "baton.billed_usage.input_tokens": 7,
    "baton.billed_usage.output_tokens": 3,
    "baton.target": "backup",
    "baton.attempts": 3,
    "baton.contributors": ["backup"],
    "server.address": "127.0.0.1",
  }, `${what}: the call span`);
  if (!(call.attributes["gen_ai.response.time_to_first_chunk"] > 0)) fail(`${what}: the call span has no time to first chunk`, plain([call]));
  eq(call.status.code, UNSET, `${what}: the call span's status`);
  eq(call.events.map((e) => e.name), ["baton.retry", "baton.failover"], `${what}: the call span's events`);
  attrs({ attributes: call.events[0].attributes }, {
    "baton.target": "primary",
    "baton.retry.attempt": 1,
    "baton.retry.of": 2,
    "baton.retry.delay_ms": 10,
    "error.type": "503",
    "http.response.status_code": 503,
  }, `${what}: the retry event`);
  attrs({ attributes: call.events[1].attributes }, { "baton.from": "primary", "baton.to": "backup", "error.type": "503" }, `${what}: the failover event`);

  const attempts = children(spans, call);
  eq(attempts.map((s) => s.name), ["chat model-p", "chat model-p", "chat model-b"], `${what}: the attempt spans`);
  const failed = { "gen_ai.operation.name": "chat", "gen_ai.request.model": "model-p", "gen_ai.provider.name": "openai", "baton.target": "primary", "baton.outcome": "http", "http.response.status_code": 503, "error.type": "503", "server.address": "127.0.0.1" };
  attrs(attempts[0], { ...failed, "baton.attempt": 1, "baton.retry.delay_ms": 10 }, `${what}: attempt 1`);
  attrs(attempts[1], { ...failed, "baton.attempt": 2, "baton.retry.delay_ms": undefined }, `${what}: attempt 2`);
  attrs(attempts[2], {
    "gen_ai.request.model": "model-b",
    "gen_ai.provider.name": "anthropic",
    "baton.target": "backup",
    "baton.attempt": 3,
    "baton.outcome": "ok",
    "gen_ai.usage.input_tokens": 7,
    "gen_ai.usage.output_tokens": 3,
    "error.type": undefined,
  }, `${what}: attempt 3`);
  for (const s of attempts) {
    eq(s.kind, CLIENT, `${what}: ${s.name}'s kind`);
    if (typeof s.attributes["server.port"] !== "number") fail(`${what}: ${s.name} has no server.port`, plain([s]));
  }
  eq(attempts.map((s) => s.status.code), [ERROR, ERROR, UNSET], `${what}: the attempt spans' status`);
  if (attempts[2].attributes["gen_ai.response.time_to_first_chunk"] === undefined) fail(`${what}: the answering attempt has no time to first chunk`);
  noSecret(spans, [SECRET], what);
  noContent(spans, what);

  const [primaryLog, backupLog] = [await upstream(env, p), await upstream(env, b)];
  const sent = [...primaryLog.log, ...backupLog.log].map((r) => r.headers.traceparent);
  eq(sent, attempts.map(traceparentOf), `${what}: the traceparent each attempt sent upstream`);
  return { spans, call, attempts };
}

/** The caller cancels mid-stream: the call span and the attempt's span end, as cancelled. */
export async function cancelledCall(env) {
  const t = tracing(env);
  const what = "cancelled call";
  const p = await script(env, "cancel", [{ text: "one two three four five six", chunkDelayMs: 300 }]);
  const baton = new env.Baton({ targets: { primary: target(env, p, { model: "model-p" }) }, health: false }, { telemetry: { tracer: t.tracer } });
  const abort = new AbortController();
  await rejects(env, async () => {
    for await (const item of baton.stream("primary", ASK, { signal: abort.signal })) {
      if (item.type === "text") abort.abort();
    }
  }, "cancelled", what);
  const spans = await allEnded(t, what);
  eq(spans.length, 2, `${what}: spans`);
  const call = one(spans, (s) => s.name === "chat primary", what);
  attrs(call, { "error.type": "cancelled", "baton.attempts": 1, "gen_ai.provider.name": "openai" }, `${what}: the call span`);
  eq(call.status.code, ERROR, `${what}: the call span's status`);
  const [attempt] = children(spans, call);
  attrs(attempt, { "baton.outcome": "cancelled", "error.type": "cancelled" }, `${what}: the attempt span`);
  eq(attempt.status.code, ERROR, `${what}: the attempt span's status`);
}

/** The deadline expires before the headers: every span ends, as a timeout of the deadline. */
export async function deadlineExpiry(env) {
  const t = tracing(env);
  const what = "deadline expiry";
  const p = await script(env, "deadline", [{ headersDelayMs: 5000 }]);
  const baton = new env.Baton({ targets: { primary: target(env, p, { model: "model-p" }) }, health: false }, { telemetry: { tracer: t.tracer } });
  await rejects(env, () => baton.complete("primary", ASK, { deadlineMs: 200 }), "timeout", what);
  const spans = await allEnded(t, what);
  const call = one(spans, (s) => s.name === "chat primary", what);
  attrs(call, { "error.type": "timeout", "baton.timeout": "deadline", "gen_ai.request.stream": false }, `${what}: the call span`);
  eq(call.status.code, ERROR, `${what}: the call span's status`);
  const [attempt] = children(spans, call);
  attrs(attempt, { "baton.outcome": "timeout", "baton.timeout": "deadline", "baton.timeout.limit_ms": 200 }, `${what}: the attempt span`);
}

/** The reader leaves the loop: the call span says so, and both spans end. */
export async function abandonedStream(env) {
  const t = tracing(env);
  const what = "abandoned stream";
  const p = await script(env, "abandon", [{ text: "one two three four five six", chunkDelayMs: 200 }]);
  const baton = new env.Baton({ targets: { primary: target(env, p, { model: "model-p" }) }, health: false }, { telemetry: { tracer: t.tracer } });
  for await (const item of baton.stream("primary", ASK)) {
    if (item.type === "text") break;
  }
  const spans = await allEnded(t, what);
  eq(spans.length, 2, `${what}: spans`);
  const call = one(spans, (s) => s.name === "chat primary", what);
  attrs(call, { "error.type": "abandoned" }, `${what}: the call span`);
  eq(call.status, { code: ERROR, message: "the reader left the stream before it ended" }, `${what}: the call span's status`);
}

/** The wasm traps mid-stream (a bug): the call ends as internal, the open attempt's span too. */
export async function trappedCall(env) {
  const t = tracing(env);
  const what = "trapped call";
  const p = await script(env, "trap", [{ text: "one two three four five six", chunkDelayMs: 200 }]);
  const baton = new env.Baton({ targets: { primary: target(env, p, { model: "model-p" }) }, health: false }, { telemetry: { tracer: t.tracer } });
  await rejects(env, async () => {
    for await (const item of baton.stream("primary", ASK)) {
      if (item.type === "text") baton[TRAP]();
    }
  }, "internal", what);
  const spans = await allEnded(t, what);
  const call = one(spans, (s) => s.name === "chat primary", what);
  attrs(call, { "error.type": "internal" }, `${what}: the call span`);
  const [attempt] = children(spans, call);
  eq(attempt.status.code, ERROR, `${what}: the attempt span's status`);
  // The next call works, traced as before.
  const q = await script(env, "after-trap", [{ text: "fine" }]);
  const again = new env.Baton({ targets: { primary: target(env, q, { model: "model-p" }) }, health: false }, { telemetry: { tracer: t.tracer } });
  await again.complete("primary", ASK);
  await allEnded(t, `${what}: the next call`);
}

/** recordContent: true records the messages and the answer, in the conventions' shape. */
export async function recordedContent(env) {
  const t = tracing(env);
  const what = "recorded content";
  const p = await script(env, "content", [{ text: "Hello you" }]);
  const baton = new env.Baton({ targets: { primary: target(env, p, { model: "model-p" }) }, health: false }, { telemetry: { tracer: t.tracer, recordContent: true } });
  const image = { role: "user", content: [{ type: "text", text: "And this?" }, { type: "image", url: "https://example.com/cat.png" }, { type: "image", data: "iVBORw0KGgo=", mediaType: "image/png" }] };
  await baton.complete("primary", { messages: [...ASK.messages, { role: "assistant", content: "Hello." }, image], topP: 0.5, seed: 7, stop: "END" });
  const spans = await allEnded(t, what);
  const call = one(spans, (s) => s.name === "chat primary", what);
  eq(JSON.parse(call.attributes["gen_ai.input.messages"]), [
    { role: "user", parts: [{ type: "text", content: "Say hello." }] },
    { role: "assistant", parts: [{ type: "text", content: "Hello." }] },
    { role: "user", parts: [{ type: "text", content: "And this?" }, { type: "uri", modality: "image", uri: "https://example.com/cat.png" }, { type: "blob", modality: "image", mime_type: "image/png" }] },
  ], `${what}: gen_ai.input.messages (an image by its URL or media type, never its bytes)`);
  attrs(call, { "gen_ai.request.top_p": 0.5, "gen_ai.request.seed": 7, "gen_ai.request.stop_sequences": ["END"] }, `${what}: the request's parameters`);
  eq(JSON.parse(call.attributes["gen_ai.output.messages"]), [{ role: "assistant", parts: [{ type: "text", content: "Hello you" }], finish_reason: "stop" }], `${what}: gen_ai.output.messages`);
}

/**
 * The gateway continues its client's trace: a SERVER span whose parent is the client's
 * traceparent, attempt spans under it, the attempt's own ids sent on to the provider, and neither
 * the gateway's client key nor the provider key in any span.
 */
export async function gatewayContinuesTrace(env) {
  const t = tracing(env);
  const what = "gateway continues a client's trace";
  const p = await script(env, "gw-p", [{ status: 500 }]);
  const b = await script(env, "gw-b", [{ text: "Hello from the backup" }]);
  const gateway = env.createGateway(
    {
      targets: { primary: target(env, p, { model: "model-p" }), backup: target(env, b, { format: "anthropic_messages", model: "model-b" }) },
      routes: { main: { fallback: ["primary", "backup"] } },
      gateway: { apiKeys: [CLIENT_KEY] },
      health: false,
    },
    { telemetry: { tracer: t.tracer } },
  );
  const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
  const clientSpan = "00f067aa0ba902b7";
  const res = await gateway.fetch(
    new Request("http://gateway.test/v1/chat/completions", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${CLIENT_KEY}`,
        traceparent: `00-${traceId}-${clientSpan}-01`,
        tracestate: "vendor=abc",
      },
      body: JSON.stringify({ model: "main", stream: true, messages: [{ role: "user", content: "Say hello." }] }),
    }),
  );
  eq(res.status, 200, `${what}: the gateway's status`);
  await res.text();
  const spans = await allEnded(t, what);
  const call = one(spans, (s) => s.name === "chat main", what);
  eq(call.kind, SERVER, `${what}: the call span's kind`);
  eq(call.spanContext().traceId, traceId, `${what}: the call span's trace`);
  eq(call.parentSpanContext?.spanId, clientSpan, `${what}: the call span's parent`);
  eq(call.parentSpanContext?.isRemote, true, `${what}: the parent is remote`);
  attrs(call, { "baton.attempts": 2, "baton.target": "backup", "gen_ai.response.model": "model-b", "gen_ai.request.stream": true }, `${what}: the call span`);
  eq(call.events.map((e) => e.name), ["baton.failover"], `${what}: the call span's events`);
  const attempts = children(spans, call);
  eq(attempts.map((s) => [s.name, s.status.code]), [["chat model-p", ERROR], ["chat model-b", UNSET]], `${what}: the attempt spans`);
  noSecret(spans, [SECRET, CLIENT_KEY], what);
  noContent(spans, what);
  const sent = [...(await upstream(env, p)).log, ...(await upstream(env, b)).log];
  eq(sent.map((r) => r.headers.traceparent), attempts.map(traceparentOf), `${what}: the traceparent each attempt sent`);
  eq(sent.map((r) => r.headers.tracestate), ["vendor=abc", "vendor=abc"], `${what}: the tracestate each attempt sent`);
}

/**
 * `baton.fetch` (an SDK's requests served in process) is traced like a call: a CLIENT span under
 * the request's traceparent (an instrumented fetch sends one), its attempts under it.
 */
export async function inProcessFetchTraced(env) {
  const t = tracing(env);
  const what = "baton.fetch";
  const p = await script(env, "in-process", [{ status: 503 }]);
  const b = await script(env, "in-process-b", [{ text: "Hello in process" }]);
  const baton = new env.Baton(
    {
      targets: { primary: target(env, p, { model: "model-p" }), backup: target(env, b, { format: "anthropic_messages", model: "model-b" }) },
      routes: { main: { fallback: ["primary", "backup"] } },
      health: false,
    },
    { telemetry: { tracer: t.tracer } },
  );
  const traceId = "0af7651916cd43dd8448eb211c80319c";
  const res = await baton.fetch("https://anywhere.invalid/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json", traceparent: `00-${traceId}-b7ad6b7169203331-01` },
    body: JSON.stringify({ model: "main", messages: [{ role: "user", content: "Say hello." }] }),
  });
  eq(res.status, 200, `${what}: the status`);
  await res.text();
  const spans = await allEnded(t, what);
  const call = one(spans, (s) => s.name === "chat main", what);
  eq(call.kind, CLIENT, `${what}: the call span's kind`);
  eq([call.spanContext().traceId, call.parentSpanContext?.spanId], [traceId, "b7ad6b7169203331"], `${what}: the call span's parent`);
  attrs(call, { "baton.attempts": 2, "baton.target": "backup", "gen_ai.request.stream": false }, `${what}: the call span`);
  eq(children(spans, call).map((s) => s.name), ["chat model-p", "chat model-b"], `${what}: the attempt spans`);
  noSecret(spans, [SECRET], what);
}

/**
 * The engine's other decisions as span events: a stream cut after its start restarts on the
 * backup (`baton.resume`, then `baton.reset` as the reader is told to discard), a malformed frame
 * is skipped (`baton.warning`, `baton.skipped_frames`), and a target whose breaker opened is
 * passed over by the next call (`baton.skip`).
 */
export async function decisionsAsEvents(env) {
  const t = tracing(env);
  const what = "decisions as events";
  const chunk = (delta, finish = null) => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const p = await script(env, "decide-p", [{ text: "one two three four five six", stallAfterEvents: 2, stallMs: 100 }, { status: 503 }]);
  const b = await script(env, "decide-b", [
    { raw: { chunks: [chunk({ content: "A fresh" }), "data: {not json\n\n", chunk({ content: " answer." }), chunk({}, "stop"), "data: [DONE]\n\n"] } },
    { text: "Second call." },
  ]);
  const baton = new env.Baton(
    {
      targets: { primary: target(env, p, { model: "model-p" }), backup: target(env, b, { model: "model-b" }) },
      routes: { main: { fallback: ["primary", "backup"], afterStart: { mode: "restart" } } },
      health: { failures: 1, cooldownMs: 60000 },
    },
    { telemetry: { tracer: t.tracer } },
  );
  const items = await drain(baton.stream("main", ASK));
  eq(items.filter((i) => i.type === "reset").length, 1, `${what}: reset items`);
  let spans = await allEnded(t, what);
  const first = one(spans, (s) => s.name === "chat main", what);
  // The reset comes right before the new answer's first content, which precedes the bad frame.
  eq(first.events.map((e) => e.name), ["baton.resume", "baton.reset", "baton.warning"], `${what}: the restarted call's events`);
  attrs({ attributes: first.events[0].attributes }, { "baton.resume.mode": "restart", "baton.from": "primary", "baton.to": "backup", "baton.attempt": 2, "baton.resume.kept_chars": 0 }, `${what}: the resume event`);
  attrs({ attributes: first.events[1].attributes }, { "baton.from": "primary", "baton.to": "backup" }, `${what}: the reset event`);
  if (!(first.events[1].attributes["baton.reset.discarded_chars"] > 0)) fail(`${what}: the reset event discards nothing`, first.events[1]);
  attrs({ attributes: first.events[2].attributes }, { "baton.target": "backup", "baton.attempt": 2 }, `${what}: the warning event`);
  const [cut, resumed] = children(spans, first);
  eq(cut.status.code, ERROR, `${what}: the cut attempt's status`);
  attrs(resumed, { "baton.resumed_from.attempt": 1, "baton.resumed_from.mode": "restart", "baton.skipped_frames": 1, "baton.outcome": "ok" }, `${what}: the resuming attempt`);

  await drain(baton.stream("main", ASK));
  spans = await allEnded(t, what);
  const second = spans.filter((s) => s.name === "chat main").find((s) => s !== first);
  eq(second.events.map((e) => e.name), ["baton.skip"], `${what}: the next call's events`);
  attrs({ attributes: second.events[0].attributes }, { "baton.target": "primary" }, `${what}: the skip event`);
  eq(children(spans, second).map((s) => s.name), ["chat model-b"], `${what}: the next call's attempts`);
}

/** A tracer that throws breaks nothing: the call answers, and no header goes out. */
export async function throwingTracer(env) {
  const what = "a throwing tracer";
  const p = await script(env, "throwing", [{ text: "still fine" }]);
  const tracer = {
    startSpan() {
      throw new Error("tracer exploded");
    },
  };
  const errors = [];
  const original = console.error;
  console.error = (...args) => errors.push(args.map(String).join(" "));
  try {
    const baton = new env.Baton({ targets: { primary: target(env, p, { model: "model-p" }) }, health: false }, { telemetry: { tracer } });
    const done = await baton.complete("primary", ASK);
    eq(done.text, "still fine", `${what}: the answer`);
    await baton.complete("primary", ASK);
  } finally {
    console.error = original;
  }
  eq(errors.length, 1, `${what}: console.error calls (once per Baton)`);
  const log = await upstream(env, p);
  eq(log.log.map((r) => r.headers.traceparent), [undefined, undefined], `${what}: traceparent sent`);
}

/**
 * The retried-then-failed-over stream, its spans also shipped through the OTLP/HTTP JSON exporter
 * (`env.otel.OTLPTraceExporter`) to `url` as each ends; resolves once every export was sent.
 */
export async function shipOtlp(env, url) {
  const t = tracing(env, [new env.otel.SimpleSpanProcessor(new env.otel.OTLPTraceExporter({ url }))]);
  await retriedThenFailedOver(env, t);
  await t.provider.forceFlush();
}

/** The scenarios every runtime runs. */
/**
 * A hedged stream: the primary shows nothing for 2 s, the backup starts after 100 ms and wins.
 * Two attempt spans side by side, the loser's ended as "lost" (no error), and a baton.hedge event.
 */
export async function hedgedCall(env) {
  const t = tracing(env);
  const what = "hedged call";
  const p = await script(env, "hedge-p", [{ text: "too late", firstChunkDelayMs: 2000 }]);
  const b = await script(env, "hedge-b", [{ text: "from backup" }]);
  const baton = new env.Baton(
    {
      targets: { primary: target(env, p, { model: "model-p" }), backup: target(env, b, { model: "model-b" }) },
      routes: { main: { fallback: ["primary", "backup"], hedge: { afterMs: 100 } } },
      health: false,
    },
    { telemetry: { tracer: t.tracer } },
  );
  const items = await drain(baton.stream("main", ASK));
  eq(items.at(-1).target, "backup", `${what}: the answering target`);
  const spans = await allEnded(t, what);
  const call = one(spans, (s) => s.name === "chat main", `${what}: the call span`);
  attrs(call, { "baton.target": "backup", "baton.attempts": 2 }, `${what}: the call span`);
  eq(call.events.map((e) => e.name), ["baton.hedge"], `${what}: the call span's events`);
  attrs({ attributes: call.events[0].attributes }, { "baton.from": "primary", "baton.to": "backup", "baton.attempt": 2, "baton.hedge.threshold": "fixed" }, `${what}: the hedge event`);
  if (!(call.events[0].attributes["baton.hedge.after_ms"] >= 100)) fail(`${what}: the hedge's afterMs`, plain([call]));
  const [lost, won] = children(spans, call);
  attrs(lost, { "baton.target": "primary", "baton.attempt": 1, "baton.outcome": "lost", "error.type": undefined }, `${what}: the lost attempt`);
  attrs(won, { "baton.target": "backup", "baton.attempt": 2, "baton.outcome": "ok" }, `${what}: the winning attempt`);
  eq(lost.status.code, UNSET, `${what}: the lost attempt's status`);
  await upstream(env, p);
  await upstream(env, b);
}

export const telemetryScenarios = {
  "a hedged stream: two attempt spans side by side, the loser lost, a hedge event": hedgedCall,
  "a retried-then-failed-over stream: one call span, three attempt spans, events, traceparent upstream": (env) => retriedThenFailedOver(env),
  "a cancelled call ends every span": cancelledCall,
  "a deadline expiry ends every span": deadlineExpiry,
  "a stream its reader leaves ends every span": abandonedStream,
  "a trap ends every span, and the next call is traced": trappedCall,
  "recordContent records the messages and the answer": recordedContent,
  "the gateway continues a client's trace to the provider": gatewayContinuesTrace,
  "a tracer that throws breaks no call": throwingTracer,
  "baton.fetch is traced like a call": inProcessFetchTraced,
  "resume, reset, warning and skip are span events": decisionsAsEvents,
};
