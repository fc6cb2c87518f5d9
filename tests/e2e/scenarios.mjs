// End-to-end scenarios, the same in every runtime (Node, Deno, workerd, Chromium).
//
// Each scenario is `async ({ Baton, BatonError, createGateway, providerUrl, runtime }) => void`
// and throws an Error saying what was expected and what was seen. They use nothing but fetch,
// AbortController, setTimeout, performance.now() and the llm-baton API, so a runner only has to
// import the package its own way and call them.
//
// They replay the cases of the seed reports with wall-clock bounds, against the scripted provider
// (tests/provider), which also tells whether every abandoned attempt's connection was really
// closed (`clientClosed`): a limit that only stops waiting, but leaves the request running and
// billed, fails here.
//
//   BAML #5085      fallback past a member's timeout (whole and streamed), retry x3 of timeouts,
//                   terminal after visible stream content
//   ward #662       503 twice then success at 250 ms doubling, 400 never retried, transport retried
//   GetBeta         one budget: the backup gets only what is left, none when the primary spent it
//   Switchyard      headers at 300 ms + body to 750 ms under a 600 ms deadline; no new attempt
//                   after a stream began
//   BitFun #2680    deterministic 4xx: exactly one request
//
// Margins: limits fire within ~10 ms on an idle machine; assertions allow SLACK_MS above the
// ideal for loaded CI machines, never 2x, and a small tolerance below (timers may fire a tick
// early relative to performance.now()).

import { agents } from "./agents.mjs";

const SLACK_MS = 250;
const EARLY_MS = 50;

let serial = 0;

/** A fresh scenario id per call, so runtimes and scenarios never share provider state. */
function scenarioId(env, label) {
  serial += 1;
  const stamp = Math.floor(performance.now() * 1000).toString(36);
  return `${env.runtime}-${label}-${stamp}-${serial}`.replace(/[^A-Za-z0-9_-]/g, "-");
}

/** Scripts a scenario on the provider; returns its id. */
async function script(env, label, steps) {
  const id = scenarioId(env, label);
  await rescript(env, id, steps);
  return id;
}

async function report(env, id) {
  const res = await fetch(`${env.providerUrl}/_scenarios/${id}`);
  if (!res.ok) throw new Error(`GET /_scenarios/${id} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

/**
 * The provider's view once every request of the scenario has ended (the server notices a closed
 * socket a moment after the client closes it), then checks the counts that matter.
 */
async function upstream(env, id, expect = {}) {
  let r;
  const until = performance.now() + 2000;
  for (;;) {
    r = await report(env, id);
    const closedEnough = expect.clientClosed === undefined || r.clientClosed >= expect.clientClosed;
    if ((r.open === 0 && closedEnough) || performance.now() > until) break;
    await sleep(20);
  }
  const what = `provider scenario ${id}`;
  if (r.open !== 0) fail(`${what}: ${r.open} request(s) still open 2 s after the call settled: the abandoned attempt was not aborted upstream`, r);
  for (const key of ["requests", "completed", "clientClosed"]) {
    if (expect[key] !== undefined && r[key] !== expect[key]) {
      fail(`${what}: expected ${key} = ${expect[key]}, provider saw ${r[key]}`, r);
    }
  }
  return r;
}

/** The provider's record of a scenario whose target received exactly `count` requests, none left open. */
async function requests(env, id, count, what) {
  const r = await upstream(env, id);
  eq(r.requests, count, `${what}: requests the provider received`);
  return r;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function fail(message, detail) {
  const extra = detail === undefined ? "" : `\n  detail: ${safeJson(detail)}`;
  throw new Error(message + extra);
}

function safeJson(v) {
  try {
    const s = JSON.stringify(v, (k, x) => (k === "body" && typeof x === "string" && x.length > 200 ? x.slice(0, 200) + "…" : x));
    return s.length > 4000 ? s.slice(0, 4000) + "…" : s;
  } catch {
    return String(v);
  }
}

function eq(actual, expected, what) {
  if (actual !== expected) fail(`${what}: expected ${safeJson(expected)}, got ${safeJson(actual)}`);
}

/** JSON with object keys sorted, so two values compare whatever order their keys were written in. */
function canonicalJson(v) {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (v && typeof v === "object") return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`).join(",")}}`;
  return JSON.stringify(v);
}

function sameJson(actual, expected, what) {
  if (canonicalJson(actual) !== canonicalJson(expected)) fail(`${what}: expected ${safeJson(expected)}, got ${safeJson(actual)}`);
}

function oneOf(actual, allowed, what) {
  if (!allowed.includes(actual)) fail(`${what}: expected one of ${safeJson(allowed)}, got ${safeJson(actual)}`);
}

/** `ms` must be within [ideal - EARLY_MS, ideal + SLACK_MS] (or the explicit bounds). */
function took(ms, ideal, what, { lo = ideal - EARLY_MS, hi = ideal + SLACK_MS } = {}) {
  if (!(ms >= lo && ms <= hi)) fail(`${what}: took ${ms.toFixed(0)} ms, expected ${ideal} ms (allowed ${lo}..${hi} ms)`);
}

/** Runs `fn`, expecting a BatonError; returns `[error, elapsedMs]`. */
async function rejects(env, fn, expect, what) {
  const t0 = performance.now();
  let value;
  try {
    value = await fn();
  } catch (e) {
    const ms = performance.now() - t0;
    checkError(env, e, expect, what);
    return [e, ms];
  }
  fail(`${what}: expected a BatonError ${safeJson(expect)}, but the call succeeded`, value);
}

function checkError(env, e, expect, what) {
  if (!(e instanceof env.BatonError)) fail(`${what}: expected a BatonError, got ${e?.name ?? typeof e}: ${e?.message ?? e}`, e);
  if (!(e instanceof Error)) fail(`${what}: BatonError is not an Error`);
  eq(e.name, "BatonError", `${what}: error.name`);
  if (typeof e.message !== "string" || e.message.length === 0) fail(`${what}: the BatonError has no message`);
  for (const [key, want] of Object.entries(expect)) {
    const got = e[key];
    const ok = Array.isArray(want) ? want.includes(got) : got === want;
    if (!ok) fail(`${what}: expected error.${key} = ${safeJson(want)}, got ${safeJson(got)} (message: ${e.message})`, errorDetail(e));
  }
}

function errorDetail(e) {
  const o = { message: e.message };
  for (const k of ["kind", "timeout", "limitMs", "status", "retryAfterMs", "path", "target", "legs"]) if (e[k] !== undefined) o[k] = e[k];
  return o;
}

/** A target on the provider, scripted with its own scenario id. */
function target(env, id, { format = "openai_chat", timeouts, model = "scripted-model" } = {}) {
  const t = { format, baseUrl: `${env.providerUrl}/s/${id}/v1`, model, apiKey: "sk-test-not-a-secret" };
  if (timeouts) t.timeouts = timeouts;
  return t;
}

const ASK = { messages: [{ role: "user", content: "Say hello." }], maxTokens: 32 };

/** Consumes a stream; returns the events with their arrival time (ms since `t0`). */
async function drain(iterable, t0, { breakAfterText = false } = {}) {
  const events = [];
  for await (const ev of iterable) {
    events.push({ ...ev, at: performance.now() - t0 });
    if (breakAfterText && ev.type === "text") break;
  }
  return events;
}

function textOf(events) {
  return events.filter((e) => e.type === "text").map((e) => e.text).join("");
}

function checkLegs(legs, expected, what) {
  if (!Array.isArray(legs)) fail(`${what}: expected legs to be an array, got ${safeJson(legs)}`);
  if (legs.length !== expected.length) fail(`${what}: expected ${expected.length} leg(s), got ${legs.length}`, legs);
  expected.forEach((want, i) => {
    for (const [k, v] of Object.entries(want)) {
      const got = legs[i][k];
      const ok = Array.isArray(v) ? v.includes(got) : got === v;
      if (!ok) fail(`${what}: leg ${i}: expected ${k} = ${safeJson(v)}, got ${safeJson(got)}`, legs);
    }
  });
}

// Resume (issue 12): a stream that broke after its start goes on on the backup. The full answer
// is 60 words; the provider streams one word per content event, each keeping its leading space,
// so the text shown after N events has no trailing whitespace and is exactly the prefill.
const WORDS = Array.from({ length: 60 }, (_, i) => `word${i + 1}`);
const FULL = WORDS.join(" ");
const shownAfter = (events) => WORDS.slice(0, events).join(" ");
// A chunked stream cut before its end: Node's fetch reports a clean end (the decoder then sees no
// success marker: "protocol"), the other runtimes a read error ("transport"). Both are breaks.
const CUT_KINDS = ["transport", "protocol"];

/** primary -> backup (prefill: true) under `afterStart: {mode}`; the backup's extra target fields. */
function resumeConfig(env, p, b, { mode = "continue", primaryTimeouts, backupTimeouts, deadlineMs, afterStart = {} } = {}) {
  const config = {
    targets: {
      primary: target(env, p, { timeouts: primaryTimeouts }),
      backup: { ...target(env, b, { timeouts: backupTimeouts }), prefill: true },
    },
    routes: { main: { fallback: ["primary", "backup"], afterStart: { mode, ...afterStart } } },
  };
  if (deadlineMs !== undefined) config.deadlineMs = deadlineMs;
  return config;
}

/** What a reader shows after honouring `reset` items: the text since the last reset. */
function shownText(events) {
  let text = "";
  for (const ev of events) {
    if (ev.type === "reset") text = "";
    if (ev.type === "text") text += ev.text;
  }
  return text;
}

/** Defines scenario `id`, or redefines it in place (the same baseUrl) from its first step, with an empty log. */
async function rescript(env, id, steps) {
  const res = await fetch(`${env.providerUrl}/_scenarios/${id}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ steps }),
  });
  if (!res.ok) throw new Error(`PUT /_scenarios/${id} answered ${res.status}: ${await res.text()}`);
  await res.arrayBuffer().catch(() => {});
}

