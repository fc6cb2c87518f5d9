// Hostile-provider, hostile-config and hostile-callback scenarios (issue 10), the same in every
// runtime (Node, Deno, workerd, Chromium), in the style of scenarios.mjs:
// `async (env) => void`, throwing an Error that says what was expected and what was seen.
//
// env: { Baton, BatonError, createGateway, providerUrl, runtime } and, where the runtime has
// them, `inspect(value)` (Node's util.inspect, depth 10) and `watchProcess()` (Node: starts
// counting 'unhandledRejection' / 'uncaughtException', returns a function that stops and
// returns what was seen). Scenarios use only fetch, AbortController, timers and the llm-baton API.
//
// The provider (tests/provider) plays each hostile case: `raw` bodies sent verbatim (any SSE frame
// or JSON), `echoCredentials` errors that repeat the request's key the way a proxy does,
// `padToBytes` bodies past the caps, and absurd Retry-After headers.

import { script, upstream, sleep, fail, safeJson, eq, checkError, rejects, errorDetail, target, ASK, drain, textOf } from "./scenarios.mjs";

const TRAP = Symbol.for("llm-baton.test.trap");
/**
 * A scenario that has not finished by then fails: a call that never settles (a trap swallowed by
 * a runtime's uncaughtException handler, say) must fail its test, not hang the whole run.
 */
const SCENARIO_LIMIT_MS = Number(globalThis.process?.env?.BATON_HOSTILE_LIMIT_MS ?? 60_000);
const FORMATS = ["openai_chat", "anthropic_messages", "openai_responses", "gemini"];
/** The cap on a whole answer is documented as about 16 MiB; this is well past it. */
const HUGE_ANSWER_BYTES = 40 << 20;
/**
 * The huge answer arrives in ten 4 MiB pieces over this time. Sent at once, loopback's receive
 * buffer (up to 32 MiB here) and the runtime's own could take all of it before the client stops
 * reading, and the provider would count a completed answer the client never read.
 */
const HUGE_ANSWER_DRIP_MS = 3000;

function randomTag() {
  return Math.random().toString(36).slice(2, 12);
}

/** An OpenAI Chat stream chunk (`data: …\n\n`) with this delta and finish reason. */
function chatChunk(delta, finishReason = null, extra = {}) {
  const chunk = { id: "chatcmpl-hostile", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/** A raw stream step: the chunks, then `[DONE]`. */
function rawStream(chunks, extra = {}) {
  return { raw: { chunks: [...chunks, "data: [DONE]\n\n"] }, ...extra };
}

/** A raw whole-JSON step (for complete(), which asks for a non-streamed answer). */
function rawJson(value, status = 200) {
  return { raw: { status, contentType: "application/json", chunks: [typeof value === "string" ? value : JSON.stringify(value)] } };
}

/** A whole OpenAI chat completion with one message. */
function chatCompletion(message, finishReason, usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 }) {
  return { id: "chatcmpl-hostile", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, message, finish_reason: finishReason }], usage };
}

/** Drains a stream, expecting it to fail (at construction, at the first next(), or later). */
async function streamError(env, make, expect, what) {
  const events = [];
  const [e, ms] = await rejects(env, async () => {
    for await (const ev of make()) events.push(ev);
    return events;
  }, expect, what);
  return [e, ms, events];
}

/**
 * Runs every case, then fails once listing each case that failed, so one run shows them all.
 * `cases` is a list of `[label, async () => void]`.
 */
async function everyCase(cases) {
  const problems = [];
  for (const [label, run] of cases) {
    try {
      await run();
    } catch (e) {
      const message = String(e?.message ?? e);
      problems.push(`- ${message.startsWith(label) ? message : `${label}: ${message}`}`);
    }
  }
  if (problems.length) fail(`${problems.length} of ${cases.length} case(s) failed:\n${problems.join("\n")}`);
}

/** The test-only trap hook of a Baton or gateway object. */
/** Arms the trap of `object`'s wasm, or of the one its `fetch` runs on when `which` is "fetch". */
function armTrap(object, what, which) {
  const hook = object?.[TRAP];
  if (typeof hook !== "function") fail(`${what}[Symbol.for("llm-baton.test.trap")] is ${typeof hook}, expected the test-only function that arms a wasm trap`);
  hook.call(object, which);
}

