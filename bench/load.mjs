// Deadlines under load (issue 10): 1, 50 and 300 calls whose deadlines expire together, in Node,
// Deno and workerd (Miniflare), the same probe (lib/load-probe.mjs) in each. Writes
// bench/.work/load.json; `node load.mjs node workerd` runs only those runtimes.
import { mkdirSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Baton } from "llm-baton";
import { startProvider, loadNow } from "./lib/common.mjs";
import { WORKERD_MODULE_RULES } from "../tests/e2e/resolve.mjs";
import { deadlinesUnderLoad } from "./lib/load-probe.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));
const repo = fileURLToPath(new URL("..", import.meta.url));
const DEADLINE = 500;
const only = process.argv.slice(2);
const want = (r) => only.length === 0 || only.includes(r);
const out = { node: process.version, deadlineMs: DEADLINE, runtimes: {}, load: [loadNow()] };
const provider = await startProvider();

try {
  if (want("node")) {
    out.runtimes.node = await deadlinesUnderLoad({ Baton, providerUrl: provider.url, runtime: "node", deadlineMs: DEADLINE });
    console.log("node done");
  }
  if (want("deno")) {
    const json = execFileSync(`${repo}node_modules/.bin/deno`, ["run", "--no-lock", "--no-check", "--allow-net=127.0.0.1", "--allow-read", `${here}lib/load-deno.mjs`, provider.url],
      { env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" }, maxBuffer: 1 << 26 }).toString();
    out.runtimes.deno = JSON.parse(json);
    console.log("deno done");
  }
  if (want("workerd")) {
    const { Miniflare } = await import("miniflare");
    const dir = `${here}.work/workerd-load`;
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}/worker.mjs`, `import { Baton } from "../../../pkg/workerd.js";
import { deadlinesUnderLoad } from "../../lib/load-probe.mjs";
export default { async fetch(request) {
  const u = new URL(request.url);
  try { return Response.json(await deadlinesUnderLoad({ Baton, providerUrl: u.searchParams.get("provider"), runtime: "workerd", levels: [Number(u.searchParams.get("n"))], deadlineMs: ${DEADLINE} })); }
  catch (e) { return Response.json({ error: String(e && e.stack || e) }, { status: 500 }); }
} };`);
    const mf = new Miniflare({ modules: true, modulesRoot: repo, scriptPath: `${dir}/worker.mjs`,
      modulesRules: WORKERD_MODULE_RULES, compatibilityDate: "2025-01-01" });
    await mf.ready;
    out.runtimes.workerd = {};
    try {
      for (const n of [1, 50, 300]) {
        const res = await mf.dispatchFetch(`http://bench.test/?provider=${encodeURIComponent(provider.url)}&n=${n}`);
        const body = await res.json();
        if (body.error) throw new Error(`workerd: ${body.error}`);
        Object.assign(out.runtimes.workerd, body);
      }
    } finally {
      await mf.dispose();
    }
    console.log("workerd done");
  }
} finally {
  provider.stop();
}
mkdirSync(`${here}.work`, { recursive: true });
out.load.push(loadNow());
writeFileSync(`${here}.work/load.json`, JSON.stringify(out));
process.exit(0);
