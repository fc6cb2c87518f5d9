// Cold start: the time from importing the package to the first answer of a fresh client, against
// the scripted provider on loopback, for llm-baton (`Baton`, the Baton's wasm only) and the
// official openai SDK, in Node (a fresh process per run), workerd (a fresh Worker per run, the
// import done by its first request) and Chromium (a fresh browser context per run, so nothing is
// cached). Also what a browser downloads per entry (tests/e2e/package_size.mjs).
// Writes bench/.work/coldstart.json.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { normalize } from "node:path";
import * as esbuild from "esbuild";
import { startProvider, script, stats, loadNow, KEY, MODEL, PROMPT } from "./lib/common.mjs";
import { WORKERD_CONDITIONS, WORKERD_MODULE_RULES, BROWSER_CONDITIONS } from "../tests/e2e/resolve.mjs";
import { entrySizes } from "../tests/e2e/package_size.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));
const repo = fileURLToPath(new URL("..", import.meta.url));
const RUNS = Number(process.env.BENCH_COLDSTART_RUNS ?? 9);
const work = `${here}.work/coldstart`;
mkdirSync(work, { recursive: true });
const out = { node: process.version, runs: RUNS, load: [loadNow()], runtimes: {} };

const provider = await startProvider();
const id = await script(provider.url, "coldstart", [{ text: "Hello." }]);
const base = `${provider.url}/s/${id}/v1`;

/** The timed code, per library: `load` imports it, `ask` makes one client and awaits its answer. */
const clients = {
  "llm-baton": {
    load: (spec) => `const { Baton } = await import(${JSON.stringify(spec)});`,
    ask: `const answer = (await new Baton({ targets: { t: { format: "openai_chat", baseUrl: ${JSON.stringify(base)}, model: ${JSON.stringify(MODEL)}, apiKey: ${JSON.stringify(KEY)} } }, routes: {} })
  .complete("t", { messages: [{ role: "user", content: ${JSON.stringify(PROMPT)} }] })).text;`,
  },
  openai: {
    load: (spec) => `const { default: OpenAI } = await import(${JSON.stringify(spec)});`,
    ask: `const answer = (await new OpenAI({ apiKey: ${JSON.stringify(KEY)}, baseURL: ${JSON.stringify(base)}, dangerouslyAllowBrowser: true })
  .chat.completions.create({ model: ${JSON.stringify(MODEL)}, messages: [{ role: "user", content: ${JSON.stringify(PROMPT)} }] })).choices[0].message.content;`,
  },
};
const timed = (name, spec) => `const t0 = performance.now();
${clients[name].load(spec)}
${clients[name].ask}
if (answer !== "Hello.") throw new Error("unexpected answer: " + answer);
const ms = performance.now() - t0;`;

/** Bundles `import * from spec` for a platform into one ES module (the peer, for workerd and Chromium). */
async function bundlePeer(spec, conditions, file) {
  await esbuild.build({ stdin: { contents: `export { default } from ${JSON.stringify(spec)};`, resolveDir: here },
    bundle: true, format: "esm", platform: "browser", conditions, target: "es2022", outfile: file, logLevel: "warning" });
}

try {
  // ---- Node: a fresh process per run -----------------------------------------------------------
  out.runtimes.node = {};
  for (const name of Object.keys(clients)) {
    const runs = [];
    for (let i = 0; i < RUNS; i++) {
      const code = `${timed(name, name === "llm-baton" ? "llm-baton" : "openai")}\nconsole.log(ms);`;
      runs.push(Number(execFileSync(process.execPath, ["--input-type=module", "-e", code], { cwd: here }).toString().trim()));
    }
    out.runtimes.node[name] = stats(runs);
  }
  console.log("coldstart node:", JSON.stringify(out.runtimes.node, round));

  // ---- workerd: a fresh Worker per run; its first request imports the library and asks ---------
  const { Miniflare } = await import("miniflare");
  await bundlePeer("openai", WORKERD_CONDITIONS, `${work}/openai-workerd.mjs`);
  const workerdSpec = { "llm-baton": "../../../pkg/workerd.js", openai: "./openai-workerd.mjs" };
  out.runtimes.workerd = {};
  out.workerdStartup = {};
  for (const name of Object.keys(clients)) {
    const file = `${work}/worker-${name}.mjs`;
    writeFileSync(file, `export default { async fetch() {
  try {
${timed(name, workerdSpec[name])}
    return Response.json({ ms });
  } catch (e) { return Response.json({ error: String((e && e.stack) || e) }); }
} };\n`);
    const runs = [];
    const startups = [];
    for (let i = 0; i < RUNS; i++) {
      const began = performance.now();
      const mf = new Miniflare({ modules: true, modulesRoot: repo, scriptPath: file, modulesRules: WORKERD_MODULE_RULES, compatibilityDate: "2025-01-01" });
      try {
        await mf.ready;
        startups.push(performance.now() - began);
        // Measured from outside: inside a Worker the clock stands still until I/O happens.
        const t = performance.now();
        const body = await (await mf.dispatchFetch("http://bench.test/")).json();
        if (body.error) throw new Error(`workerd ${name}: ${body.error}`);
        runs.push(performance.now() - t);
      } finally {
        await mf.dispose();
      }
    }
    out.runtimes.workerd[name] = stats(runs);
    out.workerdStartup[name] = stats(startups);
  }
  console.log("coldstart workerd:", JSON.stringify(out.runtimes.workerd, round));

  // ---- Chromium: a fresh context (empty cache) per run -----------------------------------------
  const { chromium } = await import("playwright-core");
  await bundlePeer("openai", BROWSER_CONDITIONS, `${work}/openai-browser.mjs`);
  const types = { ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm" };
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    if (path === "/") return res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>cold start</title>");
    const rel = normalize(path).replace(/^\/+/, "");
    const ext = rel.slice(rel.lastIndexOf("."));
    if (!(rel.startsWith("pkg/") || rel.startsWith("bench/.work/coldstart/")) || rel.includes("..") || !types[ext]) return res.writeHead(404).end();
    try {
      res.writeHead(200, { "content-type": types[ext] }).end(await readFile(repo + rel));
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const origin = `http://127.0.0.1:${server.address().port}`;
  const browserSpec = { "llm-baton": `${origin}/pkg/browser.js`, openai: `${origin}/bench/.work/coldstart/openai-browser.mjs` };
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"] });
  out.runtimes.chromium = {};
  try {
    for (const name of Object.keys(clients)) {
      const runs = [];
      for (let i = 0; i < RUNS; i++) {
        const context = await browser.newContext();
        try {
          const page = await context.newPage();
          await page.goto(`${origin}/`);
          runs.push(await page.evaluate(`(async () => { ${timed(name, browserSpec[name])} return ms; })()`));
        } finally {
          await context.close();
        }
      }
      out.runtimes.chromium[name] = stats(runs);
    }
    out.chromiumVersion = browser.version();
  } finally {
    await browser.close();
    server.close();
  }
  console.log("coldstart chromium:", JSON.stringify(out.runtimes.chromium, round));

  out.size = await entrySizes();
  console.log("size:", JSON.stringify(out.size));
} finally {
  provider.stop();
}

function round(key, value) {
  return typeof value === "number" ? Math.round(value * 10) / 10 : value;
}

out.load.push(loadNow());
writeFileSync(`${here}.work/coldstart.json`, JSON.stringify(out, null, 1));
process.exit(0);