function checkInternal(env, e, what) {
  checkError(env, e, { kind: "internal" }, what);
  if (!/bug/i.test(e.message) || !/report/i.test(e.message)) fail(`${what}: the message should say this is a bug and ask to report it, got ${JSON.stringify(e.message)}`);
}

/** Records what console.* prints until `stop()` (and still prints it). */
function captureConsole() {
  const lines = [];
  const methods = ["log", "info", "warn", "error", "debug"];
  const saved = methods.map((m) => console[m]);
  methods.forEach((m, i) => {
    console[m] = (...args) => {
      lines.push(args.map((a) => (typeof a === "string" ? a : safeStringify(a) + String(a))).join(" "));
      return saved[i].apply(console, args);
    };
  });
  return { lines, stop: () => methods.forEach((m, i) => (console[m] = saved[i])) };
}

/** Every string view of an error that leaves the library, named. */
function errorSurfaces(env, e) {
  const surfaces = {
    "err.message": e?.message,
    "String(err)": String(e),
    "err.stack": e?.stack,
    "JSON.stringify(err)": safeStringify(e),
    "JSON.stringify(err.legs)": safeStringify(e?.legs),
  };
  if (e?.cause !== undefined) surfaces["err.cause"] = safeStringify(e.cause) + String(e.cause);
  if (env.inspect) surfaces["util.inspect(err)"] = env.inspect(e);
  return surfaces;
}

function safeStringify(v) {
  try {
    return JSON.stringify(v) ?? "";
  } catch (x) {
    return `(JSON.stringify threw: ${x})`;
  }
}

/** Fails if any secret (or its distinctive tail) appears in any surface. */
function noSecrets(surfaces, secrets, what) {
  for (const [name, text] of Object.entries(surfaces)) {
    if (typeof text !== "string") continue;
    for (const secret of secrets) {
      for (const needle of [secret, secret.slice(-10)]) {
        if (text.includes(needle)) fail(`${what}: a secret appears in ${name}: ${JSON.stringify(text.slice(0, 600))}`);
      }
    }
  }
}

/** A target whose key and secret header are random per call, so a leak cannot be a coincidence. */
function secretTarget(env, id, format, timeouts) {
  const tag = randomTag();
  const apiKey = `sk-hostile-${tag}`;
  const header = `xs-hostile-header-${tag}`;
  const t = { ...target(env, id, { format, timeouts }), apiKey, headers: { "x-gateway-api-key": header } };
  return { target: t, secrets: [apiKey, header] };
}

// ---------------------------------------------------------------------------------------------

