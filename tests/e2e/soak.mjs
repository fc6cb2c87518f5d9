// The soak of issue 41: many clients at once through a gateway (or a Baton in this process)
// against the scripted provider injecting faults, every request checked. `make test` runs 300
// requests per runtime and asserts the invariants (soak.test.mjs); `make soak` runs thousands per
// runtime beside Portkey's gateway and LiteLLM proxy and writes the table (bench/soak.mjs).
//
// Each request asks for a text that only it can get back: its last user message is a nonce in
// words (`n7i42-0 n7i42-1 …`) and the provider's steps `echo` it, so an answer is right only when it
// is that text, whole and once. The provider answers from one scenario whose steps are a random
// fault mix (FAULTS), consumed in arrival order by attempts of any request; the provider's log
// of the scenario (each request's body, so its nonce, with when it started and ended and how)
// is then matched to what each client saw:
// - exact: a 200 whose text is the nonce's text; error: a JSON error (status 4xx/5xx with an
//   `error` body, or an error event in a stream, or a BatonError);
// - truncated: a success whose text is a strict prefix of the nonce's (a stream that ended, with
//   or without `[DONE]`, short of the answer); garbled: a text that is not a prefix of the nonce's
//   (duplicated, interleaved or another request's words); cut: a connection closed without an
//   answer or error, or an error that is not JSON;
// - hang: no end within the deadline plus HANG_MARGIN_MS;
// - leaked: a provider request of the run still open once every client is done and SETTLE_MS passed
//   (the first 10 listed in `leaks`, with their fault and what their client saw);
// - attempts: provider requests carrying the nonce against `x-baton-attempts` (a Baton: its legs);
// - abort latency: for a streaming client that disconnects after its first text delta, how long
//   after the disconnect each of its provider requests still open then ended, and whether one of
//   them ran on to its own end instead of being closed (`ranOn`);
// - bad input (3%): must be refused with a JSON 4xx (a BatonError kind "config"), nothing sent.
import { putScenario } from "./provider.mjs";

/** The llm-baton deadline of every soak request, and the attempt limits that bound a stall. */
export const DEADLINE_MS = 6000;
const TIMEOUTS = { headersMs: 1500, firstTokenMs: 1500, idleMs: 1000 };
/** A request still running this long after its deadline is a hang. */
export const HANG_MARGIN_MS = 4000;
/** How long the provider's requests get to end after the last client is done. */
export const SETTLE_MS = 3000;
const WORDS = 12;
/** A disconnect whose upstream took longer than this to end is listed with its faults (`slowAborts`). */
const SLOW_ABORT_MS = 250;

/**
 * The fault mix: [name, weight, step]. Mid-answer faults (`stallAfterEvents`) cut or stall a
 * stream after 3 content events and a whole answer after 3 of its 10 pieces (`dripMs`). A healthy
 * stream takes about 240 ms, so a client that disconnects after its first text leaves its
 * upstream request running for the gateway to abort.
 */
export const FAULTS = [
  ["ok", 60, { echo: true, chunkDelayMs: 20 }],
  ["503", 5, { status: 503 }],
  ["429 with Retry-After", 4, { status: 429, headers: { "retry-after": "1" } }],
  ["reset before headers", 4, { reset: true }],
  ["reset mid-stream", 4, { echo: true, chunkDelayMs: 5, dripMs: 100, stallAfterEvents: 3, stallMs: 0 }],
  ["stall before headers", 3, { echo: true, headersDelayMs: 600_000 }],
  ["stall mid-stream", 3, { echo: true, chunkDelayMs: 5, dripMs: 100, stallAfterEvents: 3 }],
  ["malformed frames", 3, { raw: { chunks: ['data: {"id":"x","choices":[{"index":0,"delta":{"content":\n\n', "data: not json\n\n"] } }],
  ["error event mid-stream", 3, { echo: true, chunkDelayMs: 5, streamError: { afterEvents: 2 } }],
  ["slow trickle", 11, { echo: true, chunkDelayMs: 40, dripMs: 500 }],
];

