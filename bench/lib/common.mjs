// Shared helpers for the bench: the scripted provider (spawned with the e2e helper), scenario
// scripting, provider reports, and small statistics.
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { startProvider } from "../../tests/e2e/provider.mjs";

export { startProvider };

export const KEY = "sk-bench-not-a-secret";
export const MODEL = "scripted-model";
export const PROMPT = "Say hello.";

/** The peers as installed from bench/package-lock.json: { name: version }. */
export function peerVersions() {
  const deps = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).dependencies;
  const installed = (p) => { try { return JSON.parse(readFileSync(new URL(`../node_modules/${p}/package.json`, import.meta.url), "utf8")).version; } catch { return "not installed"; } };
  return Object.fromEntries(Object.keys(deps).map((p) => [p, installed(p)]));
}

/** One line naming the Node that runs and each peer's version, for what the bench prints. */
export const runtimeLine = () => `Node ${process.version}; ${Object.entries(peerVersions()).map(([p, v]) => `${p} ${v}`).join(", ")}`;

/**
 * The 1-minute load average, rounded: the machine may be shared (other builds and tests), so
 * each part records it at its start and end and the report prints it next to the figures.
 */
export const loadNow = () => Math.round(loadavg()[0] * 10) / 10;

let serial = 0;

/** Scripts a scenario on the provider; returns its id. */
export async function script(providerUrl, label, steps) {
  serial += 1;
  const id = `bench-${label}-${Date.now().toString(36)}-${serial}`.replace(/[^A-Za-z0-9_-]/g, "-");
  const res = await fetch(`${providerUrl}/_scenarios/${id}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ steps }),
  });
  if (!res.ok) throw new Error(`PUT /_scenarios/${id}: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
  return id;
}

export async function report(providerUrl, id) {
  const res = await fetch(`${providerUrl}/_scenarios/${id}`);
  if (!res.ok) throw new Error(`GET /_scenarios/${id}: ${res.status}`);
  return res.json();
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function quantile(sorted, q) {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

export function stats(values) {
  const s = [...values].sort((a, b) => a - b);
  return { n: s.length, p50: quantile(s, 0.5), p99: quantile(s, 0.99), max: s[s.length - 1], min: s[0] };
}

/**
 * The soak's section of RESULTS.md lies between these lines: `make soak` (soak.mjs) rewrites it,
 * and report.mjs (`make bench`) keeps it at the end of the file.
 */
export const SOAK_OPEN = "<!-- written by make soak (bench/soak.mjs), kept by report.mjs at the end -->";
export const SOAK_CLOSE = "<!-- end of the soak -->";
