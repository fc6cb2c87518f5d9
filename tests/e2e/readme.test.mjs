// The README's examples, run as a reader runs them: each code block after a
// `<!-- example: NAME -->` line is written unchanged into a project of its own, whose
// node_modules/llm-baton is this repo's pkg/, and run with the command the README gives for it:
// the Node example under node, the Deno one under deno, the Worker bundled by wrangler and served
// by workerd, the browser app built by Vite and opened in Chromium, the curl commands (the
// README's and docs/gateway.md's) against the Deno gateway. The providers' real hosts lead to
// the scripted provider on loopback: a preloaded fetch (readme_hosts.mjs) in Node and Deno,
// Miniflare's outbound service in workerd; the keys are dummies. The headline example's primary
// hangs, and it must fail over in complete() and in stream() well before the 30 s deadline.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, extname } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare, fetch as workerdFetch } from "miniflare";
import { launchChromium } from "./chromium_page.mjs";
import { startDenoGateway } from "./gateway_hosts.mjs";
import { putScenario, spawnAnnounced, startProvider } from "./provider.mjs";
import { WORKERD_MODULE_RULES } from "./resolve.mjs";

const repo = fileURLToPath(new URL("../../", import.meta.url));
const work = `${repo}tests/e2e/artifacts/readme`;
const hostsModule = `${repo}tests/e2e/readme_hosts.mjs`;
const deno = `${repo}node_modules/.bin/deno`;
const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".wasm": "application/wasm" };
const KEYS = { OPENAI_API_KEY: "sk-readme-openai-0123456789", ANTHROPIC_API_KEY: "sk-ant-readme-0123456789" };

/** Every `<!-- example: NAME -->` block of README.md and docs/gateway.md, by NAME. */
function readmeExamples() {
  const blocks = new Map();
  for (const file of ["README.md", "docs/gateway.md"]) {
    const text = readFileSync(`${repo}${file}`, "utf8");
    for (const m of text.matchAll(/^<!-- example: ([\w-]+) -->\n```\w*\n([\s\S]*?)^```$/gm)) {
      assert.ok(!blocks.has(m[1]), `${file} marks a second block as example ${m[1]}`);
      blocks.set(m[1], m[2]);
    }
  }
  return blocks;
}
const examples = readmeExamples();
function example(name) {
  const code = examples.get(name);
  assert.ok(code, `README.md has a block marked <!-- example: ${name} -->`);
  return code;
}

/** The command in an example's first line, `// FILE: [VAR=... ]COMMAND`, as [file, words]. */
function statedCommand(code) {
  const m = /^\/\/ ([\w./-]+): (.+)$/m.exec(code.split("\n")[0]);
  assert.ok(m, `the example's first line names its file and command: ${code.split("\n")[0]}`);
  return [m[1], m[2].split(/\s+/).filter((word) => !/^[A-Z_]+=/.test(word))];
}

/** A fresh project folder with llm-baton installed (this repo's pkg/) and the given files. */
function project(name, files) {
  const dir = `${work}/${name}`;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(`${dir}/node_modules`, { recursive: true });
  symlinkSync(`${repo}pkg`, `${dir}/node_modules/llm-baton`, "dir");
  // What `npm install llm-baton` writes into a folder without a package.json: no "type".
  const manifest = { dependencies: { "llm-baton": "0.1.0" } };
  writeFileSync(`${dir}/package.json`, JSON.stringify(manifest, null, 2));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(`${dir}/${file}`), { recursive: true });
    writeFileSync(`${dir}/${file}`, text);
  }
  return dir;
}