/** A seeded uniform source (mulberry32): the same seed, the same run (bench/tail.mjs's tail too). */
export function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` faults drawn from FAULTS, then a healthy one (the last step repeats). */
export function soakFaults(rng, count) {
  const total = FAULTS.reduce((sum, [, weight]) => sum + weight, 0);
  const faults = [];
  for (let i = 0; i < count; i++) {
    let pick = rng() * total;
    faults.push(FAULTS.find(([, weight]) => (pick -= weight) < 0) ?? FAULTS[0]);
  }
  faults.push(FAULTS[0]);
  return faults;
}

/** llm-baton's route for the soak: a primary tried twice, then a backup, both on the provider's scenario. */
export function soakConfig(upstreamBaseUrl) {
  const target = { format: "openai_chat", baseUrl: upstreamBaseUrl, model: "soak-model", apiKey: "sk-soak-not-a-secret", timeouts: TIMEOUTS };
  return {
    targets: { p: target, b: { ...target } },
    routes: { chat: { fallback: [{ retry: "p", attempts: 2 }, "b"] } },
    deadlineMs: DEADLINE_MS,
  };
}

/** The request's words: its nonce, numbered, so a repeat or another request's word shows. */
const nonceText = (run, i) => Array.from({ length: WORDS }, (_, k) => `n${run}i${i}-${k}`).join(" ");
const NONCE = /n(\d+)i(\d+)-0\b/;

/** Bad input an OpenAI-compatible endpoint must refuse with a JSON 4xx, each with the nonce where it fits. */
const BAD_BODIES = [
  (text) => `{"model":"chat","messages":[{"role":"user","content":"${text}"}`,
  (text) => JSON.stringify({ model: "chat", messages: text }),
  (text) => JSON.stringify({ model: "chat", prompt: text }),
  (text) => JSON.stringify({ model: "chat", messages: [{ role: "wizard", content: text }] }),
  (text) => JSON.stringify({ model: "chat", messages: [{ role: "user", content: text }], temperature: "hot" }),
];
/** The same for a Baton: each must be a BatonError kind "config". */
const BAD_REQUESTS = [
  (text) => ({ messages: text }),
  (text) => ({ messages: [{ role: "wizard", content: text }] }),
  (text) => ({ messages: [{ role: "user", content: text }], temperature: 7 }),
  (text) => ({ messages: [{ role: "user", content: text }], maxTokens: -1 }),
];

/**
 * A client of an OpenAI-compatible gateway at `url` (`/v1/chat/completions` is appended), with
 * `model` and `headers` for its route.
 */
export function httpClient({ url, model = "chat", headers = {} }) {
  const call = (plan) => limited(plan.limitMs, async (controller, out) => {
    const { text, stream, disconnect, bad } = plan;
    try {
      const body = bad ?? JSON.stringify({ model, stream, messages: [{ role: "user", content: text }], max_tokens: 100 });
      const res = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body, signal: controller.signal });
      const attempts = res.headers.get("x-baton-attempts");
      out.attempts = attempts === null ? null : Number(attempts);
      out.status = res.status;
      const json = /application\/json/.test(res.headers.get("content-type") ?? "");
      if (res.status !== 200 || !stream) {
        const raw = await res.text();
        let parsed = null;
        try { parsed = JSON.parse(raw); } catch {}
        if (res.status !== 200) return { ...out, kind: json && parsed?.error ? "error" : "cut" };
        const content = parsed?.choices?.[0]?.message?.content;
        return { ...out, ...judge(typeof content === "string" ? content : null, text, true) };
      }
      let got = "";
      let done = false;
      let errorEvent = false;
      let buffered = "";
      const decoder = new TextDecoder();
      for await (const chunk of res.body) {
        buffered += decoder.decode(chunk, { stream: true });
        let end;
        while ((end = buffered.indexOf("\n\n")) >= 0) {
          const event = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          for (const line of event.split("\n")) {
            if (!line.startsWith("data:")) continue;
            const data = line.slice(5).trim();
            if (data === "[DONE]") { done = true; continue; }
            let parsed;
            try { parsed = JSON.parse(data); } catch { continue; }
            if (parsed?.error) errorEvent = true;
            const delta = parsed?.choices?.[0]?.delta?.content;
            if (typeof delta === "string") got += delta;
          }
        }
        if (disconnect && got.length > 0 && !done && !errorEvent) {
          out.disconnectedAt = performance.now();
          break;
        }
      }
      if (out.disconnectedAt !== null) {
        controller.abort();
        return { ...out, kind: "disconnected" };
      }
      if (errorEvent) return { ...out, kind: text.startsWith(got) ? "error" : "garbled" };
      return { ...out, ...judge(got, text, done) };
    } catch (e) {
      if (controller.signal.aborted) throw e;
      return { ...out, kind: "cut", detail: String(e?.cause?.code ?? e?.message ?? e) };
    }
  });
  return { call, bad: BAD_BODIES };
}

/** A Baton in this process, called on `route`; bad input goes in as a malformed ChatRequest. */
export function batonClient({ baton, BatonError, route = "chat" }) {
  const call = (plan) => limited(plan.limitMs, async (controller, out) => {
    const { text, stream, disconnect, bad } = plan;
    try {
      const request = bad ?? { messages: [{ role: "user", content: text }], maxTokens: 100 };
      if (!stream) {
        const done = await baton.complete(route, request, { signal: controller.signal });
        out.attempts = done.legs.length;
        return { ...out, status: 200, ...judge(done.text, text, true) };
      }
      let got = "";
      for await (const event of baton.stream(route, request, { signal: controller.signal })) {
        if (event.type === "text") got += event.text;
        if (event.type === "done") {
          out.attempts = event.legs.length;
          return { ...out, status: 200, ...judge(got, text, event.text === got) };
        }
        if (disconnect && got.length > 0) {
          out.disconnectedAt = performance.now();
          break;
        }
      }
      if (out.disconnectedAt !== null) {
        controller.abort();
        return { ...out, kind: "disconnected" };
      }
      return { ...out, kind: "truncated" };
    } catch (e) {
      if (controller.signal.aborted) throw e;
      if (!(e instanceof BatonError)) return { ...out, kind: "cut", detail: String(e?.message ?? e) };
      out.attempts = e.legs?.length ?? 0;
      return { ...out, status: e.kind === "config" ? 400 : 502, kind: "error", batonKind: e.kind };
    }
  });
  return { call, bad: BAD_REQUESTS };
}

/**
 * Runs one request, `attempt(controller, out)`, with `controller` aborted after `limitMs`: a
 * request that has not ended by then is a hang (what `attempt` throws once it aborted).
 */
async function limited(limitMs, attempt) {
  const controller = new AbortController();
  let hung = false;
  const timer = setTimeout(() => { hung = true; controller.abort(); }, limitMs);
  const out = { attempts: null, disconnectedAt: null };
  try {
    return await attempt(controller, out);
  } catch (e) {
    if (hung) return { ...out, kind: "hang" };
    return { ...out, kind: "cut", detail: String(e?.message ?? e) };
  } finally {
    clearTimeout(timer);
  }
}

/** A success's text against the nonce's: exact, truncated (a strict prefix) or garbled. */
function judge(got, want, finished) {
  if (got === null) return { kind: "garbled", detail: "a 200 without a text answer" };
  if (got === want) return { kind: finished ? "exact" : "truncated" };
  if (want.startsWith(got)) return { kind: "truncated" };
  return { kind: "garbled", detail: `${JSON.stringify(got.slice(0, 80))}` };
}

/** The provider's clock against performance.now(): the offset with the least round trip of a few probes. */
async function providerClock(providerUrl, scenario) {
  await putScenario(providerUrl, scenario, [{}]);
  let best = null;
  for (let i = 0; i < 5; i++) {
    const t1 = performance.now();
    const res = await fetch(`${providerUrl}/s/${scenario}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"model":"m","messages":[{"role":"user","content":"clock"}]}' });
    await res.arrayBuffer();
    const t2 = performance.now();
    const log = (await (await fetch(`${providerUrl}/_scenarios/${scenario}`)).json()).log;
    const started = log[log.length - 1].startedMs;
    if (best === null || t2 - t1 < best.rtt) best = { rtt: t2 - t1, offset: started - (t1 + t2) / 2 };
  }
  return best;
}

