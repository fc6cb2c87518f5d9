// Limit accuracy in four runtimes (Node, Deno, workerd via Miniflare, Chromium via playwright-core),
// the same probe (lib/accuracy-probe.mjs) in each. Writes bench/.work/accuracy.json.
import { mkdirSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { normalize } from "node:path";
import { Baton } from "llm-baton";
import { startProvider, loadNow } from "./lib/common.mjs";
import { WORKERD_MODULE_RULES } from "../tests/e2e/resolve.mjs";
import { accuracy } from "./lib/accuracy-probe.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));
const repo = fileURLToPath(new URL("..", import.meta.url));
const CALLS = Number(process.env.BENCH_ACCURACY_CALLS ?? 100);
const LIMIT = 200;
const only = process.argv.slice(2);
const want = (r) => only.length === 0 || only.includes(r);
const out = { node: process.version, calls: CALLS, limitMs: LIMIT, runtimes: {}, load: [loadNow()] };
const provider = await startProvider();

try {
  if (want("node")) {
    out.runtimes.node = await accuracy({ Baton, providerUrl: provider.url, runtime: "node", calls: CALLS, limitMs: LIMIT });
    console.log("node done");
  }
  if (want("deno")) {
    const json = execFileSync(`${repo}node_modules/.bin/deno`, ["run", "--no-lock", "--no-check", "--allow-net=127.0.0.1", "--allow-read", `${here}lib/accuracy-deno.mjs`, provider.url, String(CALLS), String(LIMIT)],
      { env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" }, maxBuffer: 1 << 26 }).toString();
    out.runtimes.deno = JSON.parse(json);
    out.denoVersion = execFileSync(`${repo}node_modules/.bin/deno`, ["--version"]).toString().split("\n")[0];
    console.log("deno done");
  }
  if (want("workerd")) {
    const { Miniflare } = await import("miniflare");
    const dir = `${here}.work/workerd`;
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}/worker.mjs`, `import { Baton } from "../../../pkg/workerd.js";
import { accuracy } from "../../lib/accuracy-probe.mjs";
export default { async fetch(request) {
  const u = new URL(request.url);
  try { return Response.json(await accuracy({ Baton, providerUrl: u.searchParams.get("provider"), runtime: "workerd", calls: Number(u.searchParams.get("calls")), limitMs: Number(u.searchParams.get("limit")), kinds: [u.searchParams.get("kind")] })); }
  catch (e) { return Response.json({ error: String(e && e.stack || e) }, { status: 500 }); }
} };`);
    const mf = new Miniflare({ modules: true, modulesRoot: repo, scriptPath: `${dir}/worker.mjs`,
      modulesRules: WORKERD_MODULE_RULES, compatibilityDate: "2025-01-01" });
    await mf.ready;
    out.runtimes.workerd = {};
    try {
      for (const kind of ["headers", "total", "first_token", "idle", "deadline"]) {
        const res = await mf.dispatchFetch(`http://bench.test/?provider=${encodeURIComponent(provider.url)}&calls=${CALLS}&limit=${LIMIT}&kind=${kind}`);
        const body = await res.json();
        if (body.error) throw new Error(`workerd: ${body.error}`);
        Object.assign(out.runtimes.workerd, body);
      }
    } finally { await mf.dispose(); }
    console.log("workerd done");
  }
  if (want("chromium")) {
    const { chromium } = await import("playwright-core");
    const types = { ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm", ".html": "text/html" };
    const page = `<!doctype html><script type="importmap">{"imports":{"llm-baton":"/pkg/browser.js"}}</script>
<script type="module">import { Baton } from "llm-baton"; import { accuracy } from "/bench/lib/accuracy-probe.mjs";
window.runAccuracy = (url, calls, limit) => accuracy({ Baton, providerUrl: url, runtime: "chromium", calls, limitMs: limit }); window.ready = true;</script>`;
    const server = createServer(async (req, res) => {
      const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
      if (path === "/") { res.writeHead(200, { "content-type": "text/html" }).end(page); return; }
      const rel = normalize(path).replace(/^\/+/, "");
      const ext = rel.slice(rel.lastIndexOf("."));
      if (!(rel.startsWith("pkg/") || rel.startsWith("bench/lib/")) || rel.includes("..") || !types[ext]) { res.writeHead(404).end(); return; }
      try { res.writeHead(200, { "content-type": types[ext] }).end(await readFile(repo + rel)); } catch { res.writeHead(404).end(); }
    });
    await new Promise((r) => server.listen(0, "127.0.0.1", r));
    const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium",
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"] });
    try {
      const p = await browser.newPage();
      await p.goto(`http://127.0.0.1:${server.address().port}/`);
      await p.waitForFunction(() => window.ready === true, null, { timeout: 15000 });
      out.runtimes.chromium = await p.evaluate(([u, c, l]) => window.runAccuracy(u, c, l), [provider.url, CALLS, LIMIT]);
      out.chromiumVersion = browser.version();
    } finally { await browser.close(); server.close(); }
    console.log("chromium done");
  }
} finally {
  provider.stop();
}
mkdirSync(`${here}.work`, { recursive: true });
out.load.push(loadNow());
writeFileSync(`${here}.work/accuracy.json`, JSON.stringify(out));
process.exit(0);