/** Runs a command to its end (killed after timeoutMs); each output line with its time since start. */
function run(command, args, { cwd, env = {}, timeoutMs = 60_000 }) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { cwd, env: { ...process.env, NO_COLOR: "1", ...env }, stdio: ["ignore", "pipe", "pipe"] });
    const lines = [];
    for (const stream of ["stdout", "stderr"]) {
      let rest = "";
      child[stream].setEncoding("utf8");
      child[stream].on("data", (chunk) => {
        const parts = (rest + chunk).split("\n");
        rest = parts.pop();
        for (const text of parts) lines.push({ stream, text, at: performance.now() - started });
      });
      child[stream].on("end", () => rest && lines.push({ stream, text: rest, at: performance.now() - started }));
    }
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const output = lines.map((l) => `${l.stream}@${(l.at / 1000).toFixed(2)}s: ${l.text}`).join("\n");
      resolve({ code, signal, lines, output, ms: performance.now() - started });
    });
  });
}

/** Serves a folder's files on 127.0.0.1 (a free port), as a static host serves a built app. */
function serveFolder(dir) {
  const server = createServer(async (req, res) => {
    const path = new URL(req.url, "http://x").pathname.replace(/\/$/, "/index.html");
    const type = TYPES[extname(path)];
    if (!type || path.includes("..")) return res.writeHead(404).end();
    try {
      const body = readFileSync(`${dir}${path}`);
      res.writeHead(200, { "content-type": type }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

let provider;
before(async () => {
  provider = await startProvider();
});
after(() => provider?.stop());

/** Defines a scenario on the scripted provider; returns its base, the provider URL for it. */
async function script(id, steps) {
  await putScenario(provider.url, id, steps);
  return `${provider.url}/s/${id}`;
}

/** The provider's counters for a scenario, once none of its requests is open (or 3 s passed). */
async function upstream(id) {
  const until = performance.now() + 3000;
  for (;;) {
    const r = await (await fetch(`${provider.url}/_scenarios/${id}`)).json();
    if (r.open === 0 || performance.now() > until) return r;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The env that sends the examples' OpenAI and Anthropic calls to these scenarios. */
function redirected(openai, anthropic) {
  const hosts = { "https://api.openai.com": openai, "https://api.anthropic.com": anthropic };
  return { ...KEYS, BATON_README_HOSTS: JSON.stringify(hosts) };
}

describe("the README's examples, as written", () => {
  test("Node: the headline example fails over a hung primary in complete() and in stream()", async () => {
    const openai = await script("readme-node-openai", [{ headersDelayMs: 600_000 }]);
    const anthropic = await script("readme-node-anthropic", [{ text: "Hello from the backup.", chunks: 3 }]);
    const code = example("node");
    const [file, command] = statedCommand(code);
    assert.deepEqual(command, ["node", file]);
    const dir = project("node", { [file]: code });
    const r = await run(process.execPath, ["--import", hostsModule, file], { cwd: dir, env: redirected(openai, anthropic) });
    assert.equal(r.code, 0, r.output);

    const complete = r.lines.find((l) => l.stream === "stdout" && l.text === "complete() from backup: Hello from the backup.");
    const streamed = r.lines.find((l) => l.stream === "stdout" && l.text === "stream(): Hello from the backup.");
    const done = r.lines.find((l) => l.stream === "stdout" && l.text === "(from backup, 2 attempts)");
    assert.ok(complete && streamed && done, r.output);
    // headersMs (10 s) ends the hung primary's whole answer, far inside the 30 s deadline; then
    // the stream's firstTokenMs (5 s) ends its stream.
    assert.ok(complete.at >= 10_000 && complete.at < 15_000, `complete() answered at ${complete.at} ms\n${r.output}`);
    const streamMs = done.at - complete.at;
    assert.ok(streamMs >= 5_000 && streamMs < 10_000, `stream() answered ${streamMs} ms after complete()\n${r.output}`);
    const events = r.lines.filter((l) => l.stream === "stderr").map((l) => l.text);
    assert.deepEqual(events.map((e) => e.slice(0, e.indexOf("]") + 1)), ["[failover]", "[failover]"], r.output);

    const primary = await upstream("readme-node-openai");
    assert.equal(primary.requests, 2, "one request per call: a silent member is not retried");
    assert.equal(primary.open, 0, "the hung requests were aborted");
    assert.equal(primary.clientClosed, 2);
    const backup = await upstream("readme-node-anthropic");
    assert.equal(backup.requests, 2);
    assert.equal(backup.completed, 2);
  });

  test("Deno: the example streams, retrying a 503", async () => {
    const anthropic = await script("readme-deno-anthropic", [{ status: 503 }, { text: "Hello from Deno.", chunks: 3 }]);
    const code = example("deno");
    const [file, command] = statedCommand(code);
    assert.deepEqual([command[0], command[1], command.at(-1)], ["deno", "run", file]);
    const dir = project("deno", { [file]: code });
    const args = [...command.slice(1, -1), "--preload", hostsModule, file];
    const r = await run(deno, args, { cwd: dir, env: { ...redirected(anthropic, anthropic), DENO_NO_UPDATE_CHECK: "1" } });
    assert.equal(r.code, 0, r.output);
    assert.deepEqual(r.lines.filter((l) => l.stream === "stdout").map((l) => l.text), ["Hello from Deno."], r.output);
    assert.equal((await upstream("readme-deno-anthropic")).requests, 2, "the 503, then its retry");
  });

  test("Cloudflare Workers: wrangler's bundle of the example, in workerd, fails over a 503", async () => {
    const openai = await script("readme-worker-openai", [{ status: 503 }]);
    const anthropic = await script("readme-worker-anthropic", [{ text: "Hello from the Worker.", chunks: 2 }]);
    const toml = example("workerd-config");
    const main = /^main = "([^"]+)"/m.exec(toml)[1];
    const dir = project("workerd", { [main]: example("workerd"), "wrangler.toml": toml });
    const wrangler = `${repo}examples/gateway/node_modules/.bin/wrangler`;
    const env = { CI: "1", WRANGLER_SEND_METRICS: "false", XDG_CONFIG_HOME: `${dir}/.config` };
    const bundle = await run(wrangler, ["deploy", "--dry-run", "--outdir", "dist"], { cwd: dir, env });
    assert.equal(bundle.code, 0, bundle.output);

    const hosts = { "https://api.openai.com": openai, "https://api.anthropic.com": anthropic };
    const mf = new Miniflare({
      modules: true,
      modulesRoot: `${dir}/dist`,
      scriptPath: `${dir}/dist/index.js`,
      modulesRules: WORKERD_MODULE_RULES,
      compatibilityDate: /^compatibility_date = "([^"]+)"/m.exec(toml)[1],
      compatibilityFlags: JSON.parse(/^compatibility_flags = (\[[^\]]*\])/m.exec(toml)[1]),
      bindings: KEYS,
      outboundService: async (request) => {
        const origin = new URL(request.url).origin;
        assert.ok(hosts[origin], `the Worker fetched only the providers (got ${request.url})`);
        return workerdFetch(hosts[origin] + request.url.slice(origin.length), {
          method: request.method,
          headers: request.headers,
          body: await request.arrayBuffer(),
        });
      },
    });
    try {
      const res = await mf.dispatchFetch("http://worker.test/", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ prompt: "Hi" }),
      });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { text: "Hello from the Worker.", target: "anthropic" });
      assert.equal((await mf.dispatchFetch("http://worker.test/")).status, 405);
    } finally {
      await mf.dispose();
    }
    assert.equal((await upstream("readme-worker-openai")).requests, 1);
    assert.equal((await upstream("readme-worker-anthropic")).completed, 1);
  });

  test("Browser: Vite's build of the example streams through the gateway, and Stop aborts", async () => {
    const slow = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
    const base = await script("readme-browser", [
      { text: "Hello from the page.", chunks: 4 },
      { text: slow, chunkDelayMs: 250 },
    ]);
    const dir = `${work}/browser`;
    const site = await serveFolder(`${dir}/dist`);
    const origin = `http://127.0.0.1:${site.address().port}`;
    const gateway = await startDenoGateway({
      targets: { openai: { format: "openai_chat", baseUrl: `${base}/v1`, model: "gpt-4o-mini", apiKey: KEYS.OPENAI_API_KEY } },
      routes: { chat: { retry: "openai", attempts: 2 } },
      gateway: { apiKeys: ["client-key"], cors: [origin] },
    });
    let browser;
    try {
      // As written, at the gateway's address.
      project("browser", {
        "main.js": example("browser").replaceAll("http://127.0.0.1:8787", gateway.url),
        "index.html": example("browser-html"),
      });
      const build = await run(`${repo}node_modules/.bin/vite`, ["build"], { cwd: dir });
      assert.equal(build.code, 0, build.output);

      browser = await launchChromium();
      const page = await browser.newPage();
      const errors = [];
      page.on("pageerror", (error) => errors.push(error));
      await page.goto(`${origin}/`);
      const output = () => page.locator("#output").textContent();
      await page.click("form button");
      await page.waitForFunction(() => document.querySelector("#output").textContent === "Hello from the page.", null, { timeout: 10_000 });

      await page.click("form button");
      await page.waitForFunction(() => document.querySelector("#output").textContent.includes("word3"), null, { timeout: 10_000 });
      await page.click("#stop");
      await page.waitForFunction(() => document.querySelector("#output").textContent.includes("[cancelled]"), null, { timeout: 5_000 });
      assert.ok(!(await output()).includes("word39"), await output());
      assert.deepEqual(errors, []);
      const r = await upstream("readme-browser");
      assert.equal(r.requests, 2);
      assert.equal(r.open, 0, "Stop closed the gateway's upstream request");
      assert.equal(r.clientClosed, 1);
    } finally {
      await browser?.close();
      gateway.stop();
      site.close();
    }
  });

  describe("against the Deno gateway", () => {
    let gateway;
    let openai;
    before(async () => {
      openai = await script("readme-gateway-openai", [{ text: "Hello through the gateway.", chunks: 3 }]);
      // examples/gateway/deno.mjs, as gateway_hosts.mjs starts it, with its config from the
      // variables the README's gateway command sets.
      const args = ["run", "--no-lock", "--no-check", "--allow-net=127.0.0.1", "--allow-read", "--allow-env",
        "--preload", hostsModule, `${repo}examples/gateway/deno.mjs`];
      const env = { ...process.env, ...redirected(openai, openai), GATEWAY_API_KEYS: "client-key", HOST: "127.0.0.1", PORT: "0", NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" };
      delete env.ANTHROPIC_API_KEY;
      gateway = await spawnAnnounced(deno, args, { name: "the Deno gateway", variable: "GATEWAY_URL", timeoutMs: 20_000, spawnOptions: { cwd: repo, env } });
    });
    after(() => gateway?.stop());

    for (const [name, where] of [["curl", "README.md"], ["gateway-curl", "docs/gateway.md"]]) {
      test(`curl: ${where}'s command streams a 200`, async () => {
        // As written, at the gateway's address, plus the flags that print the status.
        const command = example(name).replaceAll("http://127.0.0.1:8787", gateway.url).trimEnd();
        const r = await run("bash", ["-c", `${command} -sS -w '\\nHTTP %{http_code}\\n'`], { cwd: work });
        assert.equal(r.code, 0, r.output);
        const out = r.lines.filter((l) => l.stream === "stdout").map((l) => l.text);
        assert.equal(out.at(-1), "HTTP 200", r.output);
        const text = out.filter((l) => l.startsWith("data: {")).map((l) => JSON.parse(l.slice(6)).choices[0]?.delta?.content ?? "").join("");
        assert.equal(text, "Hello through the gateway.");
        assert.ok(out.includes("data: [DONE]"), r.output);
      });
    }
  });
});