const cases = {
  // Finding 1: the driver resized a Vec to the provider's index (trap at 4294967295, 1.37 GB at 10^7).
  async "hostile tool index 4294967295 and 10000000: settles at once, at dense position 0"(env) {
    for (const index of [4294967295, 10000000]) {
      for (const mode of ["stream", "complete"]) {
        const call = { index, id: "call_hostile", type: "function", function: { name: "get_weather", arguments: "" } };
        const step = mode === "stream"
          ? rawStream([
            chatChunk({ role: "assistant", content: null, tool_calls: [call] }),
            chatChunk({ tool_calls: [{ index, function: { arguments: '{"city":' } }] }),
            chatChunk({ tool_calls: [{ index, function: { arguments: '"Paris"}' } }] }),
            chatChunk({}, "tool_calls"),
          ])
          : rawJson(chatCompletion({ role: "assistant", content: null, tool_calls: [{ ...call, function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] }, "tool_calls"));
        const id = await script(env, `tool-index-${index}-${mode}`, [step, { text: "still alive" }]);
        const baton = new env.Baton({ targets: { t: target(env, id) } });
        const what = `${mode}, tool index ${index}`;
        const t0 = performance.now();
        let out;
        let calls = [];
        if (mode === "stream") {
          const events = await drain(baton.stream("t", ASK, { deadlineMs: 5000 }), t0);
          calls = events.filter((e) => e.type === "tool_call");
          out = events.at(-1);
          eq(out?.type, "done", `${what}: last event`);
        } else {
          out = await baton.complete("t", ASK, { deadlineMs: 5000 });
        }
        const ms = performance.now() - t0;
        if (ms > 2000) fail(`${what}: settled after ${ms.toFixed(0)} ms, expected < 2000 ms`);
        for (const c of calls) eq(c.index, 0, `${what}: tool_call event index`);
        if (mode === "stream" && calls.length === 0) fail(`${what}: no tool_call events`);
        eq(out.toolCalls?.length, 1, `${what}: toolCalls.length`);
        eq(out.toolCalls[0].id, "call_hostile", `${what}: toolCalls[0].id`);
        eq(out.toolCalls[0].name, "get_weather", `${what}: toolCalls[0].name`);
        eq(out.toolCalls[0].arguments, '{"city":"Paris"}', `${what}: toolCalls[0].arguments`);
        const after = await baton.complete("t", ASK, { deadlineMs: 5000 });
        eq(after.text, "still alive", `${what}: the next call on the same Baton`);
      }
    }
  },

  async "hostile tool indexes 1, 0, 1: two calls at dense positions 0 and 1, first seen first, no phantom"(env) {
    const id = await script(env, "tool-index-sparse", [rawStream([
      chatChunk({ role: "assistant", tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "second_seen_first", arguments: "" } }] }),
      chatChunk({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "first_index", arguments: "" } }] }),
      chatChunk({ tool_calls: [{ index: 1, function: { arguments: '{"b":1}' } }] }),
      chatChunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":2}' } }] }),
      chatChunk({}, "tool_calls"),
    ])]);
    const baton = new env.Baton({ targets: { t: target(env, id) } });
    const events = await drain(baton.stream("t", ASK, { deadlineMs: 5000 }), performance.now());
    const calls = events.filter((e) => e.type === "tool_call");
    for (const c of calls) if (c.index !== 0 && c.index !== 1) fail(`tool_call event at index ${c.index}, expected 0 or 1`, calls);
    eq(calls.find((c) => c.name)?.name, "second_seen_first", "the first named tool_call event");
    eq(calls.find((c) => c.name === "second_seen_first")?.index, 0, "position of the call seen first");
    eq(calls.find((c) => c.name === "first_index")?.index, 1, "position of the call seen second");
    const done = events.at(-1);
    eq(done.type, "done", "last event");
    eq(done.toolCalls?.length, 2, "done.toolCalls.length (no empty phantom call)");
    eq(`${done.toolCalls[0].id} ${done.toolCalls[0].name} ${done.toolCalls[0].arguments}`, 'call_b second_seen_first {"b":1}', "toolCalls[0]");
    eq(`${done.toolCalls[1].id} ${done.toolCalls[1].name} ${done.toolCalls[1].arguments}`, 'call_a first_index {"a":2}', "toolCalls[1]");
  },

  // Finding 2: a provider or proxy that echoes the request puts the key in every error surface.
  async "hostile key echo: the key and secret header appear in no error, leg or event, in every format"(env) {
    const cases = [
      ["complete, 500 error body (retried once)", "complete", { status: 500, message: "upstream broke", echoCredentials: true }],
      ["stream, 400 error body", "stream", { status: 400, message: "bad request", echoCredentials: true }],
      ["stream, in-stream error", "stream", { text: "never shown", echoCredentials: true, streamError: { afterEvents: 0, message: "stream broke" } }],
    ];
    await everyCase(FORMATS.flatMap((format) => cases.map(([label, mode, step]) => [`${format}, ${label}`, async () => {
        const what = `${format}, ${label}`;
        const id = await script(env, `echo-${format}-${mode}`, [step]);
        const { target: t, secrets } = secretTarget(env, id, format);
        const baton = new env.Baton({
          targets: { t },
          routes: { main: { retry: "t", attempts: 2, backoff: { initialMs: 10, jitter: "none" } } },
        });
        const seen = [];
        const options = { deadlineMs: 5000, onEvent: (ev) => seen.push(ev) };
        let e;
        let streamed = [];
        const logged = captureConsole();
        try {
          if (mode === "complete") [e] = await rejects(env, () => baton.complete("main", ASK, options), { kind: "http", status: 500 }, what);
          else [e, , streamed] = await streamError(env, () => baton.stream("main", ASK, options), {}, what);
        } finally {
          logged.stop();
        }
        const r = await upstream(env, id, {});
        const saw = r.log?.[0]?.auth;
        if (!saw) fail(`${what}: the provider saw no credential, so nothing could be echoed`, r.log?.[0]);
        const surfaces = errorSurfaces(env, e);
        seen.forEach((ev, i) => (surfaces[`onEvent #${i} (${ev.type})`] = safeStringify(ev)));
        streamed.forEach((ev, i) => (surfaces[`stream event #${i} (${ev.type})`] = safeStringify(ev)));
        surfaces["console output during the call"] = logged.lines.join("\n");
        noSecrets(surfaces, secrets, what);
        if (!e.message.includes("<redacted>")) fail(`${what}: err.message should show <redacted> where the provider echoed the key, got ${JSON.stringify(e.message)}`, errorDetail(e));
    }])));
  },

  // Findings 3 and 5: values that JSON would turn into null, and headers that fail at call time.
  async "hostile config: non-finite numbers, bad header names and values, bad baseUrls are config errors naming the path"(env) {
    const base = (over = {}) => ({ format: "openai_chat", baseUrl: `${env.providerUrl}/v1`, model: "m", ...over });
    const cases = [
      ["deadlineMs NaN", { targets: { p: base() }, deadlineMs: NaN }, "deadlineMs"],
      ["deadlineMs Infinity", { targets: { p: base() }, deadlineMs: Infinity }, "deadlineMs"],
      ["deadlineMs 1e309", { targets: { p: base() }, deadlineMs: 1e309 }, "deadlineMs"],
      ["timeouts.totalMs NaN", { targets: { p: base({ timeouts: { totalMs: NaN } }) } }, "targets.p.timeouts.totalMs"],
      ["maxRetryAfterMs NaN", { targets: { p: base() }, routes: { r: { retry: "p", attempts: 2, maxRetryAfterMs: NaN } } }, "routes.r.maxRetryAfterMs"],
      ["apiKey NaN", { targets: { p: base({ apiKey: NaN }) } }, "targets.p.apiKey"],
      ["apiKey with a newline", { targets: { p: base({ apiKey: "sk-hostile-newline\nrest-of-key" }) } }, "targets.p.apiKey", ["sk-hostile-newline", "rest-of-key"]],
      ["header value with CRLF", { targets: { p: base({ headers: { "x-h": "v1\r\ninjected: crlf-value" } }) } }, "targets.p.headers.x-h", ["injected: crlf-value"]],
      ["header value with NUL", { targets: { p: base({ headers: { "x-h": "nul-value\u0000tail" } }) } }, "targets.p.headers.x-h", ["nul-value"]],
      ["header value with €", { targets: { p: base({ headers: { "x-h": "euro-value-€-tail" } }) } }, "targets.p.headers.x-h", ["euro-value"]],
      ...["content-length", "transfer-encoding", "connection", "host", "expect"].map((name) => [
        `header ${name}`, { targets: { p: base({ headers: { [name]: name === "content-length" ? "5" : "x" } }) } }, `targets.p.headers.${name}`,
      ]),
      ["baseUrl http://", { targets: { p: base({ baseUrl: "http://" }) } }, "targets.p.baseUrl"],
      ...["token", "access_token", "api-key"].map((param) => [
        `baseUrl with ?${param}=`, { targets: { p: base({ baseUrl: `${env.providerUrl}/v1?${param}=secret-in-url` }) } }, "targets.p.baseUrl", ["secret-in-url"],
      ]),
    ];
    const checks = cases.map(([what, config, path, hidden = []]) => [what, async () => {
      const [e] = await rejects(env, () => new env.Baton(config), { kind: "config", path }, what);
      for (const value of hidden) if (e.message.includes(value)) fail(`${what}: the message repeats the refused value: ${JSON.stringify(e.message)}`);
    }]);
    // Upper-case schemes are schemes: accepted, and HTTP:// works.
    checks.push(["baseUrl HTTPS:// (upper case) is accepted", async () => {
      new env.Baton({ targets: { p: base({ baseUrl: `HTTPS://127.0.0.1:${new URL(env.providerUrl).port}/v1` }) } });
    }]);
    checks.push(["a call through HTTP:// (upper case)", async () => {
      const id = await script(env, "upper-scheme", [{ text: "upper case works" }]);
      const upper = env.providerUrl.replace(/^http:/, "HTTP:");
      const baton = new env.Baton({ targets: { p: base({ baseUrl: `${upper}/s/${id}/v1` }) } });
      eq((await baton.complete("p", ASK, { deadlineMs: 5000 })).text, "upper case works", "answer text");
    }]);
    await everyCase(checks);
  },

  async "hostile request and options: NaN, Symbol, function, throwing getter, options [] are config errors naming the path"(env) {
    const id = await script(env, "bad-request", [{ text: "must not be asked" }]);
    const baton = new env.Baton({ targets: { t: target(env, id) } });
    const user = (content) => ({ messages: [{ role: "user", content }], maxTokens: 16 });
    const throwing = {};
    Object.defineProperty(throwing, "deadlineMs", { enumerable: true, get() { throw new Error("getter exploded"); } });
    const cases = [
      ["temperature NaN", { ...ASK, temperature: NaN }, undefined, "request.temperature"],
      ["maxTokens NaN", { ...ASK, maxTokens: NaN }, undefined, "request.maxTokens"],
      ["content NaN", user(NaN), undefined, "request.messages[0].content"],
      ["temperature Symbol", { ...ASK, temperature: Symbol("t") }, undefined, "request.temperature"],
      ["content Symbol", user(Symbol("c")), undefined, "request.messages[0].content"],
      ["maxTokens function", { ...ASK, maxTokens: () => 16 }, undefined, "request.maxTokens"],
      ["content function", user(() => "hi"), undefined, "request.messages[0].content"],
      ["options.deadlineMs NaN", ASK, { deadlineMs: NaN }, "options.deadlineMs"],
      ["options.deadlineMs Infinity", ASK, { deadlineMs: Infinity }, "options.deadlineMs"],
      ["options.deadlineMs 1e309", ASK, { deadlineMs: 1e309 }, "options.deadlineMs"],
      ["options with a throwing getter", ASK, throwing, "options.deadlineMs"],
      ["options []", ASK, [], "options"],
    ];
    await everyCase(cases.flatMap(([what, request, options, path]) => [
      [`complete, ${what}`, () => rejects(env, () => baton.complete("t", request, options), { kind: "config", path }, "complete")],
      // stream() may throw at once or at the first next(); either way kind and path hold.
      [`stream, ${what}`, () => streamError(env, () => baton.stream("t", request, options), { kind: "config", path }, "stream")],
    ]).concat([["no request reached the provider", () => upstream(env, id, { requests: 0 })]]));
  },

  // Finding 4: an async onEvent that rejects produced one unhandled rejection per event.
  async "hostile onEvent that rejects or throws: the call succeeds, nothing unhandled"(env) {
    const callbacks = {
      "async, rejecting": async () => {
        throw new Error("onEvent rejected on purpose");
      },
      "sync, throwing": () => {
        throw new Error("onEvent threw on purpose");
      },
    };
    for (const [label, onEvent] of Object.entries(callbacks)) {
      for (const mode of ["complete", "stream"]) {
        const what = `${mode}, onEvent ${label}`;
        const id = await script(env, `onevent-${mode}`, [{ status: 503, message: "once" }, { text: "despite the callback" }]);
        const baton = new env.Baton({
          targets: { t: target(env, id) },
          routes: { main: { retry: "t", attempts: 3, backoff: { initialMs: 10, jitter: "none" } } },
        });
        const stop = env.watchProcess?.();
        let text;
        try {
          if (mode === "complete") text = (await baton.complete("main", ASK, { deadlineMs: 5000, onEvent })).text;
          else text = textOf(await drain(baton.stream("main", ASK, { deadlineMs: 5000, onEvent }), performance.now()));
        } finally {
          // Unhandled rejections are reported after the microtask queue drains.
          if (stop) await sleep(50);
          const unhandled = stop?.() ?? [];
          if (unhandled.length) fail(`${what}: ${unhandled.length} unhandled rejection(s)/exception(s) during the call: ${unhandled.slice(0, 3).join(" | ")}`);
        }
        eq(text, "despite the callback", `${what}: text`);
      }
    }
  },

  // Finding 6: Retry-After beyond what JS represents, and a date that overflowed.
  async "hostile Retry-After 99999999999999999999 and year 99999999999999: http 429 at once, finite retryAfterMs"(env) {
    await everyCase(["99999999999999999999", "Fri, 31 Dec 99999999999999 23:59:59 GMT"].map((value) => [`Retry-After: ${value}`, async () => {
      const id = await script(env, "ra-huge", [{ status: 429, message: "slow down", headers: { "retry-after": value } }, { text: "never" }]);
      const baton = new env.Baton({ targets: { t: target(env, id) }, routes: { main: { retry: "t", attempts: 3 } } });
      const what = `Retry-After: ${value}`;
      const [e, ms] = await rejects(env, () => baton.complete("main", ASK, { deadlineMs: 5000 }), { kind: "http", status: 429 }, what);
      if (ms > 1000) fail(`${what}: took ${ms.toFixed(0)} ms, expected < 1000 ms`);
      const ra = e.retryAfterMs;
      if (!(typeof ra === "number" && Number.isFinite(ra) && ra >= 0 && ra <= 2147483647)) fail(`${what}: retryAfterMs should be a finite number <= 2147483647, got ${ra}`, errorDetail(e));
      await upstream(env, id, { requests: 1 });
    }]));
  },

  async "hostile usage counts 1.5, -3, 1e400 after the text: the answer still succeeds"(env) {
    await everyCase(["1.5", "-3", "1e400"].map((count) => [`usage ${count}`, async () => {
      const usage = `{"prompt_tokens":${count},"completion_tokens":${count},"total_tokens":${count}}`;
      const stream = rawStream([
        chatChunk({ role: "assistant", content: "" }),
        chatChunk({ content: "Hello" }),
        chatChunk({ content: " world" }),
        chatChunk({}, "stop"),
        `data: {"id":"chatcmpl-hostile","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":${usage}}\n\n`,
      ]);
      const whole = rawJson(JSON.stringify(chatCompletion({ role: "assistant", content: "Hello world" }, "stop", "USAGE")).replace('"USAGE"', usage));
      const id = await script(env, "usage-odd", [stream, whole]);
      const baton = new env.Baton({ targets: { t: target(env, id) } });
      const events = await drain(baton.stream("t", ASK, { deadlineMs: 5000 }), performance.now());
      eq(textOf(events), "Hello world", `stream, usage ${count}: text`);
      eq(events.at(-1).type, "done", `stream, usage ${count}: last event`);
      eq((await baton.complete("t", ASK, { deadlineMs: 5000 })).text, "Hello world", `complete, usage ${count}: text`);
    }]));
  },

  // Finding 6: no cap on a whole answer or an error body.
  async "hostile 40 MiB answer: protocol error naming the cap, body not read to the end"(env) {
    const id = await script(env, "huge-answer", [{ text: "huge", padToBytes: HUGE_ANSWER_BYTES, dripMs: HUGE_ANSWER_DRIP_MS }]);
    const baton = new env.Baton({ targets: { t: target(env, id) } });
    const [e, ms] = await rejects(env, () => baton.complete("t", ASK, { deadlineMs: 20000 }), { kind: "protocol" }, "40 MiB answer");
    if (!/\d[\d,_ ]*-?\s*(bytes?|KiB|MiB|KB|MB)\b/i.test(e.message)) fail(`the message should name the cap (a size), got ${JSON.stringify(e.message.slice(0, 300))}`);
    if (ms > 5000) fail(`took ${ms.toFixed(0)} ms to refuse a 40 MiB answer`);
    await upstream(env, id, { requests: 1, clientClosed: 1 });
  },

  async "hostile 5 MiB error body: http 500 at once with a short message"(env) {
    const id = await script(env, "huge-error", [{ status: 500, message: "big trouble", padToBytes: 5 << 20 }]);
    const baton = new env.Baton({ targets: { t: target(env, id) } });
    const [e, ms] = await rejects(env, () => baton.complete("t", ASK, { deadlineMs: 10000 }), { kind: "http", status: 500 }, "5 MiB error body");
    if (ms > 2000) fail(`took ${ms.toFixed(0)} ms, expected < 2000 ms`);
    if (e.message.length >= 1024) fail(`the message is ${e.message.length} characters long, expected < 1024`);
    await upstream(env, id, { requests: 1 });
  },

  async "hostile 599 error: the message says HTTP 599 once"(env) {
    const bodies = {
      "a plain-text body": { raw: { status: 599, contentType: "text/plain", chunks: ["boom"] } },
      "a JSON error body": { status: 599, message: "boom" },
    };
    for (const [label, step] of Object.entries(bodies)) {
      const id = await script(env, "599", [step]);
      const baton = new env.Baton({ targets: { t: target(env, id) } });
      const [e] = await rejects(env, () => baton.complete("t", ASK, { deadlineMs: 5000 }), { kind: "http", status: 599 }, `599 with ${label}`);
      if (e.message.includes("HTTP 599: HTTP 599")) fail(`599 with ${label}: the status prefix is doubled: ${JSON.stringify(e.message)}`);
      if (!e.message.includes("boom")) fail(`599 with ${label}: the provider's words are missing: ${JSON.stringify(e.message)}`);
    }
  },

  async "hostile lone surrogate in content is accepted"(env) {
    const id = await script(env, "surrogate", [{ text: "fine" }]);
    const baton = new env.Baton({ targets: { t: target(env, id) } });
    const out = await baton.complete("t", { messages: [{ role: "user", content: "half an emoji: \ud83d" }], maxTokens: 16 }, { deadlineMs: 5000 });
    eq(out.text, "fine", "answer text");
    await upstream(env, id, { requests: 1 });
  },

  // Point 3: a trap settles the affected call with kind "internal", and the object still works.
  async "trap during a stream: kind internal, upstream closed, the same Baton works again"(env) {
    const id = await script(env, "trap-stream", [{ text: "one two three four five six seven eight nine ten", chunkDelayMs: 200 }, { text: "recovered" }]);
    const baton = new env.Baton({ targets: { t: target(env, id) } });
    const it = baton.stream("t", ASK, { deadlineMs: 10000 })[Symbol.asyncIterator]();
    const first = await it.next();
    eq(first.value?.type, "text", "first event");
    armTrap(baton, "baton");
    const [e] = await rejects(env, async () => {
      for (;;) if ((await it.next()).done) return "the stream ended normally";
    }, {}, "stream after the trap");
    checkInternal(env, e, "stream after the trap");
    await upstream(env, id, { requests: 1, clientClosed: 1 });
    eq((await baton.complete("t", ASK, { deadlineMs: 5000 })).text, "recovered", "the next call on the same Baton");
  },

  async "trap during complete(): kind internal, upstream closed, the same Baton works again"(env) {
    const id = await script(env, "trap-complete", [{ text: "a slow whole answer", dripMs: 2000 }, { text: "recovered" }]);
    const baton = new env.Baton({ targets: { t: target(env, id) } });
    const pending = baton.complete("t", ASK, { deadlineMs: 10000 });
    await sleep(300);
    armTrap(baton, "baton");
    const [e, ms] = await rejects(env, () => pending, {}, "complete after the trap");
    checkInternal(env, e, "complete after the trap");
    if (ms > 1500) fail(`settled ${ms.toFixed(0)} ms after the trap was armed; the next body piece arrives within ~200 ms`);
    await upstream(env, id, { requests: 1, clientClosed: 1 });
    eq((await baton.complete("t", ASK, { deadlineMs: 5000 })).text, "recovered", "the next call on the same Baton");
  },

  // baton.fetch derives its gateway from the Baton's wasm object: after a trap it must use the
  // rebuilt one, and its 500 must keep an SDK from retrying.
  async "trap in baton.fetch: a 500 the SDKs do not retry, upstream closed, the same fetch answers 200 next"(env) {
    const id = await script(env, "trap-fetch", [{ text: "a slow whole answer", dripMs: 2000 }, { text: "recovered" }]);
    const baton = new env.Baton({ targets: { t: target(env, id) }, deadlineMs: 10000 });
    const ask = () => baton.fetch("http://sdk.invalid/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "t", messages: [{ role: "user", content: "hi" }] }),
    });
    const pending = ask();
    await sleep(300);
    armTrap(baton, "baton", "fetch");
    const res = await pending;
    eq(res.status, 500, "status of the in-flight request");
    eq(res.headers.get("x-should-retry"), "false", "x-should-retry of the 500");
    const message = (await res.json()).error?.message ?? "";
    if (!/bug/i.test(message)) fail(`the 500 should say this is a bug, got ${JSON.stringify(message)}`);
    await upstream(env, id, { requests: 1, clientClosed: 1 });
    const next = await ask();
    const json = await next.json();
    eq(next.status, 200, `next request through the same baton.fetch (${safeJson(json)})`);
    eq(json.choices?.[0]?.message?.content, "recovered", "next answer");
  },

  async "trap in a gateway: the in-flight response ends in an error, the same gateway answers 200 next"(env) {
    if (typeof env.createGateway !== "function") fail("the runner passed no createGateway");
    const id = await script(env, "trap-gateway", [{ text: "one two three four five six seven eight", chunkDelayMs: 200 }, { text: "recovered" }]);
    const key = "gw-hostile-key";
    const gateway = env.createGateway({ targets: { t: target(env, id) }, deadlineMs: 10000, gateway: { apiKeys: [key] } });
    const request = (stream) => new Request("http://gateway.test/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "t", messages: [{ role: "user", content: "hi" }], stream }),
    });
    const res = await gateway.fetch(request(true));
    eq(res.status, 200, "status of the streamed response");
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let body = decoder.decode((await reader.read()).value ?? new Uint8Array(), { stream: true });
    armTrap(gateway, "gateway");
    let broke = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        body += decoder.decode(value, { stream: true });
      }
    } catch {
      broke = true;
    }
    if (body.includes("[DONE]")) fail("the in-flight response finished normally after the trap", body);
    if (!broke && !/"error"/.test(body)) fail("the in-flight response ended without an error event and without an error", body);
    await upstream(env, id, { requests: 1, clientClosed: 1 });
    const next = await gateway.fetch(request(false));
    const json = await next.json();
    eq(next.status, 200, `next request through the same gateway (${safeJson(json)})`);
    eq(json.choices?.[0]?.message?.content, "recovered", "next answer");
  },
};

