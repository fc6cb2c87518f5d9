// A long tail (issue 30): two members whose time to first token is heavy-tailed (p50 about
// 300 ms, 3% of answers 0.8 to 4 s, so p99 about 3 s), the first also slow (2 to 3 s) for 60
// calls mid-run. 1,000 streamed calls per route, 10 at a time, each route on its own provider
// scenarios and its own Baton, all routes at once: no hedge, a sequential fallback with a
// first-token limit (what the peers can do), a fixed `afterMs`, a learned percentile, and
// `fastest`. Prints p50/p95/p99 time to first token and the extra upstream requests (legs beyond
// one per call: hedges and failovers), and writes bench/.work/tail.json.
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Baton } from "llm-baton";
import { startProvider, script, quantile, loadNow, KEY, MODEL, PROMPT } from "./lib/common.mjs";
import { random } from "../tests/e2e/soak.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));
const CALLS = 1000;
const CONCURRENCY = 10;
const STEPS = 3000;
const SLOW = { from: 400, calls: 60 };
const ASK = { messages: [{ role: "user", content: PROMPT }], maxTokens: 16 };
const ROUTES = {
  "no hedge": { fallback: ["a", "b"] },
  "sequential fallback, firstTokenMs 1000 (the peers)": { fallback: ["a", "b"] },
  "hedge afterMs 600": { fallback: ["a", "b"], hedge: { afterMs: 600 } },
  "hedge afterPercentile 95": { fallback: ["a", "b"], hedge: { afterPercentile: 95, afterMs: 1000 } },
  "fastest [a, b]": { fastest: ["a", "b"] },
};
const loadAtStart = loadNow();

/** Time to first token: log-normal around 300 ms, and 3% of answers 0.8 to 4 s. */
function firstTokenMs(rand) {
  if (rand() < 0.03) return Math.round(800 + rand() * 3200);
  const z = Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  return Math.round(300 * Math.exp(0.25 * z));
}

const steps = (seed, delay) => {
  const rand = random(seed);
  return Array.from({ length: STEPS }, () => ({ text: "Hello from the tail.", firstChunkDelayMs: delay(rand) }));
};
const normal = (seed) => steps(seed, firstTokenMs);
const slow = (seed) => steps(seed, (rand) => Math.round(2000 + rand() * 1000));

async function rescript(providerUrl, id, list) {
  const res = await fetch(`${providerUrl}/_scenarios/${id}`, { method: "PUT", body: JSON.stringify({ steps: list }) });
  if (!res.ok) throw new Error(`PUT /_scenarios/${id}: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
}

async function run(providerUrl, name, route, index) {
  const seed = 1000 * (index + 1);
  const a = await script(providerUrl, "tail-a", normal(seed + 1));
  const b = await script(providerUrl, "tail-b", normal(seed + 2));
  const target = (id, timeouts) => ({ format: "openai_chat", baseUrl: `${providerUrl}/s/${id}/v1`, model: MODEL, apiKey: KEY, ...(timeouts ? { timeouts } : {}) });
  const limited = name.startsWith("sequential");
  const baton = new Baton({ targets: { a: target(a, limited ? { firstTokenMs: 1000 } : undefined), b: target(b) }, routes: { chat: route } });
  const results = [];
  let started = 0;
  let warnings = 0;
  const worker = async () => {
    while (started < CALLS) {
      const i = started++;
      if (i === SLOW.from) await rescript(providerUrl, a, slow(seed + 3));
      if (i === SLOW.from + SLOW.calls) await rescript(providerUrl, a, normal(seed + 4));
      const t0 = performance.now();
      let ttft = null;
      let done = null;
      const onEvent = (ev) => {
        if (ev.type === "warning") warnings += 1;
      };
      for await (const item of baton.stream("chat", ASK, { onEvent })) {
        if (item.type === "text" && ttft === null) ttft = performance.now() - t0;
        if (item.type === "done") done = item;
      }
      results.push({ i, ttft, legs: done.legs.length, lost: done.legs.filter((l) => l.outcome === "lost").length, target: done.target });
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const ttfts = results.map((r) => r.ttft).sort((x, y) => x - y);
  const extra = results.reduce((n, r) => n + r.legs - 1, 0);
  const slowPhase = results.filter((r) => r.i >= SLOW.from && r.i < SLOW.from + SLOW.calls).map((r) => r.ttft).sort((x, y) => x - y);
  return {
    name,
    route,
    calls: results.length,
    p50: Math.round(quantile(ttfts, 0.5)),
    p95: Math.round(quantile(ttfts, 0.95)),
    p99: Math.round(quantile(ttfts, 0.99)),
    max: Math.round(ttfts.at(-1)),
    slowPhaseP50: Math.round(quantile(slowPhase, 0.5)),
    extraRequests: extra,
    extraShare: extra / results.length,
    lost: results.reduce((n, r) => n + r.lost, 0),
    servedByB: results.filter((r) => r.target === "b").length,
    warnings,
  };
}

const provider = await startProvider();
let runs;
const t0 = performance.now();
try {
  runs = await Promise.all(Object.entries(ROUTES).map(([name, route], i) => run(provider.url, name, route, i)));
} finally {
  provider.stop();
}
const base = runs[0];
console.log(`long tail: ${CALLS} streamed calls per route, ${CONCURRENCY} at a time; a slow (2-3 s) for calls ${SLOW.from}-${SLOW.from + SLOW.calls - 1}; ${((performance.now() - t0) / 1000).toFixed(0)} s`);
console.log(["route", "p50", "p95", "p99", "p99 vs no hedge", "extra requests", "slow phase p50", "served by b"].join("\t"));
for (const r of runs) {
  console.log([r.name, `${r.p50} ms`, `${r.p95} ms`, `${r.p99} ms`, `${(base.p99 / r.p99).toFixed(1)}x lower`, `${r.extraRequests} (${(100 * r.extraShare).toFixed(1)}%)`, `${r.slowPhaseP50} ms`, r.servedByB].join("\t"));
}
mkdirSync(`${here}.work`, { recursive: true });
writeFileSync(`${here}.work/tail.json`, JSON.stringify({ node: process.version, load: [loadAtStart, loadNow()], calls: CALLS, concurrency: CONCURRENCY, slow: SLOW, runs }));
process.exit(0);
