// Fault scenarios: every library on every seed scenario, with its own options ("options") and,
// where those miss the goal, with the closest few lines of the caller's code ("workaround").
// Writes bench/.work/faults.json. Usage: node bench/faults.mjs [scenarioKey...]
import { mkdirSync, writeFileSync } from "node:fs";
import { startProvider, script, report, sleep, runtimeLine, loadNow } from "./lib/common.mjs";
import { SCENARIOS } from "./lib/scenarios.mjs";
import { LIBRARIES } from "./lib/libraries.mjs";

const only = process.argv.slice(2);
const loadAtStart = loadNow();
const SLACK_MS = 250; // the e2e suite's allowance above a goal time
const EARLY_MS = 50;

// Peers log retries and unhandled stream errors; keep the bench output readable.
const quiet = console.warn;
console.warn = () => {};
process.on("unhandledRejection", () => {});

function classify(e, userAborted) {
  const chain = [];
  for (let x = e, i = 0; x && i < 6; i++) { chain.push(x); x = x.cause ?? x.lastError ?? x.error; }
  if (e?.name === "BatonError") {
    if (e.kind === "http") return { cls: `http:${e.status}`, text: `HTTP ${e.status}` };
    if (e.kind === "timeout") return { cls: "timeout", text: `timeout (${e.timeout})` };
    return { cls: e.kind, text: e.kind };
  }
  const status = chain.map((x) => x.status ?? x.statusCode).find((s) => typeof s === "number");
  if (status) return { cls: `http:${status}`, text: `HTTP ${status} (${e.constructor?.name ?? e.name})` };
  const names = chain.map((x) => `${x.name ?? ""} ${x.constructor?.name ?? ""} ${x.message ?? ""}`).join(" | ");
  const abortish = /abort/i.test(names);
  if (userAborted && abortish) return { cls: "cancelled", text: `cancelled (${e.constructor?.name ?? e.name})` };
  if (/timeout|timed out/i.test(names) || abortish) return { cls: "timeout", text: `timeout (${e.constructor?.name ?? e.name})` };
  // undici (Node 22+) rejects a body read with TypeError "terminated" when the server closes the socket.
  if (e instanceof TypeError && e.message === "terminated") return { cls: "cut", text: "error when the provider cut the connection (TypeError: terminated)" };
  return { cls: "error", text: `${e.constructor?.name ?? e.name}: ${String(e.message).slice(0, 80)}` };
}