/**
 * Scenarios that must not share the runtime with others running at the same time: a forced trap
 * ends every call of the wasm instance, by design, and the multi-MiB bodies hold the provider and
 * a browser's six connections long enough to skew the timing of whatever runs beside them; a
 * scenario about reused connections needs the one its runtime kept for the provider, which another
 * scenario's request would take (and close) first. Runners that run scenarios concurrently pass
 * each one through `alone.run(runsAlone(name), fn)`.
 */
export function runsAlone(name) {
  return name.startsWith("trap ") || name.includes(" MiB ") || name.includes("reused connections");
}

/** A first-come lock: shared runs overlap; a run that must be alone waits for them and blocks others. */
export class RunAlone {
  #shared = 0;
  #exclusive = false;
  #queue = [];

  async run(alone, fn) {
    await new Promise((resolve) => {
      this.#queue.push({ alone, resolve });
      this.#pump();
    });
    try {
      return await fn();
    } finally {
      if (alone) this.#exclusive = false;
      else this.#shared -= 1;
      this.#pump();
    }
  }

  #pump() {
    while (this.#queue.length > 0 && !this.#exclusive) {
      const next = this.#queue[0];
      if (next.alone && this.#shared > 0) return;
      this.#queue.shift();
      if (next.alone) this.#exclusive = true;
      else this.#shared += 1;
      next.resolve();
    }
  }
}

/** The scenarios, each failing if it has not finished within SCENARIO_LIMIT_MS. */
export const hostile = Object.fromEntries(Object.entries(cases).map(([name, run]) => [name, (env) => withinLimit(run(env), name)]));

function withinLimit(running, name) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`"${name}" did not finish within ${SCENARIO_LIMIT_MS / 1000} s: a call never settled`)), SCENARIO_LIMIT_MS);
  });
  return Promise.race([running, limit]).finally(() => clearTimeout(timer));
}
