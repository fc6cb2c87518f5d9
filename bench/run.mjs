// make bench: fault scenarios, cost when nothing fails, limit accuracy in four runtimes, deadlines
// under load, a flapping primary, then the report (bench/RESULTS.md, bench/results.svg). Each
// part runs in its own process, one at a time, so no part's timings share the CPU with another's.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const t0 = performance.now();
const parts = [
  ["fault scenarios", ["faults.mjs"]],
  ["cost when nothing fails", ["--expose-gc", "cost.mjs"]],
  ["limit accuracy (node, deno, workerd, chromium)", ["accuracy.mjs"]],
  ["deadlines under load (node, deno, workerd)", ["load.mjs"]],
  ["a flapping primary (60 s)", ["flapping.mjs"]],
];
const seconds = {};
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