async function runOne(lib, scn, providerUrl, variant) {
  const ids = {};
  for (const [member, steps] of Object.entries(scn.steps)) ids[member] = await script(providerUrl, `${scn.key}-${member}`, steps);
  ids.backup ??= await script(providerUrl, `${scn.key}-backup`, [{ text: "from backup" }]);
  const base = Object.fromEntries(Object.entries(ids).map(([m, id]) => [m, `${providerUrl}/s/${id}/v1`]));
  const notes = [];
  const lines = [];
  const state = { sawText: false };
  let firstTextMs = null;
  let text = "";
  const ac = scn.policy.abortAtMs ? new AbortController() : null;
  let userAborted = false;
  const t0 = performance.now();
  const abortTimer = ac && setTimeout(() => { userAborted = true; ac.abort(); }, scn.policy.abortAtMs);
  const ctx = {
    base, variant, state,
    signal: ac?.signal,
    onText: (t) => { if (firstTextMs === null) firstTextMs = performance.now() - t0; state.sawText = true; text += t; },
    note: (s) => notes.push(s),
    lines: (n, what) => lines.push({ n, what }),
  };
  let settled = null;
  const call = lib.run(scn, ctx).then(
    (value) => (settled = { ok: true, value, ms: performance.now() - t0 }),
    (error) => (settled = { ok: false, error, ms: performance.now() - t0 }),
  );
  let capTimer;
  const cap = new Promise((r) => (capTimer = setTimeout(r, scn.capMs)));
  await Promise.race([call, cap]);
  clearTimeout(capTimer);
  clearTimeout(abortTimer);
  let outcome;
  if (!settled) {
    outcome = { cls: "hang", text: `still waiting at ${(scn.capMs / 1000).toFixed(0)} s (bench stopped watching)`, ms: scn.capMs };
  } else if (settled.ok) {
    const v = String(settled.value ?? text);
    const full = scn.steps.primary.at(-1).text;
    const which = v === "" ? "empty" : full && v !== full && full.startsWith(v) ? "truncated" : v.includes("from backup") ? "answer:backup" : v.includes("too late") ? "answer:late" : "answer";
    outcome = { cls: which, text: which === "empty" ? "empty answer (no text)" : which === "truncated" ? `truncated answer ${JSON.stringify(v)} (no error)` : which === "answer:backup" ? "answer from backup" : which === "answer:late" ? "late answer from the stalled primary" : "answer", ms: settled.ms };
    if (scn.policy.deadlineMs && settled.ms > scn.policy.deadlineMs + 20) outcome.text += `, ${((settled.ms - scn.policy.deadlineMs) / 1000).toFixed(2)} s past the deadline`;
  } else {
    const c = classify(settled.error, userAborted);
    if (state.sawText && c.cls === "timeout") c.cls = "text+timeout";
    if (state.sawText) c.text = `text, then ${c.text}`;
    outcome = { ...c, ms: settled.ms };
  }
  // The provider's view, once the abandoned requests have ended (or 2 s later).
  let reports;
  const until = performance.now() + 2000;
  for (;;) {
    reports = await Promise.all(Object.values(ids).map((id) => report(providerUrl, id)));
    if (reports.every((r) => r.open === 0) || performance.now() > until || !settled) break;
    await sleep(25);
  }
  const calls = reports.reduce((a, r) => a + r.requests, 0);
  const backupCalls = reports[Object.keys(ids).indexOf("backup")].requests;
  const open = reports.reduce((a, r) => a + r.open, 0);
  const clientClosed = reports.reduce((a, r) => a + r.clientClosed, 0);
  const serverCut = reports.reduce((a, r) => a + (r.reset ?? 0), 0);
  let closed;
  if (open > 0) closed = `no: ${open} left open`;
  else if (serverCut > 0) closed = `no: waited until the provider cut ${serverCut}`;
  else if (clientClosed > 0) closed = `yes (${clientClosed})`;
  else closed = "nothing abandoned";
  const g = scn.goal;
  const misses = [];
  if (outcome.cls !== g.outcome) misses.push("outcome");
  const slack = Math.max(50, Math.min(SLACK_MS, g.ms * 0.1));
  // An idle limit counts from the last text: the goal time is measured from the first text event.
  const measured = g.outcome === "text+timeout" && firstTextMs != null ? outcome.ms - firstTextMs : outcome.ms;
  if (!(measured >= g.ms - EARLY_MS && measured <= g.ms + slack)) misses.push("time");
  if (calls !== g.calls) misses.push("calls");
  if (open > 0 || serverCut > 0) misses.push("connections");
  return {
    library: lib.name, scenario: scn.key, variant,
    outcome: outcome.text, cls: outcome.cls, ms: Math.round(outcome.ms), firstTextMs: firstTextMs && Math.round(firstTextMs),
    calls, backupCalls, open, clientClosed, serverCut, closed,
    userLines: lines.reduce((a, l) => a + l.n, 0), userCode: lines.map((l) => `${l.what} (${l.n})`),
    config: notes.join("; "), goalMet: misses.length === 0, misses,
  };
}

quiet.call(console, `fault scenarios on ${runtimeLine()}`);
const provider = await startProvider();
const results = [];
const scenarios = SCENARIOS.filter((s) => only.length === 0 || only.includes(s.key));
try {
  for (const scn of scenarios) {
    // All libraries at once on this scenario (each has its own provider scenario ids), then
    // the workarounds for those that missed the goal with their options alone.
    const rows = await Promise.all(LIBRARIES.map((lib) => runOne(lib, scn, provider.url, "options")));
    results.push(...rows);
    const retry = LIBRARIES.filter((lib, i) => !rows[i].goalMet && lib.name !== "llm-baton" && lib.name !== "ai + ai-retry" && lib.name !== "ai + ai-fallback");
    const fixes = await Promise.all(retry.map((lib) => runOne(lib, scn, provider.url, "workaround")));
    results.push(...fixes);
    for (const r of [...rows, ...fixes]) {
      quiet.call(console, `${scn.key.padEnd(17)} ${(r.library + (r.variant === "workaround" ? " +code" : "")).padEnd(24)} ${r.goalMet ? "ok  " : "MISS"} ${String(r.ms).padStart(6)} ms  calls ${r.calls}  ${r.outcome}  [closed: ${r.closed}]${r.userLines ? `  +${r.userLines} lines` : ""}`);
    }
  }
} finally {
  provider.stop();
}
mkdirSync(new URL("./.work/", import.meta.url), { recursive: true });
writeFileSync(new URL("./.work/faults.json", import.meta.url), JSON.stringify({ node: process.version, load: [loadAtStart, loadNow()], scenarios: SCENARIOS.map(({ key, title, seed, goal, policy }) => ({ key, title, seed, goal, policy })), results }, null, 1));
process.exit(0);