const tally = () => ({ requests: 0, exact: 0, error: 0, truncated: 0, garbled: 0, cut: 0, hang: 0, disconnected: 0, ranOn: 0, bad: 0, badRefused: 0, leaked: 0, attemptChecks: 0, attemptMismatches: 0, providerRequests: 0, countedAttempts: 0, abortMs: [], sentAfterBadInput: 0, examples: [], slowAborts: [], leaks: [] });

/**
 * Runs `requests` requests from `clients` concurrent clients through `client` (httpClient or
 * batonClient), against the provider's scenario `scenario` (the route's targets point at
 * `${providerUrl}/s/${scenario}/v1`), in chunks of `chunk`: each chunk scripts the scenario
 * afresh, then waits for every provider request to end before reading its log. `onChunk(total,
 * done)` runs after each chunk (the bench samples RSS there). Resolves to the tally.
 */
export async function runSoak({ providerUrl, scenario, client, requests, clients = 32, chunk = 1000, seed = 41, settleMs = SETTLE_MS, onChunk }) {
  const rng = random(seed);
  const total = tally();
  const run = seed;
  for (let first = 0; first < requests; first += chunk) {
    const count = Math.min(chunk, requests - first);
    const faults = soakFaults(rng, count * 3);
    await putScenario(providerUrl, scenario, faults.map(([, , step]) => step));
    const clock = await providerClock(providerUrl, `${scenario}-clock`);
    const plans = Array.from({ length: count }, (_, k) => {
      const i = first + k;
      const bad = rng() < 0.03;
      const stream = rng() < 0.5;
      const disconnect = !bad && stream && rng() < 0.1;
      return { i, text: nonceText(run, i), stream, disconnect, bad, pick: Math.floor(rng() * 1000) };
    });
    const results = new Array(count);
    let next = 0;
    const limitMs = DEADLINE_MS + HANG_MARGIN_MS;
    await Promise.all(Array.from({ length: clients }, async () => {
      while (next < count) {
        const k = next++;
        const plan = plans[k];
        const bad = plan.bad ? client.bad[plan.pick % client.bad.length](plan.text) : null;
        results[k] = await client.call({ ...plan, bad, limitMs });
      }
    }));
    const until = performance.now() + settleMs;
    let report;
    for (;;) {
      report = await (await fetch(`${providerUrl}/_scenarios/${scenario}`)).json();
      if (report.open === 0 || performance.now() > until) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const byRequest = new Map();
    for (const entry of report.log) {
      const m = NONCE.exec(JSON.stringify(entry.body));
      const i = m && Number(m[1]) === run ? Number(m[2]) : -1;
      if (!byRequest.has(i)) byRequest.set(i, []);
      byRequest.get(i).push(entry);
    }
    total.providerRequests += report.log.length;
    total.leaked += report.open;
    const outcomes = new Map(plans.map((plan, k) => [plan.i, results[k].kind]));
    for (const e of report.log.filter((e) => e.outcome === "open").slice(0, 10 - total.leaks.length)) {
      const m = NONCE.exec(JSON.stringify(e.body));
      total.leaks.push({ fault: faults[Math.min(e.step, faults.length - 1)][0], client: m ? outcomes.get(Number(m[2])) : null, startedMs: e.startedMs, headersMs: e.headersMs, settledAfterMs: settleMs });
    }
    for (let k = 0; k < count; k++) {
      const plan = plans[k];
      const r = results[k];
      const upstream = byRequest.get(plan.i) ?? [];
      total.requests += 1;
      if (r.attempts !== null) total.countedAttempts += r.attempts;
      const example = (what) => { if (total.examples.length < 10) total.examples.push({ what, stream: plan.stream, bad: plan.bad, ...r, upstream: upstream.map((e) => e.outcome) }); };
      if (plan.bad) {
        total.bad += 1;
        const refused = r.kind === "error" && r.status >= 400 && r.status < 500;
        if (refused) total.badRefused += 1;
        else example("bad input not refused with a JSON 4xx");
        if (upstream.length > 0) { total.sentAfterBadInput += 1; example("bad input reached the provider"); }
        continue;
      }
      total[r.kind] += 1;
      if (["truncated", "garbled", "cut", "hang"].includes(r.kind)) example(r.kind);
      if (r.kind === "disconnected") {
        const at = r.disconnectedAt + clock.offset;
        const late = upstream.filter((e) => e.endedMs === null || e.endedMs > at).map((e) => (e.endedMs ?? Infinity) - at);
        if (late.length > 0) {
          // Aborted upstream requests end `client_closed`; one that ran on to its scripted end
          // (or its stall's) was not aborted, or the abort came after it ended.
          if (upstream.some((e) => (e.endedMs === null || e.endedMs > at) && e.outcome !== "client_closed")) total.ranOn += 1;
          const ms = Math.max(0, ...late);
          total.abortMs.push(ms);
          if (ms > SLOW_ABORT_MS && total.slowAborts.length < 10) total.slowAborts.push({ ms: Math.round(ms), faults: upstream.map((e) => faults[Math.min(e.step, faults.length - 1)][0]) });
        }
      } else if (r.attempts !== null && r.kind !== "hang") {
        total.attemptChecks += 1;
        if (upstream.length !== r.attempts) { total.attemptMismatches += 1; example(`${upstream.length} provider requests, ${r.attempts} attempts counted`); }
      }
    }
    await onChunk?.(total, first + count);
  }
  return total;
}

/**
 * p50, p99 and max of the disconnect-to-upstream-end latencies (ms) that ended, or nulls without
 * any, and how many never ended (`open`: an upstream request still open when the run settled).
 */
export function abortStats(ms) {
  const s = ms.filter(Number.isFinite).sort((a, b) => a - b);
  const q = (p) => (s.length ? s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)] : null);
  return { n: s.length, open: ms.length - s.length, p50: q(0.5), p99: q(0.99), max: s.length ? s[s.length - 1] : null };
}