/** One target's row of `baton.health()`. */
function breaker(baton, name) {
  return baton.health().targets.find((t) => t.target === name);
}

/** The last message of each request the provider logged for scenario `r` (openai_chat bodies). */
function lastMessages(r) {
  return (r.log ?? []).map((entry) => entry.body?.messages?.at(-1));
}

// ---------------------------------------------------------------------------------------------

export const scenarios = {
  // BAML #5085, row 1: fallback [timed-out, fast], invoke -> fast answers, 1.0 s.
  async "fallback: primary stalls 3 s before headers, backup answers at the primary's 1 s limit"(env) {
    const p = await script(env, "fb-primary", [{ headersDelayMs: 3000, text: "too late" }]);
    const b = await script(env, "fb-backup", [{ text: "from backup" }]);
    const baton = new env.Baton({
      targets: {
        primary: target(env, p, { timeouts: { headersMs: 1000, totalMs: 1000 } }),
        backup: target(env, b),
      },
      routes: { main: { fallback: ["primary", "backup"] } },
    });
    const t0 = performance.now();
    const out = await baton.complete("main", ASK);
    const ms = performance.now() - t0;
    eq(out.text, "from backup", "answer text");
    eq(out.target, "backup", "answering target");
    took(ms, 1000, "fallback after the primary's 1 s limit", { lo: 950, hi: 1500 });
    checkLegs(out.legs, [
      { target: "primary", outcome: "timeout", timeout: ["headers", "total"] },
      { target: "backup", outcome: "ok" },
    ], "legs");
    await upstream(env, p, { requests: 1, clientClosed: 1, completed: 0 });
    await upstream(env, b, { requests: 1, completed: 1, clientClosed: 0 });
  },

  // BAML #5085, row 2: the same, streamed, with a first-token limit.
  async "fallback stream: primary sends no token within firstTokenMs 1 s, backup streams"(env) {
    const p = await script(env, "fbs-primary", [{ firstChunkDelayMs: 3000, text: "too late" }]);
    const b = await script(env, "fbs-backup", [{ text: "from backup" }]);
    const baton = new env.Baton({
      targets: {
        primary: target(env, p, { timeouts: { firstTokenMs: 1000 } }),
        backup: target(env, b),
      },
      routes: { main: { fallback: ["primary", "backup"] } },
    });
    const t0 = performance.now();
    const events = await drain(baton.stream("main", ASK), t0);
    const ms = performance.now() - t0;
    eq(textOf(events), "from backup", "streamed text");
    const done = events.at(-1);
    eq(done?.type, "done", "last stream event");
    eq(done.text, "from backup", "done.text");
    eq(done.target, "backup", "done.target");
    took(ms, 1000, "fallback after the primary's first-token limit", { lo: 950, hi: 1500 });
    checkLegs(done.legs, [
      { target: "primary", outcome: "timeout", timeout: "first_token" },
      { target: "backup", outcome: "ok" },
    ], "legs");
    await upstream(env, p, { requests: 1, clientClosed: 1 });
    await upstream(env, b, { requests: 1, completed: 1 });
  },

  // BAML #5085, row 3: retry x3, every attempt times out -> 3 attempts, then the timeout.
  async "retry x3: every attempt times out at 1 s, 100 ms backoff, then the timeout surfaces"(env) {
    const t = await script(env, "retry-timeouts", [{ headersDelayMs: 3000 }]);
    const baton = new env.Baton({
      targets: { t: target(env, t, { timeouts: { totalMs: 1000 } }) },
      routes: { main: { retry: "t", attempts: 3, backoff: { initialMs: 100, jitter: "none" } } },
    });
    const retries = [];
    const [e, ms] = await rejects(env, () => baton.complete("main", ASK, { onEvent: (ev) => ev.type === "retry" && retries.push(ev) }), { kind: "timeout", timeout: ["total", "headers"] }, "three timed-out attempts");
    took(ms, 3300, "3 x 1 s attempts + 100 + 200 ms backoff");
    eq(retries.length, 2, "retry events");
    eq(retries.map((r) => r.delayMs).join(","), "100,200", "retry delays (jitter none, doubling)");
    if (e.legs !== undefined) checkLegs(e.legs, [{ outcome: "timeout" }, { outcome: "timeout" }, { outcome: "timeout" }], "error.legs");
    await upstream(env, t, { requests: 3, clientClosed: 3, completed: 0 });
  },

  // BAML #5085 "after a visible text delta: terminal"; Switchyard "expiry after streaming
  // begins does not add another attempt".
  async "stream stalls after text: idle limit 500 ms ends it, no retry, no failover"(env) {
    const t = await script(env, "idle-stall", [{ text: "hello world!", stallAfterEvents: 1, stallMs: 5000 }]);
    const b = await script(env, "idle-backup", [{ text: "backup" }]);
    const baton = new env.Baton({
      targets: { t: target(env, t, { timeouts: { idleMs: 500 } }), backup: target(env, b) },
      routes: { main: { fallback: [{ retry: "t", attempts: 3, backoff: { initialMs: 10, jitter: "none" } }, "backup"] } },
    });
    const t0 = performance.now();
    const events = [];
    let error;
    try {
      for await (const ev of baton.stream("main", ASK)) events.push({ ...ev, at: performance.now() - t0 });
    } catch (err) {
      error = err;
    }
    const ms = performance.now() - t0;
    if (!error) fail("expected the stream to fail with an idle timeout", events);
    checkError(env, error, { kind: "timeout", timeout: "idle" }, "idle stall");
    eq(textOf(events), "hello", "text delivered before the stall");
    if (events.some((ev) => ev.type === "done")) fail("a failed stream yielded a done event", events);
    took(ms - events[0].at, 500, "from the last text to the idle timeout");
    await upstream(env, t, { requests: 1, clientClosed: 1 });
    await upstream(env, b, { requests: 0 });
  },

  // The soak of issue 41: a whole answer whose body stalls after its headers waited for the
  // deadline. idleMs bounds a whole body from its headers and between its bytes, so it fails over.
  async "complete(): a body that stalls after its headers fails over at idleMs 500"(env) {
    const t = await script(env, "body-stall", [{ text: "hello from the primary", dripMs: 100, stallAfterEvents: 2, stallMs: 5000 }]);
    const b = await script(env, "body-stall-backup", [{ text: "backup" }]);
    const baton = new env.Baton({
      targets: { t: target(env, t, { timeouts: { headersMs: 2000, idleMs: 500 } }), backup: target(env, b) },
      routes: { main: { fallback: ["t", "backup"] } },
      deadlineMs: 10000,
    });
    const t0 = performance.now();
    const out = await baton.complete("main", ASK);
    const ms = performance.now() - t0;
    eq(out.text, "backup", "answered by the backup");
    checkLegs(out.legs, [{ target: "t", outcome: "timeout" }, { target: "backup", outcome: "ok" }], "legs");
    eq(out.legs[0].timeout, "idle", "the primary's leg ended by its idle limit");
    took(ms, 520, "the primary's headers and two pieces 10 ms apart, then 500 ms of silence");
    await upstream(env, t, { requests: 1, clientClosed: 1 });
  },

  // The soak of issue 41: Deno's fetch sent a POST again by itself when a reused keep-alive
  // connection was reset before the response headers, so the provider saw (and could bill) more
  // requests than the attempts llm-baton counted. Each case answers one request on a connection
  // the client keeps, then breaks the next request, which the client sends on that connection;
  // the provider must see exactly one request per attempt llm-baton reports.
  async "one provider request per counted attempt: resets on reused connections"(env) {
    // Before the headers: every request on a connection the client reuses is reset, the others
    // answered on a kept connection (a pool may open a fresh connection first, so four calls).
    // After the headers and mid-stream: the third request is cut. Nothing else asks the provider
    // meanwhile: a request of the test's own would take the kept connection.
    const cases = [
      ["before headers", false, [{ keepAlive: true, text: "first", resetReused: true }]],
      ["after headers", false, [{ keepAlive: true, text: "first" }, { keepAlive: true, text: "first" }, { text: "never whole", dripMs: 50, stallAfterEvents: 0, stallMs: 10 }, { text: "again" }]],
      ["mid-stream", true, [{ keepAlive: true, text: "first" }, { keepAlive: true, text: "first" }, { text: "cut after one word", stallAfterEvents: 1, stallMs: 10 }, { text: "again" }]],
    ];
    for (const [label, stream, steps] of cases) {
      const t = await script(env, `resend-${label.replace(" ", "-")}`, steps);
      const baton = new env.Baton({
        targets: { t: target(env, t) },
        routes: { main: { retry: "t", attempts: 3, backoff: { initialMs: 10, jitter: "none" } } },
        deadlineMs: 5000,
      });
      let attempts = 0;
      for (let call = 0; call < (label === "before headers" ? 4 : 3); call++) {
        // A pool takes a connection back a moment after its answer was read.
        if (call > 0) await sleep(50);
        try {
          if (stream) {
            for await (const ev of baton.stream("main", ASK)) if (ev.type === "done") attempts += ev.legs.length;
          } else {
            attempts += (await baton.complete("main", ASK)).legs.length;
          }
        } catch (e) {
          if (!(e instanceof env.BatonError)) throw e;
          attempts += e.legs.length;
        }
      }
      const r = await upstream(env, t);
      if (label === "before headers" && r.reset === 0) fail(`${label}: no request came on a reused connection in 4 calls`, r.log.map((l) => [l.onConnection, l.outcome]));
      // Chromium sends a reset request again by itself, and a page cannot stop it: a streamed
      // request body, which Deno does not replay, needs HTTP/2 there (docs/errors.md). This fails
      // if Chromium changes.
      const resent = env.runtime === "browser" && label === "before headers" ? r.reset : 0;
      eq(r.requests, attempts + resent, `${label}: requests the provider received, against the attempts llm-baton counted${resent ? " and Chromium's own re-sends" : ""}`);
    }
  },

  // Switchyard: one deadline across attempts and backoff.
  async "a 1.5 s deadline around retries of a 5 s stall ends at 1.5 s"(env) {
    const t = await script(env, "deadline-retry", [{ headersDelayMs: 5000 }]);
    const baton = new env.Baton({
      targets: { t: target(env, t) },
      routes: { main: { retry: "t", attempts: 5, backoff: { initialMs: 100, jitter: "none" } } },
    });
    const [, ms] = await rejects(env, () => baton.complete("main", ASK, { deadlineMs: 1500 }), { kind: "timeout", timeout: "deadline" }, "deadline");
    took(ms, 1500, "deadline");
    await upstream(env, t, { requests: 1, clientClosed: 1 });
  },

  // GetBeta: the secondary receives only what is left of the budget.
  async "config deadline 1 s: the backup gets only what the primary left (0.4 s)"(env) {
    const p = await script(env, "budget-primary", [{ headersDelayMs: 3000 }]);
    const b = await script(env, "budget-backup", [{ headersDelayMs: 3000 }]);
    const baton = new env.Baton({
      targets: { primary: target(env, p, { timeouts: { headersMs: 600 } }), backup: target(env, b) },
      routes: { main: { fallback: ["primary", "backup"] } },
      deadlineMs: 1000,
    });
    const [, ms] = await rejects(env, () => baton.complete("main", ASK), { kind: "timeout", timeout: "deadline" }, "deadline across failover");
    took(ms, 1000, "deadline across failover");
    await upstream(env, p, { requests: 1, clientClosed: 1 });
    await upstream(env, b, { requests: 1, clientClosed: 1 });
  },

  // GetBeta: if the primary exhausts the budget, the secondary is never called.
  async "deadline spent by the primary: the backup is never called"(env) {
    const p = await script(env, "spent-primary", [{ headersDelayMs: 3000 }]);
    const b = await script(env, "spent-backup", [{ text: "unused" }]);
    const baton = new env.Baton({
      targets: { primary: target(env, p), backup: target(env, b) },
      routes: { main: { fallback: ["primary", "backup"] } },
    });
    const [, ms] = await rejects(env, () => baton.complete("main", ASK, { deadlineMs: 800 }), { kind: "timeout", timeout: "deadline" }, "deadline spent by the primary");
    took(ms, 800, "deadline");
    await upstream(env, p, { requests: 1, clientClosed: 1 });
    await upstream(env, b, { requests: 0 });
  },

  async "caller abort during a stall: cancelled at once, upstream closed"(env) {
    const t = await script(env, "abort-stall", [{ headersDelayMs: 5000 }]);
    const baton = new env.Baton({
      targets: { t: target(env, t) },
      routes: { main: { retry: "t", attempts: 3 } },
    });
    const ctrl = new AbortController();
    let abortedAt = 0;
    setTimeout(() => {
      abortedAt = performance.now();
      ctrl.abort();
    }, 300);
    const t0 = performance.now();
    await rejects(env, () => baton.complete("main", ASK, { signal: ctrl.signal }), { kind: "cancelled" }, "caller abort");
    const late = performance.now() - abortedAt;
    if (late > 100) fail(`the call settled ${late.toFixed(0)} ms after the abort; expected at once (< 100 ms)`);
    took(performance.now() - t0, 300, "abort at 300 ms");
    await upstream(env, t, { requests: 1, clientClosed: 1 });
  },

  async "caller abort during a 5 s backoff wait settles at once"(env) {
    const t = await script(env, "abort-backoff", [{ status: 503, message: "overloaded" }]);
    const baton = new env.Baton({
      targets: { t: target(env, t) },
      routes: { main: { retry: "t", attempts: 3, backoff: { initialMs: 5000, jitter: "none" } } },
    });
    const ctrl = new AbortController();
    let abortedAt = 0;
    let retried = false;
    const onEvent = (ev) => {
      if (ev.type !== "retry" || retried) return;
      retried = true;
      setTimeout(() => {
        abortedAt = performance.now();
        ctrl.abort();
      }, 100);
    };
    const t0 = performance.now();
    await rejects(env, () => baton.complete("main", ASK, { signal: ctrl.signal, onEvent }), { kind: "cancelled" }, "abort during backoff");
    if (!retried) fail("no retry event was reported before the abort");
    const late = performance.now() - abortedAt;
    if (late > 100) fail(`the call settled ${late.toFixed(0)} ms after the abort; expected at once (< 100 ms), not when the 5 s backoff ends`);
    if (performance.now() - t0 > 1000 + SLACK_MS) fail("the call waited for the backoff");
    await upstream(env, t, { requests: 1, completed: 1 });
  },

  // An abort signal that is already aborted sends nothing.
  async "an already aborted signal: cancelled, no request"(env) {
    const t = await script(env, "pre-aborted", [{ text: "unused" }]);
    const baton = new env.Baton({ targets: { t: target(env, t) } });
    const ctrl = new AbortController();
    ctrl.abort();
    const [, ms] = await rejects(env, () => baton.complete("t", ASK, { signal: ctrl.signal }), { kind: "cancelled" }, "pre-aborted signal");
    if (ms > 100) fail(`took ${ms.toFixed(0)} ms to reject an already aborted call`);
    await upstream(env, t, { requests: 0 });
  },

  // ward #662: four attempts, 250 ms doubling; 503 is "not now".
  async "503 twice then success: retried after 250 + 500 ms, three legs, two retry events"(env) {
    const t = await script(env, "503-503-ok", [
      { status: 503, message: "overloaded" },
      { status: 503, message: "overloaded" },
      { text: "third time lucky" },
    ]);
    const baton = new env.Baton({
      targets: { t: target(env, t) },
      routes: { main: { retry: "t", attempts: 4, backoff: { initialMs: 250, jitter: "none" } } },
    });
    const events = [];
    const t0 = performance.now();
    const out = await baton.complete("main", ASK, { onEvent: (ev) => events.push(ev) });
    const ms = performance.now() - t0;
    eq(out.text, "third time lucky", "answer text");
    took(ms, 750, "two backoffs of 250 and 500 ms");
    checkLegs(out.legs, [
      { outcome: "http", status: 503, attempt: 1 },
      { outcome: "http", status: 503, attempt: 2 },
      { outcome: "ok", attempt: 3 },
    ], "legs");
    const retries = events.filter((e) => e.type === "retry");
    eq(retries.length, 2, "retry events");
    eq(retries.map((r) => r.delayMs).join(","), "250,500", "retry delays");
    eq(retries[0].cause?.status, 503, "retry cause status");
    eq(retries[0].of, 4, "retry event 'of'");
    eq(events.filter((e) => e.type === "attempt").length, 3, "attempt events");
    eq(events.filter((e) => e.type === "leg").length, 3, "leg events");
    await upstream(env, t, { requests: 3, completed: 3 });
  },

  // ward #662 / BitFun #2680: a deterministic 4xx fails identically every time.
  async "400 is not retried: kind http, status 400, exactly one upstream request"(env) {
    const t = await script(env, "400", [{ status: 400, message: "messages: field required" }]);
    const baton = new env.Baton({
      targets: { t: target(env, t) },
      routes: { main: { retry: "t", attempts: 4, backoff: { initialMs: 10, jitter: "none" } } },
    });
    const [e, ms] = await rejects(env, () => baton.complete("main", ASK), { kind: "http", status: 400 }, "400");
    if (!e.message.includes("messages: field required")) fail(`error.message should carry the provider's words, got ${JSON.stringify(e.message)}`);
    if (ms > SLACK_MS) fail(`a 400 took ${ms.toFixed(0)} ms to surface`);
    await upstream(env, t, { requests: 1 });
  },

  // Issue 11 point 9: a prompt too long for one model fails over at once (never retried); a
  // content filter's rejection is final, with the provider's code and class on the error.
  async "classes: context_length fails over without a retry, content_filter is final with code and class"(env) {
    const small = await script(env, "class-small", [{ status: 400, errorType: "invalid_request_error", message: "prompt is too long: 215487 tokens > 200000 maximum" }]);
    const big = await script(env, "class-big", [{ text: "a bigger window" }]);
    const causes = [];
    const baton = new env.Baton({
      targets: { small: target(env, small, { format: "anthropic_messages" }), big: target(env, big) },
      routes: { main: { fallback: [{ retry: "small", attempts: 3, backoff: { initialMs: 10, jitter: "none" } }, "big"] } },
    });
    const out = await baton.complete("main", ASK, { onEvent: (ev) => ev.type !== "attempt" && ev.type !== "leg" && causes.push(ev) });
    eq(out.text, "a bigger window", "answer from the next member");
    eq(causes.map((ev) => `${ev.type} ${ev.cause.status} ${ev.cause.code} ${ev.cause.class}`).join(), "failover 400 invalid_request_error context_length", "events");
    await upstream(env, small, { requests: 1 });

    const filtered = await script(env, "class-filtered", [{ status: 400, errorType: "content_filter", message: "The response was filtered due to the prompt triggering the content management policy." }]);
    const backup = await script(env, "class-backup", [{ text: "never" }]);
    const strict = new env.Baton({
      targets: { filtered: target(env, filtered), backup: target(env, backup) },
      routes: { main: { fallback: ["filtered", "backup"] } },
    });
    const [e] = await rejects(env, () => strict.complete("main", ASK), { kind: "http", status: 400, code: "content_filter", class: "content_filter" }, "content filter");
    if (!e.message.includes("content management policy")) fail(`the provider's reason should be kept, got ${JSON.stringify(e.message)}`);
    await upstream(env, backup, { requests: 0 });
  },

  async "429 with retry-after 1: retried after ~1 s"(env) {
    const t = await script(env, "429-ra1", [{ status: 429, message: "slow down", headers: { "retry-after": "1" } }, { text: "ok now" }]);
    const baton = new env.Baton({
      targets: { t: target(env, t) },
      routes: { main: { retry: "t", attempts: 3, backoff: { initialMs: 10, jitter: "none" } } },
    });
    const t0 = performance.now();
    const out = await baton.complete("main", ASK);
    const ms = performance.now() - t0;
    eq(out.text, "ok now", "answer text");
    took(ms, 1000, "Retry-After: 1");
    checkLegs(out.legs, [{ outcome: "http", status: 429, retryAfterMs: 1000 }, { outcome: "ok" }], "legs");
    await upstream(env, t, { requests: 2 });
  },

  async "429 asking for 30 s under a 5 s deadline fails at once with retryAfterMs"(env) {
    const t = await script(env, "429-ra30", [{ status: 429, message: "slow down", headers: { "retry-after": "30" } }]);
    const baton = new env.Baton({
      targets: { t: target(env, t) },
      routes: { main: { retry: "t", attempts: 3 } },
    });
    const [, ms] = await rejects(env, () => baton.complete("main", ASK, { deadlineMs: 5000 }), { kind: "http", status: 429, retryAfterMs: 30000 }, "429 retry-after 30");
    if (ms > 200) fail(`took ${ms.toFixed(0)} ms; a wait that cannot fit the deadline should fail at once (< 200 ms)`);
    await upstream(env, t, { requests: 1 });
  },

  // Switchyard: "a 300 ms first attempt and a 450 ms response body under one 600 ms deadline".
  async "headers at 300 ms, body dripping until 750 ms, 600 ms deadline: timeout at 600 ms"(env) {
    const t = await script(env, "drip", [{ headersDelayMs: 300, text: "a body that takes its time to arrive", dripMs: 450 }]);
    const baton = new env.Baton({ targets: { t: target(env, t) } });
    const [, ms] = await rejects(env, () => baton.complete("t", ASK, { deadlineMs: 600 }), { kind: "timeout", timeout: "deadline" }, "deadline during the body");
    took(ms, 600, "deadline while the body drips");
    await upstream(env, t, { requests: 1, clientClosed: 1 });
  },

  async "transport failure (connection reset) is retried"(env) {
    const t = await script(env, "reset", [{ reset: true }, { text: "after reset" }]);
    const baton = new env.Baton({
      targets: { t: target(env, t) },
      routes: { main: { retry: "t", attempts: 3, backoff: { initialMs: 50, jitter: "none" } } },
    });
    const out = await baton.complete("main", ASK);
    eq(out.text, "after reset", "answer text");
    checkLegs(out.legs, [{ outcome: "transport" }, { outcome: "ok" }], "legs");
    await upstream(env, t, { requests: 2 });
  },

  // BAML #5085: a stream may fail over only before the first visible delta.
  async "a stream error before any content fails over to the backup"(env) {
    const first = await script(env, "se-early", [{ text: "never shown", streamError: { afterEvents: 0, type: "overloaded_error", message: "Overloaded" } }]);
    const b = await script(env, "se-early-backup", [{ text: "backup answer" }]);
    const baton = new env.Baton({
      targets: { first: target(env, first), backup: target(env, b) },
      routes: { main: { fallback: ["first", "backup"] } },
    });
    const events = await drain(baton.stream("main", ASK), performance.now());
    eq(textOf(events), "backup answer", "text after failing over from an early stream error");
    eq(events.at(-1).target, "backup", "answering target");
    checkLegs(events.at(-1).legs, [{ target: "first", outcome: ["http", "protocol"] }, { target: "backup", outcome: "ok" }], "legs");
    await upstream(env, first, { requests: 1 });
    await upstream(env, b, { requests: 1 });
  },

  // After visible text, a replay would show the reader a second answer: the error is final.
  // Twice: the error event 100 ms after the text, and right behind it, where the two usually
  // arrive in one read (the text must still be delivered, and still commit the stream).
  async "a stream error after content is terminal: no failover, the text stays delivered"(env) {
    for (const chunkDelayMs of [100, 0]) {
      const first = await script(env, `se-late-${chunkDelayMs}`, [{ text: "partial answer", chunkDelayMs, streamError: { afterEvents: 1, type: "overloaded_error", message: "Overloaded" } }]);
      const b = await script(env, `se-late-backup-${chunkDelayMs}`, [{ text: "backup answer" }]);
      const baton = new env.Baton({
        targets: { first: target(env, first), backup: target(env, b) },
        routes: { main: { fallback: ["first", "backup"] } },
      });
      const what = `stream error ${chunkDelayMs} ms after the first text`;
      const seen = [];
      let error;
      try {
        for await (const ev of baton.stream("main", ASK)) seen.push(ev);
      } catch (e) {
        error = e;
      }
      if (!error) fail(`${what}: the call succeeded; it must fail without failing over`, seen);
      checkError(env, error, {}, what);
      if (error.kind === "cancelled") fail(`${what}: surfaced as kind "cancelled"`, errorDetail(error));
      eq(textOf(seen), "partial", `${what}: text delivered before the error`);
      await upstream(env, b, { requests: 0 });
    }
  },

  async "a streamed tool call arrives as tool_call events and in done.toolCalls"(env) {
    for (const format of ["openai_chat", "anthropic_messages"]) {
      const t = await script(env, `tool-${format}`, [{ toolCall: { name: "get_weather", arguments: '{"city":"Paris","unit":"celsius"}' } }]);
      const baton = new env.Baton({ targets: { t: target(env, t, { format }) } });
      const request = { ...ASK, tools: [{ name: "get_weather", description: "Weather by city", parameters: { type: "object", properties: { city: { type: "string" } } } }] };
      const events = await drain(baton.stream("t", request), performance.now());
      const calls = events.filter((e) => e.type === "tool_call");
      if (calls.length === 0) fail(`${format}: no tool_call events`, events);
      eq(calls.map((c) => c.arguments).join(""), '{"city":"Paris","unit":"celsius"}', `${format}: streamed arguments`);
      eq(calls.find((c) => c.name)?.name, "get_weather", `${format}: tool name`);
      const done = events.at(-1);
      eq(done.type, "done", `${format}: last event`);
      eq(done.toolCalls?.[0]?.name, "get_weather", `${format}: done.toolCalls[0].name`);
      eq(done.toolCalls?.[0]?.arguments, '{"city":"Paris","unit":"celsius"}', `${format}: done.toolCalls[0].arguments`);
      eq(done.finishReason, "tool_calls", `${format}: finishReason`);
      const whole = await baton.complete("t", request);
      eq(whole.toolCalls?.[0]?.name, "get_weather", `${format}: complete().toolCalls[0].name`);
    }
  },

  // A caller may abort from inside its own onEvent callback, i.e. while the driver is calling it.
  async "abort from inside onEvent: cancelled at once, nothing more sent"(env) {
    const t = await script(env, "abort-in-event", [{ status: 503, message: "overloaded" }]);
    const baton = new env.Baton({
      targets: { t: target(env, t) },
      routes: { main: { retry: "t", attempts: 5, backoff: { initialMs: 2000, jitter: "none" } } },
    });
    const ctrl = new AbortController();
    const onEvent = (ev) => {
      if (ev.type === "retry") ctrl.abort();
    };
    const [, ms] = await rejects(env, () => baton.complete("main", ASK, { signal: ctrl.signal, onEvent }), { kind: "cancelled" }, "abort inside onEvent");
    if (ms > SLACK_MS) fail(`took ${ms.toFixed(0)} ms; the abort came with the first retry event`);
    await upstream(env, t, { requests: 1 });
  },

  async "a bad config throws BatonError kind config naming the field"(env) {
    let error;
    try {
      new env.Baton({ targets: { p: { format: "openai_chat", baseUrl: `${env.providerUrl}/v1`, model: "m", timeouts: { totalMs: 0 } } } });
    } catch (e) {
      error = e;
    }
    if (!error) fail("totalMs: 0 was accepted");
    checkError(env, error, { kind: "config", path: "targets.p.timeouts.totalMs" }, "bad config");
    if (!error.message.includes("totalMs")) fail(`the message should name the field: ${error.message}`);

    let unknown;
    try {
      new env.Baton({ targets: { p: target(env, "x") }, routes: { main: { fallback: ["p", "nope"] } } });
    } catch (e) {
      unknown = e;
    }
    checkError(env, unknown, { kind: "config", path: "routes.main.fallback[1]" }, "unknown route member");

    const ok = new env.Baton({ targets: { a: target(env, "a"), b: target(env, "b") }, routes: { main: { fallback: ["a", "b"] } } });
    eq([...ok.routes()].sort().join(","), "a,b,main", "routes()");
  },

  // `apiKey: process.env.KEY` with KEY unset: undefined where a secret goes is an unset variable far
  // more often than a field left out, and read as absent it went out with no key (the provider's 401).
  async "a secret given as undefined (an unset environment variable) is a config error naming its path"(env) {
    if (typeof env.createGateway !== "function") fail("the runner passed no createGateway");
    const id = await script(env, "undefined-key", [{ text: "unused" }]);
    const cause = "is undefined: an environment variable that is not set? Set it, or";
    const thrown = (build) => {
      try {
        build();
      } catch (e) {
        return e;
      }
      return null;
    };
    const primary = (fields) => ({ targets: { primary: { ...target(env, id), ...fields } } });
    const cases = [
      ["apiKey", primary({ apiKey: undefined }), "targets.primary.apiKey", "leave the field out"],
      ["a credential header", primary({ headers: { authorization: "Bearer sk-live-header-secret", "x-api-key": undefined } }),
        "targets.primary.headers.x-api-key", "leave the header out"],
      ["any header", primary({ headers: { "x-team": undefined } }), "targets.primary.headers.x-team", "leave the header out"],
      ["a gateway key", { ...primary({}), gateway: { apiKeys: ["sk-live-gateway-secret", undefined] } }, "gateway.apiKeys[1]",
        "remove the entry"],
      ["the gateway's keys", { ...primary({}), gateway: { apiKeys: undefined } }, "gateway.apiKeys",
        "leave the field out for a gateway that any client may call"],
    ];
    const entries = [["new Baton", (config) => new env.Baton(config)], ["createGateway", (config) => env.createGateway(config)]];
    for (const [what, config, path, remedy] of cases) {
      for (const [entry, build] of entries) {
        const e = thrown(() => build(config));
        if (!e) fail(`${entry}: ${what} given as undefined was accepted`);
        checkError(env, e, { kind: "config", path, message: `${path} ${cause} ${remedy}` }, `${entry}: ${what} as undefined`);
        const shown = e.message + JSON.stringify(errorDetail(e));
        if (/sk-(live|test)/.test(shown)) fail(`${entry}: a key reached the error: ${shown}`);
      }
    }
    // Anywhere else undefined is an absent field, as before.
    const relaxed = {
      ...primary({ timeouts: undefined, headers: {} }),
      routes: undefined, deadlineMs: undefined, gateway: { apiKeys: ["sk-test-gateway"], cors: undefined },
    };
    for (const [entry, build] of entries) {
      const e = thrown(() => build(relaxed));
      if (e) fail(`${entry}: undefined outside a secret was refused: ${e.message}`);
    }
    await upstream(env, id, { requests: 0 });
  },

  async "no config at all: new Baton() and createGateway() say that a config is required and what it looks like"(env) {
    if (typeof env.createGateway !== "function") fail("the runner passed no createGateway");
    const entries = [["new Baton", (...a) => new env.Baton(...a)], ["createGateway", (...a) => env.createGateway(...a)]];
    for (const [entry, build] of entries) {
      for (const args of [[], [undefined], [null]]) {
        let error;
        try {
          build(...args);
        } catch (e) {
          error = e;
        }
        const what = `${entry}(${args.map(String).join(", ")})`;
        if (!error) fail(`${what} was accepted`);
        checkError(env, error, { kind: "config", path: "config" }, what);
        const example = `${entry}({ targets: { p: { format: "openai_chat", baseUrl: "https://api.openai.com/v1", ` +
          `model: "gpt-4o-mini" } }, routes: { chat: "p" } })`;
        const message = `config is required: ${entry}({ targets, routes }), e.g. ${example} ` +
          "(routes may be left out: each target is a route of its own)";
        eq(error.message, message, `${what}: message`);
      }
    }
  },

  async "deadlineMs: 0 is a config error and sends no request"(env) {
    const t = await script(env, "deadline-0", [{ text: "unused" }]);
    const baton = new env.Baton({ targets: { t: target(env, t) } });
    await rejects(env, () => baton.complete("t", ASK, { deadlineMs: 0 }), { kind: "config", path: "options.deadlineMs" }, "deadlineMs: 0");
    let error;
    try {
      for await (const ev of baton.stream("t", ASK, { deadlineMs: 0 })) void ev;
    } catch (e) {
      error = e;
    }
    checkError(env, error, { kind: "config", path: "options.deadlineMs" }, "stream with deadlineMs: 0");
    await rejects(env, () => baton.complete("no-such-route", ASK), { kind: "config" }, "unknown route name");
    await upstream(env, t, { requests: 0 });
  },

  async "streaming delivers text events as they arrive, not at the end"(env) {
    const t = await script(env, "stream-live", [{ text: "one two three four five", chunkDelayMs: 100 }]);
    const baton = new env.Baton({ targets: { t: target(env, t) } });
    const t0 = performance.now();
    const events = await drain(baton.stream("t", ASK), t0);
    eq(textOf(events), "one two three four five", "streamed text");
    const texts = events.filter((e) => e.type === "text");
    const done = events.at(-1);
    eq(done.type, "done", "last event");
    eq(done.text, "one two three four five", "done.text");
    const lead = done.at - texts[0].at;
    if (lead < 300) fail(`the first text event arrived only ${lead.toFixed(0)} ms before done; with 100 ms between chunks it should arrive >= 300 ms earlier (events are being buffered)`, events);
    checkLegs(done.legs, [{ outcome: "ok" }], "legs");
    if (typeof done.legs[0].ttftMs !== "number") fail("a streamed leg should report ttftMs", done.legs);
    await upstream(env, t, { requests: 1, completed: 1 });
  },

  async "breaking out of for-await aborts the call upstream"(env) {
    const t = await script(env, "stream-break", [{ text: "a b c d e f g h", chunkDelayMs: 250 }]);
    const baton = new env.Baton({ targets: { t: target(env, t) } });
    const t0 = performance.now();
    const events = await drain(baton.stream("t", ASK), t0, { breakAfterText: true });
    eq(textOf(events), "a", "text before the break");
    const r = await upstream(env, t, { requests: 1, clientClosed: 1, completed: 0 });
    void r;
    if (performance.now() - t0 > 1500) fail("the upstream request was closed only when the stream would have ended anyway");
  },

  // Issue "Streams in four wire formats": one fallback chain across every provider protocol.
  async "a four-format fallback chain: 503 from OpenAI Chat, 529 from Anthropic, 500 from Responses, Gemini answers"(env) {
    for (const mode of ["complete", "stream"]) {
      const chat = await script(env, `chain-chat-${mode}`, [{ status: 503, message: "chat is down" }]);
      const anthropic = await script(env, `chain-anthropic-${mode}`, [{ status: 529, errorType: "overloaded_error", message: "Overloaded" }]);
      const responses = await script(env, `chain-responses-${mode}`, [{ status: 500, message: "responses failed" }]);
      const gemini = await script(env, `chain-gemini-${mode}`, [{ text: "Gemini saves the day", chunks: 4 }]);
      const baton = new env.Baton({
        targets: {
          chat: target(env, chat, { format: "openai_chat" }),
          anthropic: target(env, anthropic, { format: "anthropic_messages" }),
          responses: target(env, responses, { format: "openai_responses" }),
          gemini: target(env, gemini, { format: "gemini" }),
        },
        routes: { chain: { fallback: ["chat", "anthropic", "responses", "gemini"] } },
      });
      const seen = [];
      const options = { onEvent: (ev) => ev.type === "failover" && seen.push(`${ev.from}>${ev.to}:${ev.cause.status}`) };
      let out;
      if (mode === "complete") {
        out = await baton.complete("chain", ASK, options);
      } else {
        const events = await drain(baton.stream("chain", ASK, options), performance.now());
        eq(textOf(events), "Gemini saves the day", "streamed text from the last member");
        out = events.at(-1);
      }
      eq(out.text, "Gemini saves the day", `${mode}: text`);
      eq(out.target, "gemini", `${mode}: served by`);
      eq(seen.join(" "), "chat>anthropic:503 anthropic>responses:529 responses>gemini:500", `${mode}: failovers`);
      checkLegs(out.legs, [
        { target: "chat", outcome: "http", status: 503 },
        { target: "anthropic", outcome: "http", status: 529 },
        { target: "responses", outcome: "http", status: 500 },
        { target: "gemini", outcome: "ok" },
      ], `${mode}: legs`);
      for (const [id, format] of [[chat, "openai_chat"], [anthropic, "anthropic_messages"], [responses, "openai_responses"], [gemini, "gemini"]]) {
        const r = await upstream(env, id, { requests: 1 });
        eq(r.log?.[0]?.format, format, `${mode}: endpoint format for ${format}`);
      }
    }
  },

  async "each format answers whole and streamed, with usage"(env) {
    for (const format of ["openai_chat", "anthropic_messages", "openai_responses", "gemini"]) {
      const t = await script(env, `fmt-${format}`, [{ text: "Hello", chunks: 2, usage: { inputTokens: 7, outputTokens: 2 } }]);
      const baton = new env.Baton({ targets: { t: target(env, t, { format }) } });
      const out = await baton.complete("t", ASK);
      eq(out.text, "Hello", `${format} complete: text`);
      eq(out.target, "t", `${format} complete: target`);
      eq(out.usage?.inputTokens, 7, `${format} complete: usage.inputTokens`);
      eq(out.usage?.outputTokens, 2, `${format} complete: usage.outputTokens`);
      eq(out.finishReason, "stop", `${format} complete: finishReason`);
      const events = await drain(baton.stream("t", ASK), performance.now());
      eq(textOf(events), "Hello", `${format} stream: text`);
      eq(events.at(-1).type, "done", `${format} stream: last event`);
      eq(events.at(-1).usage?.outputTokens, 2, `${format} stream: usage.outputTokens`);
      const r = await upstream(env, t, { requests: 2, completed: 2 });
      for (const entry of r.log ?? []) {
        eq(entry.format, format, `${format}: endpoint the provider saw`);
        if (entry.keyInUrl) fail(`${format}: the API key was sent in the URL`, entry);
      }
    }
  },

  // Issue 14: one request in the request model, sent to each member in its provider's own shape.
  async "an image, toolChoice, topP and a JSON schema reach each format in its own shape across a failover"(env) {
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    const schema = { type: "object", properties: { animal: { type: "string" } }, required: ["animal"], additionalProperties: false };
    const chat = await script(env, "parts-chat", [{ status: 503, message: "chat is down" }]);
    const anthropic = await script(env, "parts-anthropic", [{ text: '{"animal":"cat"}' }]);
    const baton = new env.Baton({
      targets: { chat: target(env, chat, { format: "openai_chat" }), anthropic: target(env, anthropic, { format: "anthropic_messages" }) },
      routes: { vision: { fallback: ["chat", "anthropic"] } },
    });
    const request = {
      messages: [{ role: "user", content: [{ type: "text", text: "Which animal?" }, { type: "image", data: png, mediaType: "image/png" }] }],
      maxTokens: 64,
      topP: 0.5,
      tools: [{ name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } }],
      toolChoice: "none",
      responseFormat: { type: "json", schema, name: "animal" },
    };
    const out = await baton.complete("vision", request);
    eq(out.text, '{"animal":"cat"}', "text from the second member");
    eq(out.target, "anthropic", "served by");
    checkLegs(out.legs, [{ target: "chat", outcome: "http", status: 503 }, { target: "anthropic", outcome: "ok" }], "legs");

    // A part one member cannot carry is refused before anything is sent.
    const pdfByUrl = { messages: [{ role: "user", content: [{ type: "file", url: "https://x.test/a.pdf", mediaType: "application/pdf" }] }] };
    const [refused] = await rejects(env, () => baton.complete("vision", pdfByUrl), { kind: "config", path: "request.messages[0].content[0]" }, "a file by URL on a route with an openai_chat member");
    if (!refused.message.includes('target "chat" (openai_chat) cannot carry')) fail(`the refusal should name the target: ${refused.message}`);

    const sent = async (id) => (await upstream(env, id, { requests: 1 })).log[0].body;
    const chatBody = await sent(chat);
    sameJson(chatBody.messages[0].content, [
      { type: "text", text: "Which animal?" },
      { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } },
    ], "openai_chat: content parts");
    sameJson(chatBody.top_p, 0.5, "openai_chat: top_p");
    sameJson(chatBody.tool_choice, "none", "openai_chat: tool_choice");
    sameJson(chatBody.response_format, { type: "json_schema", json_schema: { name: "animal", schema } }, "openai_chat: response_format");
    const anthropicBody = await sent(anthropic);
    sameJson(anthropicBody.messages[0].content, [
      { type: "text", text: "Which animal?" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: png } },
    ], "anthropic_messages: content blocks");
    sameJson(anthropicBody.top_p, 0.5, "anthropic_messages: top_p");
    sameJson(anthropicBody.tool_choice, { type: "none" }, "anthropic_messages: tool_choice");
    sameJson(anthropicBody.output_config, { format: { type: "json_schema", schema } }, "anthropic_messages: output_config");
    eq(anthropicBody.response_format, undefined, "anthropic_messages: no OpenAI field");
  },

  // Issue 12: a stream cut after 40 tokens continues on the backup; the reader gets the text once,
  // and billedUsage is what the provider counted (both legs report usage on every chunk).
  async "resume: a stream cut after 40 tokens continues on the backup, full text once, billed as counted"(env) {
    const p = await script(env, "resume-cut", [{ text: FULL, stallAfterEvents: 40, stallMs: 100, usagePerEvent: true }]);
    const b = await script(env, "resume-cut-backup", [{ continueFrom: FULL, usagePerEvent: true }]);
    const baton = new env.Baton(resumeConfig(env, p, b));
    const seen = [];
    const events = await drain(baton.stream("main", ASK, { onEvent: (ev) => seen.push(ev) }), performance.now());
    const kept = shownAfter(40);
    eq(textOf(events), FULL, "text the reader assembled");
    if (events.some((ev) => ev.type === "reset")) fail("a continue must not reset the reader", events);
    const done = events.at(-1);
    eq(done?.type, "done", "last stream event");
    eq(done.text, FULL, "done.text");
    eq(done.target, "backup", "done.target");
    eq(safeJson(done.contributors), safeJson(["primary", "backup"]), "done.contributors");
    const resumes = seen.filter((ev) => ev.type === "resume");
    eq(resumes.length, 1, "resume events");
    const r = resumes[0];
    eq(`${r.mode} ${r.from}>${r.to} attempt ${r.attempt} kept ${r.keptChars}`, `continue primary>backup attempt 2 kept ${kept.length}`, "resume event");
    oneOf(r.cause?.kind, CUT_KINDS, "resume event cause.kind (the cut connection)");
    checkLegs(done.legs, [{ target: "primary", outcome: CUT_KINDS }, { target: "backup", outcome: "ok" }], "legs");
    eq(safeJson(done.legs[1].resumedFrom), safeJson({ attempt: 1, mode: "continue", keptChars: kept.length }), "legs[1].resumedFrom");
    eq(safeJson(done.legs[0].usage), safeJson({ inputTokens: 3, outputTokens: 40 }), "legs[0].usage (what the cut leg reported)");
    eq(safeJson(done.usage), safeJson({ inputTokens: 3, outputTokens: 60 }), "done.usage (the answer's)");
    const up = await upstream(env, p, { requests: 1 });
    const down = await upstream(env, b, { requests: 1, completed: 1 });
    const prefill = lastMessages(down)[0];
    eq(`${prefill?.role}: ${prefill?.content}`, `assistant: ${kept}`, "the backup's request ends with the prefill");
    const billed = { inputTokens: up.billed.inputTokens + down.billed.inputTokens, outputTokens: up.billed.outputTokens + down.billed.outputTokens };
    eq(billed.outputTokens, 60, "output tokens the provider counted (40 + 20)");
    eq(done.billedUsage?.inputTokens, billed.inputTokens, "done.billedUsage.inputTokens = the provider's billed input");
    eq(done.billedUsage?.outputTokens, billed.outputTokens, "done.billedUsage.outputTokens = the provider's billed output");
  },

  async "resume: a stall after 20 tokens past idleMs 400 continues on the backup"(env) {
    const p = await script(env, "resume-idle", [{ text: FULL, stallAfterEvents: 20, stallMs: 5000 }]);
    const b = await script(env, "resume-idle-backup", [{ continueFrom: FULL }]);
    const baton = new env.Baton(resumeConfig(env, p, b, { primaryTimeouts: { idleMs: 400 } }));
    const seen = [];
    const t0 = performance.now();
    const events = await drain(baton.stream("main", ASK, { onEvent: (ev) => seen.push(ev) }), t0);
    eq(textOf(events), FULL, "text the reader assembled");
    const done = events.at(-1);
    eq(done?.type, "done", "last stream event");
    eq(done.target, "backup", "done.target");
    checkLegs(done.legs, [{ target: "primary", outcome: "timeout", timeout: "idle" }, { target: "backup", outcome: "ok" }], "legs");
    const resume = seen.find((ev) => ev.type === "resume");
    eq(`${resume?.mode} ${resume?.cause?.kind} ${resume?.cause?.timeout} ${resume?.keptChars}`, `continue timeout idle ${shownAfter(20).length}`, "resume event");
    // The seam: the last primary text, then the idle limit, then the backup's first text.
    let length = 0;
    const seam = events.findIndex((ev) => ev.type === "text" && (length += ev.text.length) > shownAfter(20).length);
    if (seam < 1) fail("no text after the first 20 words", events);
    took(events[seam].at - events[seam - 1].at, 400, "from the last text before the stall to the continued text (idleMs 400)");
    await upstream(env, p, { requests: 1, clientClosed: 1 });
    await upstream(env, b, { requests: 1, completed: 1 });
  },

  // The library may take back what it showed: a backup that refuses the prefill (400) answers
  // afresh, behind a reset item. A whole answer never commits, so it simply fails over.
  async "resume: a backup that refuses prefill restarts behind a reset item; complete() just fails over"(env) {
    const fresh = "A fresh answer from the backup.";
    const p = await script(env, "resume-refused", [{ text: FULL, stallAfterEvents: 40, stallMs: 100 }]);
    const b = await script(env, "resume-refused-backup", [{ refusePrefill: true, text: fresh }]);
    const baton = new env.Baton(resumeConfig(env, p, b));
    const seen = [];
    const events = await drain(baton.stream("main", ASK, { onEvent: (ev) => seen.push(ev) }), performance.now());
    const kept = shownAfter(40);
    const resets = events.filter((ev) => ev.type === "reset");
    eq(resets.length, 1, "reset items");
    const at = events.indexOf(resets[0]);
    eq(textOf(events.slice(0, at)), kept, "text shown before the reset");
    eq(events[at + 1]?.type, "text", "the item right after the reset");
    const reset = resets[0];
    eq(`${reset.from}>${reset.to} ${reset.discardedChars}`, `primary>backup ${kept.length}`, "reset item");
    oneOf(reset.cause?.kind, CUT_KINDS, "reset item cause.kind (the primary's cut)");
    eq(shownText(events), fresh, "text after honouring the reset");
    const done = events.at(-1);
    eq(done?.type, "done", "last stream event");
    eq(done.text, fresh, "done.text");
    eq(done.target, "backup", "done.target");
    eq(safeJson(done.contributors), safeJson(["backup"]), "done.contributors");
    checkLegs(done.legs, [
      { target: "primary", outcome: CUT_KINDS },
      { target: "backup", outcome: "http", status: 400 },
      { target: "backup", outcome: "ok" },
    ], "legs");
    eq(done.legs[2].resumedFrom?.mode, "restart", "legs[2].resumedFrom.mode");
    eq(seen.filter((ev) => ev.type === "resume").map((ev) => ev.mode).join(), "continue,restart", "resume events");
    await upstream(env, p, { requests: 1 });
    const down = await upstream(env, b, { requests: 2 });
    eq(lastMessages(down).map((m) => m?.role).join(), "assistant,user", "the backup's requests end with: the prefill, then the user's turn");

    // complete(): the primary's body is cut before it is whole, so nothing was shown: a plain failover.
    const pw = await script(env, "resume-refused-whole", [{ text: FULL, dripMs: 200, stallAfterEvents: 5, stallMs: 100 }]);
    const bw = await script(env, "resume-refused-whole-backup", [{ refusePrefill: true, text: fresh }]);
    const whole = new env.Baton(resumeConfig(env, pw, bw));
    const wholeEvents = [];
    const out = await whole.complete("main", ASK, { onEvent: (ev) => wholeEvents.push(ev) });
    eq(out.text, fresh, "complete(): text");
    eq(safeJson(out.contributors), safeJson(["backup"]), "complete(): contributors");
    checkLegs(out.legs, [{ target: "primary", outcome: CUT_KINDS }, { target: "backup", outcome: "ok" }], "complete(): legs");
    eq(wholeEvents.filter((ev) => ev.type === "resume").length, 0, "complete(): resume events");
    await upstream(env, pw, { requests: 1 });
    const wholeDown = await upstream(env, bw, { requests: 1, completed: 1 });
    eq(lastMessages(wholeDown)[0]?.role, "user", "complete(): the backup's request ends with the user's turn");
  },

  // A reader that cannot take back what it showed (an AI SDK stream, a gateway's client) says
  // resettable: false: a continue still works, but where only a restart would do, the stream fails.
  async "resume: resettable false continues a cut stream, and fails rather than restart"(env) {
    const p = await script(env, "unresettable-cut", [{ text: FULL, stallAfterEvents: 40, stallMs: 100 }]);
    const b = await script(env, "unresettable-cut-backup", [{ continueFrom: FULL }]);
    const continued = await drain(new env.Baton(resumeConfig(env, p, b)).stream("main", ASK, { resettable: false }), performance.now());
    eq(textOf(continued), FULL, "continue: text the reader assembled");
    eq(continued.at(-1)?.target, "backup", "continue: done.target");
    await upstream(env, b, { requests: 1, completed: 1 });

    const fresh = "A fresh answer from the backup.";
    const pr = await script(env, "unresettable-refused", [{ text: FULL, stallAfterEvents: 40, stallMs: 100 }]);
    const br = await script(env, "unresettable-refused-backup", [{ refusePrefill: true, text: fresh }]);
    const events = [];
    let error;
    try {
      for await (const ev of new env.Baton(resumeConfig(env, pr, br)).stream("main", ASK, { resettable: false })) events.push(ev);
    } catch (e) {
      error = e;
    }
    // The stream fails with the break it could not recover from; the refused continue is a leg.
    checkError(env, error, { kind: CUT_KINDS, target: "primary" }, "refused prefill, resettable false");
    checkLegs(error.legs, [{ target: "primary", outcome: CUT_KINDS }, { target: "backup", outcome: "http", status: 400 }], "error.legs");
    if (events.some((ev) => ev.type === "reset")) fail("resettable false: the reader got a reset item", events);
    eq(textOf(events), shownAfter(40), "text shown before the failure");
    await upstream(env, br, { requests: 1 });

    const baton = new env.Baton(resumeConfig(env, pr, br));
    const bad = () => drain(baton.stream("main", ASK, { resettable: "no" }), performance.now());
    await rejects(env, bad, { kind: "config", path: "options.resettable" }, "stream() with resettable: \"no\"");
    await rejects(env, () => baton.complete("main", ASK, { resettable: false }), { kind: "config", path: "options.resettable" }, "complete() with resettable");
  },

  async "resume: a cut inside a tool call is never continued; the library restarts it"(env) {
    const args = '{"city":"Paris","unit":"celsius"}';
    const tools = [{ name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } }];
    const p = await script(env, "resume-tool", [{ toolCall: { name: "get_weather", arguments: args }, stallAfterEvents: 2, stallMs: 100 }]);
    const b = await script(env, "resume-tool-backup", [{ toolCall: { name: "get_weather", arguments: args } }]);
    const baton = new env.Baton(resumeConfig(env, p, b));
    const seen = [];
    const events = await drain(baton.stream("main", { ...ASK, tools }, { onEvent: (ev) => seen.push(ev) }), performance.now());
    const at = events.findIndex((ev) => ev.type === "reset");
    if (at < 0) fail("expected a reset item before the backup's tool call", events);
    const before = events.slice(0, at).filter((ev) => ev.type === "tool_call").map((ev) => ev.arguments).join("");
    if (!(before.length > 0 && before.length < args.length && args.startsWith(before))) fail(`expected part of the arguments before the cut, got ${safeJson(before)}`, events);
    const after = events.slice(at).filter((ev) => ev.type === "tool_call").map((ev) => ev.arguments).join("");
    eq(after, args, "tool-call arguments after the reset");
    const done = events.at(-1);
    eq(done?.type, "done", "last stream event");
    eq(done.toolCalls?.[0]?.arguments, args, "done.toolCalls[0].arguments");
    eq(done.finishReason, "tool_calls", "done.finishReason");
    eq(seen.filter((ev) => ev.type === "resume").map((ev) => ev.mode).join(), "restart", "resume events");
    await upstream(env, p, { requests: 1 });
    const down = await upstream(env, b, { requests: 1, completed: 1 });
    for (const [i, last] of lastMessages(down).entries()) {
      if (last?.role !== "user") fail(`backup request ${i} ends with a ${last?.role} message: a prefill was sent inside a tool call`, last);
    }
  },

  async "resume: not started when it cannot finish before the deadline; the break's error stands"(env) {
    const p = await script(env, "resume-late", [{ text: FULL, chunkDelayMs: 20, stallAfterEvents: 20, stallMs: 5000 }]);
    const b = await script(env, "resume-late-backup", [{ continueFrom: FULL }]);
    // The idle limit fires ~700 ms into a 1500 ms deadline: ~800 ms left, under minRemainingMs 1000.
    const baton = new env.Baton(resumeConfig(env, p, b, { primaryTimeouts: { idleMs: 300 }, deadlineMs: 1500 }));
    const seen = [];
    const events = [];
    const t0 = performance.now();
    let error;
    try {
      for await (const ev of baton.stream("main", ASK, { onEvent: (ev) => seen.push(ev) })) events.push({ ...ev, at: performance.now() - t0 });
    } catch (e) {
      error = e;
    }
    const ms = performance.now() - t0;
    if (!error) fail("expected the stream to fail with the primary's idle timeout", events);
    checkError(env, error, { kind: "timeout", timeout: "idle" }, "the break's failure");
    eq(textOf(events), shownAfter(20), "text delivered before the stall");
    took(ms - events.at(-1).at, 300, "from the last text to the idle timeout (no resume leg after it)");
    const warning = seen.find((ev) => ev.type === "warning");
    if (!warning || !/not resumed/.test(warning.message) || !/minRemainingMs/.test(warning.message)) fail("expected a warning event saying why the stream was not resumed", seen);
    eq(seen.filter((ev) => ev.type === "resume").length, 0, "resume events");
    if (error.legs !== undefined) checkLegs(error.legs, [{ target: "primary", outcome: "timeout", timeout: "idle" }], "error.legs");
    await upstream(env, p, { requests: 1, clientClosed: 1 });
    await upstream(env, b, { requests: 0 });
  },

  // Issue 13 in the small: a primary that answers 503 for 1.35 s, then recovers; 20 requests
  // 150 ms apart on one Baton, whose breaker opens after 2 failures for a 600 ms cooldown.
  // The provider's log is the judge: while the primary is down it sees the two failures that
  // open the breaker and then at most one probe per cooldown; every request during the outage
  // is served by the backup, and traffic is back on the primary within one cooldown (plus one
  // request interval) after it recovers.
  async "health: a flapping primary is skipped while down, probed once per cooldown, back within one cooldown"(env) {
    const COOLDOWN_MS = 600;
    const SPACING_MS = 150;
    const DOWN_MS = 1350;
    const REQUESTS = 20;
    const p = await script(env, "flap-primary", [{ status: 503, message: "primary down" }]);
    const b = await script(env, "flap-backup", [{ text: "from backup" }]);
    const baton = new env.Baton({
      targets: { primary: target(env, p), backup: target(env, b) },
      routes: { main: { fallback: ["primary", "backup"] } },
      health: { failures: 2, cooldownMs: COOLDOWN_MS },
    });
    const served = [];
    const skips = [];
    const states = new Set();
    let outage = null;
    let recoveredAt = null;
    const t0 = performance.now();
    for (let i = 0; i < REQUESTS; i++) {
      await sleep(Math.max(0, t0 + i * SPACING_MS - performance.now()));
      if (recoveredAt === null && i * SPACING_MS >= DOWN_MS) {
        // The primary recovers: keep the outage's log, then script it healthy (same baseUrl).
        outage = await upstream(env, p);
        await rescript(env, p, [{ text: "from primary" }]);
        recoveredAt = performance.now() - t0;
      }
      const at = performance.now() - t0;
      const out = await baton.complete("main", ASK, { onEvent: (ev) => ev.type === "skip" && skips.push(ev) });
      served.push({ at, by: out.target, text: out.text });
      if (recoveredAt === null) states.add(breaker(baton, "primary").state);
    }
    const timeline = served.map((s) => `${s.at.toFixed(0)}:${s.by}`).join(" ");
    for (const s of served) {
      if (s.at < recoveredAt) eq(s.by, "backup", `the request at ${s.at.toFixed(0)} ms, during the outage (${timeline})`);
    }
    // At the provider, while down: the two failures that open the breaker, then probes, each at
    // least one cooldown after the previous request.
    const starts = outage.log.map((e) => e.startedMs);
    if (starts.length < 2) fail(`the primary saw ${starts.length} request(s) during the outage; the breaker needs 2 failures to open`, outage.log);
    for (let i = 2; i < starts.length; i++) {
      const gap = starts[i] - starts[i - 1];
      if (gap < COOLDOWN_MS - EARLY_MS) fail(`primary request ${i + 1} came ${gap} ms after the previous one, inside the ${COOLDOWN_MS} ms cooldown (starts ${starts.join(", ")} ms)`);
    }
    const probesAllowed = Math.ceil((DOWN_MS - SPACING_MS) / COOLDOWN_MS);
    if (starts.length > 2 + probesAllowed) fail(`the primary saw ${starts.length} requests while down (at most 2 + ${probesAllowed} probes): ${timeline}`);
    if (!states.has("open")) fail(`baton.health() never showed the primary's breaker open during the outage (saw ${[...states].join(", ")})`);
    // The skip events: the primary, when it reopens, and the real failure behind it.
    if (skips.length === 0) fail("no skip event while the breaker was open", served);
    for (const ev of skips) {
      eq(ev.target, "primary", "skip event target");
      if (!(ev.reopensInMs >= 0 && ev.reopensInMs <= COOLDOWN_MS)) fail(`skip event reopensInMs ${ev.reopensInMs}, expected 0..${COOLDOWN_MS}`, ev);
      eq(ev.cause?.status, 503, "skip event cause.status");
      if (typeof ev.reason !== "string" || !ev.reason.includes("circuit breaker")) fail("the skip event's reason should name the circuit breaker", ev);
    }
    // Every request the backup served either tried the primary during the outage or skipped it.
    eq(skips.length, served.filter((s) => s.by === "backup").length - starts.length, "skip events");
    // Back on the primary within one cooldown, and it stays there.
    const back = served.find((s) => s.at >= recoveredAt && s.by === "primary");
    if (!back) fail(`traffic never came back to the primary after it recovered at ${recoveredAt.toFixed(0)} ms: ${timeline}`);
    const backAfter = back.at - recoveredAt;
    if (backAfter > COOLDOWN_MS + SPACING_MS + SLACK_MS) fail(`back on the primary ${backAfter.toFixed(0)} ms after it recovered; expected within one cooldown (${COOLDOWN_MS} ms) plus one request interval: ${timeline}`);
    for (const s of served.filter((s) => s.at > back.at)) eq(s.by, "primary", `the request at ${s.at.toFixed(0)} ms, after recovery (${timeline})`);
    const h = breaker(baton, "primary");
    eq(h.state, "closed", "the primary's breaker at the end");
    eq(h.consecutiveFailures, 0, "consecutiveFailures at the end");
    const healed = await upstream(env, p);
    eq(healed.requests, served.filter((s) => s.by === "primary").length, "primary requests after recovery (each one served)");
    await upstream(env, b, { requests: served.filter((s) => s.by === "backup").length });
  },

  // A bare retry has nothing else to try: on an open breaker it fails at once, with the failure
  // that opened it, and sends nothing.
  async "health: a bare retry on an open target fails fast with the last real error, no request"(env) {
    const t = await script(env, "open-retry", [{ status: 503, message: "down for maintenance" }]);
    const baton = new env.Baton({
      targets: { t: target(env, t) },
      routes: { solo: { retry: "t", attempts: 3, backoff: { initialMs: 10, jitter: "none" } } },
      health: { failures: 1, cooldownMs: 60000 },
    });
    // The first call follows its own route: 3 attempts, whatever its first failure taught.
    await rejects(env, () => baton.complete("solo", ASK), { kind: "http", status: 503 }, "the call that opens the breaker");
    await upstream(env, t, { requests: 3 });
    const open = breaker(baton, "t");
    eq(open.state, "open", "breaker after 3 failures");
    eq(open.lastFailure?.status, 503, "health().lastFailure.status");
    const skips = [];
    const [e, ms] = await rejects(env, () => baton.complete("solo", ASK, { onEvent: (ev) => ev.type === "skip" && skips.push(ev) }), { kind: "http", status: 503 }, "a bare retry on an open breaker");
    if (!e.message.includes("down for maintenance")) fail(`the error should be the provider's last real failure, got ${JSON.stringify(e.message)}`);
    if (ms > 100) fail(`took ${ms.toFixed(0)} ms; an open breaker with nothing else to try should fail at once (< 100 ms)`);
    eq(skips.map((ev) => `${ev.target} ${ev.cause?.status}`).join(), "t 503", "skip events");
    if (!(skips[0].reopensInMs > 50000 && skips[0].reopensInMs <= 60000)) fail(`skip reopensInMs ${skips[0].reopensInMs}, expected just under 60000`);
    // The stream path fails the same way.
    let streamed;
    try {
      await drain(baton.stream("solo", ASK), performance.now());
    } catch (err) {
      streamed = err;
    }
    checkError(env, streamed, { kind: "http", status: 503 }, "a streamed bare retry on an open breaker");
    await upstream(env, t, { requests: 3 });
  },

  ...agents,
  // Hedging (issue 30): a silent primary is raced by the backup; the first to show content wins,
  // and the other's socket closes at once.
  async "hedge: a primary silent for 3 s is raced after 300 ms; the backup's stream wins and the primary's socket closes"(env) {
    const p = await script(env, "hedge-primary", [{ firstChunkDelayMs: 3000, text: "too late" }]);
    const b = await script(env, "hedge-backup", [{ text: "from backup" }]);
    const baton = new env.Baton({
      targets: { primary: target(env, p), backup: target(env, b) },
      routes: { main: { fallback: ["primary", "backup"], hedge: { afterMs: 300 } } },
    });
    const seen = [];
    const t0 = performance.now();
    const events = await drain(baton.stream("main", ASK, { onEvent: (ev) => seen.push(ev) }), t0);
    const ms = performance.now() - t0;
    eq(shownText(events), "from backup", "streamed text, shown once");
    const done = events.at(-1);
    eq(done.target, "backup", "done.target");
    took(ms, 300, "the hedge's answer", { hi: 300 + SLACK_MS + 200 });
    checkLegs(done.legs, [{ target: "primary", outcome: "lost" }, { target: "backup", outcome: "ok" }], "legs");
    const hedge = seen.find((ev) => ev.type === "hedge");
    if (!hedge) fail("no hedge event", seen);
    eq(`${hedge.from} ${hedge.to} ${hedge.attempt} ${hedge.threshold}`, "primary backup 2 fixed", "the hedge event");
    if (!(hedge.afterMs >= 300 - EARLY_MS)) fail(`hedge.afterMs ${hedge.afterMs}, expected about 300`);
    eq(breaker(baton, "primary").consecutiveFailures, 0, "a lost leg is no failure for the primary's breaker");
    await upstream(env, p, { requests: 1, clientClosed: 1, completed: 0 });
    await upstream(env, b, { requests: 1, completed: 1, clientClosed: 0 });
  },

  async "hedge: the primary answers first after the hedge started; the hedge is aborted and the answer is whole"(env) {
    const p = await script(env, "hedge-first", [{ headersDelayMs: 600, text: "from primary" }]);
    const b = await script(env, "hedge-late", [{ headersDelayMs: 3000, text: "from backup" }]);
    const baton = new env.Baton({
      targets: { primary: target(env, p), backup: target(env, b) },
      routes: { main: { fallback: ["primary", "backup"], hedge: { afterMs: 200 } } },
    });
    const t0 = performance.now();
    const out = await baton.complete("main", ASK);
    took(performance.now() - t0, 600, "the primary's answer");
    eq(out.text, "from primary", "answer text");
    checkLegs(out.legs, [{ target: "backup", outcome: "lost" }, { target: "primary", outcome: "ok" }], "legs");
    await upstream(env, p, { requests: 1, completed: 1 });
    await upstream(env, b, { requests: 1, clientClosed: 1, completed: 0 });
  },

  async "hedge through the gateway: the winner's answer, x-baton-attempts 2 (both legs sent), the loser's socket closed"(env) {
    if (typeof env.createGateway !== "function") fail("the runner passed no createGateway");
    const slow = [{ headersDelayMs: 3000, text: "too late" }];
    const p = await script(env, "gw-hedge-primary", slow);
    const b = await script(env, "gw-hedge-backup", [{ text: "from backup" }]);
    // The answer's text: the message of a whole answer, or every chunk's delta of a stream.
    const answerText = (body, stream) => stream
      ? body.split("\n").filter((l) => l.startsWith("data: {")).map((l) => JSON.parse(l.slice(6)).choices[0]?.delta?.content ?? "").join("")
      : JSON.parse(body).choices[0].message.content;
    // The backup wins, then the primary (its first word at 400 ms, after the hedge went out at
    // 200 ms): either way two requests were sent, and a stream says so when it commits.
    const races = [
      { winner: "backup", primary: slow, backup: [{ text: "from backup" }], at: 200 },
      { winner: "primary", primary: [{ firstChunkDelayMs: 400, text: "from primary" }], backup: slow, at: 400 },
    ];
    for (const race of races) {
      // A gateway of its own: the primary's times past 200 ms would soon mark it slow.
      const gateway = env.createGateway({
        targets: { primary: target(env, p), backup: target(env, b) },
        routes: { main: { fallback: ["primary", "backup"], hedge: { afterMs: 200 } } },
        gateway: { apiKeys: ["gw-test-key"] },
      });
      for (const stream of [false, true]) {
        await rescript(env, p, race.primary);
        await rescript(env, b, race.backup);
        const t0 = performance.now();
        const res = await gateway.fetch(new Request("http://gateway.test/v1/chat/completions", {
          method: "POST",
          headers: { "content-type": "application/json", authorization: "Bearer gw-test-key" },
          body: JSON.stringify({ model: "main", stream, messages: [{ role: "user", content: "Say hello." }] }),
        }));
        const body = await res.text();
        const what = `${stream ? "a streamed gateway call" : "a gateway call"} won by the ${race.winner}`;
        eq(res.status, 200, `${what}: status`);
        eq(res.headers.get("x-baton-target"), race.winner, `${what}: x-baton-target`);
        eq(res.headers.get("x-baton-attempts"), "2", `${what}: x-baton-attempts`);
        eq(answerText(body, stream), `from ${race.winner}`, `${what}: the answer`);
        took(performance.now() - t0, race.at, what, { hi: race.at + SLACK_MS + 200 });
        const [winner, loser] = race.winner === "backup" ? [b, p] : [p, b];
        await upstream(env, loser, { requests: 1, clientClosed: 1, completed: 0 });
        await upstream(env, winner, { requests: 1, completed: 1 });
      }
    }
  },
};

// The helpers the hostile-provider scenarios (hostile.mjs) share with these.
export { script, upstream, requests, sleep, fail, safeJson, eq, sameJson, checkError, rejects, errorDetail, target, ASK, drain, textOf };
