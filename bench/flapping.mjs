// A flapping primary (issue 13), the 60 s version: the primary answers 503 for its first 36 s,
// then is healthy; 20 requests 3 s apart on one Baton with the default health policy (5
// failures open the breaker for a 5 s cooldown), fallback to a healthy backup. The same
// schedule runs at the same time on a Baton with `health: false`, as the contrast. Prints who
// served each request, the primary's requests during the outage (counted at the provider) and
// how long after its recovery traffic was back on it. Writes bench/.work/flapping.json.
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Baton } from "llm-baton";
import { startProvider, script, report, sleep, loadNow, KEY, MODEL, PROMPT } from "./lib/common.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));
const REQUESTS = 20;
const SPACING_MS = 3000;
const DOWN_MS = 36_000;
const COOLDOWN_MS = 5000; // the default `health.cooldownMs`
const ASK = { messages: [{ role: "user", content: PROMPT }], maxTokens: 16 };
const RUNS = { "llm-baton": undefined, "llm-baton, health: false": false };
const loadAtStart = loadNow();

/** Redefines a scenario in place: the same baseUrl, a new step list, an empty log. */
async function rescript(providerUrl, id, steps) {
  const res = await fetch(`${providerUrl}/_scenarios/${id}`, { method: "PUT", body: JSON.stringify({ steps }) });
  if (!res.ok) throw new Error(`PUT /_scenarios/${id}: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
}

/** One Baton through the schedule; the recovery is this run's own (it rescripts its primary). */
async function run(providerUrl, name, health) {
  const p = await script(providerUrl, "flap-primary", [{ status: 503, message: "primary down" }]);
  const b = await script(providerUrl, "flap-backup", [{ text: "from backup" }]);
  const target = (id) => ({ format: "openai_chat", baseUrl: `${providerUrl}/s/${id}/v1`, model: MODEL, apiKey: KEY });
  const config = { targets: { primary: target(p), backup: target(b) }, routes: { chat: { fallback: ["primary", "backup"] } } };
  if (health !== undefined) config.health = health;
  const baton = new Baton(config);
  const served = [];
  let outage = null;
  let recoveredAt = null;
  const t0 = performance.now();
  for (let i = 0; i < REQUESTS; i++) {
    await sleep(Math.max(0, t0 + i * SPACING_MS - performance.now()));
      if (recoveredAt === null && i * SPACING_MS >= DOWN_MS) {
      outage = await report(providerUrl, p);
      await rescript(providerUrl, p, [{ text: "from primary" }]);
      recoveredAt = performance.now() - t0;
    }
    const at = performance.now() - t0;
    const events = [];
    const out = await baton.complete("chat", ASK, { onEvent: (ev) => events.push(ev) });
    const skip = events.find((ev) => ev.type === "skip");
    const triedPrimary = events.some((ev) => ev.type === "attempt" && ev.target === "primary");
    served.push({ i, at, by: out.target, triedPrimary, skipReopensInMs: skip?.reopensInMs ?? null, state: baton.health().targets.find((t) => t.target === "primary")?.state });
  }
  const starts = outage.log.map((e) => e.startedMs);
  const back = served.find((s) => s.at >= recoveredAt && s.by === "primary");
  return {
    name,
    served: served.map((s) => ({ ...s, at: Math.round(s.at) })),
    recoveredAtMs: Math.round(recoveredAt),
    primaryDuringOutage: starts.length,
    primaryStartsMs: starts.map((s) => s - starts[0]),
    outageServedByBackup: served.filter((s) => s.at < recoveredAt).every((s) => s.by === "backup"),
    minProbeGapMs: starts.length > 5 ? Math.min(...starts.slice(5).map((s, i) => s - starts[4 + i])) : null,
    recoveryMs: back ? Math.round(back.at - recoveredAt) : null,
  };
}

const provider = await startProvider();
let runs;
try {
  runs = await Promise.all(Object.entries(RUNS).map(([name, health]) => run(provider.url, name, health)));
} finally {
  provider.stop();
}

console.log(`flapping primary: 503 for ${DOWN_MS / 1000} s, then healthy; ${REQUESTS} requests ${SPACING_MS / 1000} s apart; cooldown ${COOLDOWN_MS / 1000} s`);
console.log(["request", "at", ...runs.map((r) => r.name)].join("\t"));
for (let i = 0; i < REQUESTS; i++) {
  const cell = (r) => {
    const s = r.served[i];
    return `${s.by}${s.triedPrimary && s.by === "backup" ? " (primary 503)" : ""}${s.skipReopensInMs !== null ? ` (skipped, reopens in ${s.skipReopensInMs} ms)` : ""}`;
  };
  console.log([i + 1, `${(runs[0].served[i].at / 1000).toFixed(1)} s`, ...runs.map(cell)].join("\t"));
}
for (const r of runs) {
  console.log(`${r.name}: primary requests during the outage ${r.primaryDuringOutage} (at ${r.primaryStartsMs.map((ms) => (ms / 1000).toFixed(1)).join(", ")} s after the first), ` +
    `every outage request served by the backup: ${r.outageServedByBackup}, back on the primary ${r.recoveryMs === null ? "never" : `${(r.recoveryMs / 1000).toFixed(1)} s`} after it recovered`);
}
mkdirSync(`${here}.work`, { recursive: true });
writeFileSync(`${here}.work/flapping.json`, JSON.stringify({ node: process.version, load: [loadAtStart, loadNow()], requests: REQUESTS, spacingMs: SPACING_MS, downMs: DOWN_MS, cooldownMs: COOLDOWN_MS, runs }));
process.exit(0);
