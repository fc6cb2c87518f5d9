// make bench: fault scenarios, cost when nothing fails, limit accuracy in four runtimes, deadlines
// under load, a flapping primary, the gateway against the gateways people deploy, a long tail
// (hedging), then the report (bench/RESULTS.md, bench/results.svg). Each part runs in its own
// process, one at a time, so no part's timings share the CPU with another's.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { runtimeLine } from "./lib/common.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));
// The peers (openai 7, ai 7, p-retry 9, eventsource-parser 4, ...) need Node 22.12 or later;
// `make bench` runs this on Node 24. Every part below runs on this same Node (process.execPath).
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  console.error(`bench/run.mjs: Node ${process.version} is too old for the pinned peers (they need 22.12 or later); run \`make bench\`, which uses Node 24`);
  process.exit(1);
}
const t0 = performance.now();
const parts = [
  ["fault scenarios", ["faults.mjs"]],
  ["cost when nothing fails", ["--expose-gc", "cost.mjs"]],
  ["cold start and download size (node, workerd, chromium)", ["coldstart.mjs"]],
  ["limit accuracy (node, deno, workerd, chromium)", ["accuracy.mjs"]],
  ["deadlines under load (node, deno, workerd)", ["load.mjs"]],
  ["a flapping primary (60 s)", ["flapping.mjs"]],
  ["the gateway against Portkey and LiteLLM", ["gateway.mjs"]],
  ["a long tail: hedging and fastest (1,000 calls per route)", ["tail.mjs"]],
];
const seconds = {};
console.log(`== bench on ${runtimeLine()}`);
for (const [name, args] of parts) {
  console.log(`== bench: ${name}`);
  const t = performance.now();
  execFileSync(process.execPath, args, { cwd: here, stdio: "inherit" });
  seconds[name] = Math.round((performance.now() - t) / 1000);
}
mkdirSync(`${here}.work`, { recursive: true });
writeFileSync(`${here}.work/meta.json`, JSON.stringify({ totalSeconds: Math.round((performance.now() - t0) / 1000), seconds }));
execFileSync(process.execPath, ["report.mjs"], { cwd: here, stdio: "inherit" });
console.log(`== bench: done in ${Math.round((performance.now() - t0) / 1000)} s`);
