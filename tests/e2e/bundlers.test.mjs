// A browser app (tests/e2e/apps/browser-app) built by the real bundlers, each through its plain
// CLI as the README tells a user, from the package as an app installs it (node_modules/llm-baton),
// then served on loopback and run in Chromium against the scripted provider: a whole answer and a
// stream through a failover, a traced answer (telemetry.js is a chunk of its own, loaded by the
// first traced call), and a streamed OpenAI-style request through `baton.fetch`, whose gateway
// wasm must be fetched only then. Last, a Node program bundled by esbuild for Node, run
// by node: the Node entries find their wasm the same way.
//
// esbuild leaves `new URL("…", import.meta.url)` as it is and copies no file, so its builds take
// the one step the README gives: the package's wasm files copied to wasm/ beside the bundle (here
// dist/assets/, below the page, so that a module looking for its wasm anywhere else misses it).
// Vite follows the URL itself (hashed assets) and needs nothing.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import { startProvider } from "./provider.mjs";
import { launchChromium, openPage, startStaticServer } from "./chromium_page.mjs";
import { requests, script } from "./scenarios.mjs";

const repo = fileURLToPath(new URL("../../", import.meta.url));
const app = `${repo}tests/e2e/apps/browser-app`;
const outRoot = `${repo}tests/e2e/artifacts/bundlers`;
const bin = (name) => `${repo}node_modules/.bin/${name}`;
const installed = `${repo}node_modules/llm-baton`;

/** Runs a bundler's CLI in the app's folder (or `cwd`), as a user would; resolves with its output. */
async function cli(command, args, cwd = app) {
  try {
    const { stdout, stderr } = await promisify(execFile)(command, args, { cwd, env: { ...process.env, NO_COLOR: "1" }, timeout: 120_000 });
    return stdout + stderr;
  } catch (e) {
    throw new Error(`${relative(repo, command)} ${args.join(" ")} failed: ${e.message}\n${e.stdout ?? ""}${e.stderr ?? ""}`);
  }
}

/** The README's esbuild step: the package's wasm files in wasm/ beside the bundle. */
function copyWasm(out) {
  mkdirSync(`${out}/wasm`, { recursive: true });
  for (const file of readdirSync(`${installed}/wasm`).filter((f) => f.endsWith(".wasm"))) {
    copyFileSync(`${installed}/wasm/${file}`, `${out}/wasm/${file}`);
  }
}

/**
 * An esbuild site: the bundle in assets/ (a folder below the page, as Vite's is, so a module that
 * looks for its wasm anywhere but beside the bundle misses it), the wasm files copied there.
 */
async function esbuildSite(out, flags, { dir = app, entry = "app.js" } = {}) {
  await cli(bin("esbuild"), [entry, ...flags, `--outdir=${out}/assets`], dir);
  copyWasm(`${out}/assets`);
  const page = readFileSync(`${app}/index.html`, "utf8");
  writeFileSync(`${out}/index.html`, page.replace(`src="./app.js"`, `src="./assets/app.js"`));
}

/**
 * The app in a project as `npm init -y` makes one, whose package.json says "type": "commonjs":
 * esbuild then wraps an entry named .js as CommonJS, where the package's top-level await cannot
 * run and the page does nothing, so the README names the entry .mjs (or sets "type": "module").
 */
function commonjsProject() {
  const dir = `${outRoot}/commonjs-project`;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/package.json`, JSON.stringify({ name: "commonjs-project", version: "1.0.0", type: "commonjs" }, null, 2));
  copyFileSync(`${app}/app.js`, `${dir}/app.mjs`);
  return dir;
}

/** Each build writes the site into `out` (its index.html at the top). */
const BUILDS = {
  "esbuild --bundle --format=esm": (out) => esbuildSite(out, ["--bundle", "--format=esm"]),
  'esbuild --bundle --format=esm, in a "type": "commonjs" project, its entry app.mjs': (out) =>
    esbuildSite(out, ["--bundle", "--format=esm"], { dir: commonjsProject(), entry: "app.mjs" }),
  "esbuild --bundle --format=esm --splitting --minify": (out) => esbuildSite(out, ["--bundle", "--format=esm", "--splitting", "--minify"]),
  "vite build": async (out) => {
    await cli(bin("vite"), ["build", "--outDir", out, "--emptyOutDir"]);
  },
};

/** Every file under `dir`, relative to it. */
function filesUnder(dir) {
  return readdirSync(dir, { recursive: true }).filter((f) => statSync(join(dir, f)).isFile()).sort();
}

/** `{ js, jsGzip, wasm }` bytes of a build's output, and its file list. */
function sizesOf(dir) {
  const files = filesUnder(dir);
  const sum = (pick, measure) => files.filter(pick).reduce((n, f) => n + measure(readFileSync(join(dir, f))), 0);
  const js = (f) => f.endsWith(".js");
  return {
    files,
    js: sum(js, (b) => b.length),
    jsGzip: sum(js, (b) => gzipSync(b, { level: 9 }).length),
    wasm: sum((f) => f.endsWith(".wasm"), (b) => b.length),
  };
}

// The hazard behind the gateway's startup crash, held for every module of the package (also those
// no build above runs, such as llm-baton/ai-sdk): a class or function expression with a name of
// its own. A bundler joins the modules into one scope and renames clashing top-level names; esbuild
// may rename an outer binding to the expression's name, which inside the expression means the
// expression itself (`class Baton extends Baton`, evanw/esbuild#4273). Declarations are safe.
test("no module of the package has a named class or function expression", () => {
  const pkg = `${repo}pkg`;
  const modules = ["", "gateway/", "clouds/", "gateway/clouds/"].flatMap((dir) => readdirSync(`${pkg}/${dir}`).filter((f) => f.endsWith(".js")).map((f) => `${dir}${f}`));
  const named = /(?:[=(,:?&|!]|\breturn|\bnew|\byield|\bawait)\s*(?:class|function\*?)\s+(?!extends\b)([A-Za-z_$][\w$]*)/g;
  const found = [];
  for (const file of modules) {
    const code = readFileSync(`${pkg}/${file}`, "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
    for (const m of code.matchAll(named)) found.push(`pkg/${file}: ${m[0].trim()}`);
  }
  assert.deepEqual(found, [], "name the binding instead (const X = class { ... }, or an object key), not the expression");
  assert.ok(modules.includes("gateway/api.js") && modules.length > 10, `the scan found the package's modules: ${modules.join(", ")}`);
});

const TEXT = "The backup answers the bundled app.";
const target = (providerUrl, id, format) => ({ format, baseUrl: `${providerUrl}/s/${id}/v1`, model: "scripted-model", apiKey: "sk-test-bundlers-not-a-secret" });

describe("a browser app built by esbuild and Vite, in Chromium", { timeout: 180_000 }, () => {
  let provider;
  let browser;
  before(async () => {
    provider = await startProvider();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    provider?.stop();
  });

  for (const [name, build] of Object.entries(BUILDS)) {
    test(name, async () => {
      const out = `${outRoot}/${name.replace(/[^a-z0-9]+/gi, "-")}`;
      rmSync(out, { recursive: true, force: true });
      const t0 = performance.now();
      await build(out);
      const buildMs = performance.now() - t0;
      const sizes = sizesOf(out);
      console.log(`${name}: built in ${buildMs.toFixed(0)} ms; JavaScript ${sizes.js} bytes (${sizes.jsGzip} gzipped), wasm ${sizes.wasm} bytes; files: ${sizes.files.join(", ")}`);
      // The README's esbuild step copies the package's four wasm files; Vite emits the two this
      // app can load, not the clouds' (llm-baton/clouds is another entry).
      const wasmFiles = sizes.files.filter((f) => f.endsWith(".wasm"));
      assert.equal(wasmFiles.length, name.startsWith("vite") ? 2 : 4, `the build's wasm files: ${sizes.files.join(", ")}`);
      for (const build of ["llm_baton_bg", "llm_baton_gateway_bg"]) assert.ok(wasmFiles.some((f) => f.includes(build)), `the build holds ${build}: ${sizes.files.join(", ")}`);

      const env = { providerUrl: provider.url, runtime: `bundle-${name.replace(/[^a-z0-9]+/gi, "-")}` };
      const server = await startStaticServer(readFileSync(`${out}/index.html`, "utf8"), [""], out);
      const log = [];
      const page = await openPage(browser, `http://127.0.0.1:${server.address().port}/`, "batonAppReady", log, `the ${name} bundle`).catch(async (e) => {
        server.close();
        throw e;
      });
      const wasmFetched = [];
      page.on("request", (r) => {
        if (new URL(r.url()).pathname.endsWith(".wasm")) wasmFetched.push(new URL(r.url()).pathname.split("/").pop());
      });
      const inPage = async (method, ...args) => {
        try {
          return await page.evaluate(([m, a]) => window.batonApp[m](...a), [method, args]);
        } catch (e) {
          throw new Error(`${name}: batonApp.${method} failed in Chromium: ${e.message}\npage log:\n${log.join("\n")}`);
        }
      };
      try {
        const route = async (label, primaryFormat, backupFormat) => {
          const p = await script(env, `${label}-p`, [{ status: 503, message: "primary overloaded" }]);
          const b = await script(env, `${label}-b`, [{ text: TEXT, chunks: 4, chunkDelayMs: 20 }]);
          const config = {
            targets: { primary: target(provider.url, p, primaryFormat), backup: target(provider.url, b, backupFormat) },
            routes: { chat: { fallback: ["primary", "backup"] } },
          };
          return { p, b, config };
        };

        const whole = await route("complete", "openai_chat", "anthropic_messages");
        assert.deepEqual(await inPage("complete", whole.config, "chat", "Say hello."), { text: TEXT, target: "backup" });
        await requests(env, whole.p, 1, "complete: primary");
        await requests(env, whole.b, 1, "complete: backup");

        const streamed = await route("stream", "anthropic_messages", "openai_chat");
        const stream = await inPage("stream", streamed.config, "chat", "Say hello.");
        assert.equal(stream.pieces.join(""), TEXT, "stream: the text");
        assert.ok(stream.pieces.length >= 2, `stream: the text came in pieces, got ${JSON.stringify(stream.pieces)}`);
        assert.equal(stream.target, "backup", "stream: the target that answered");
        await requests(env, streamed.p, 1, "stream: primary");
        await requests(env, streamed.b, 1, "stream: backup");

        const traced = await route("traced", "openai_chat", "openai_chat");
        assert.deepEqual(
          await inPage("traced", traced.config, "chat", "Say hello."),
          { text: TEXT, spans: [["chat chat", true], ["chat scripted-model", true], ["chat scripted-model", true]] },
          "a traced call: the call's span and one per attempt, each ended",
        );
        await requests(env, traced.p, 1, "traced: primary");
        assert.equal((await requests(env, traced.b, 1, "traced: backup")).log[0].headers.traceparent, "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000003-01", "traced: the backup attempt's traceparent");

        const error = await inPage("configError");
        assert.equal(error?.isBatonError, true, `a config mistake is a BatonError: ${JSON.stringify(error)}`);
        assert.equal(error.kind, "config");

        assert.deepEqual(wasmFetched.filter((f) => f.includes("gateway")), [], "the gateway's wasm is not fetched before baton.fetch");
        const viaFetch = await route("fetch", "openai_chat", "anthropic_messages");
        const fetched = await inPage("fetchChat", viaFetch.config, "chat", "Say hello.");
        assert.equal(fetched.status, 200, `baton.fetch: the status (${JSON.stringify(fetched)})`);
        assert.equal(fetched.target, "backup", "baton.fetch: x-baton-target");
        assert.equal(fetched.pieces.join(""), TEXT, "baton.fetch: the streamed deltas' text");
        await requests(env, viaFetch.p, 1, "baton.fetch: primary");
        await requests(env, viaFetch.b, 1, "baton.fetch: backup");
        assert.equal(wasmFetched.filter((f) => f.includes("gateway")).length, 1, `baton.fetch fetched the gateway's wasm once: ${wasmFetched.join(", ")}`);
        assert.deepEqual(log.filter((l) => l.startsWith("pageerror")), [], "no uncaught error in the page");
      } finally {
        await page.close();
        server.close();
      }
    });
  }
});

// The Node entries find their wasm the same way: a Node program bundled by esbuild (for a server
// or a function host) reads both wasm files from wasm/ beside the bundle.
test("a Node program built by esbuild --platform=node, run by node", { timeout: 60_000 }, async (t) => {
  const provider = await startProvider();
  t.after(() => provider.stop());
  const env = { providerUrl: provider.url, runtime: "bundle-node" };
  const p = await script(env, "node-p", [{ status: 503, message: "primary overloaded" }]);
  const b = await script(env, "node-b", [{ text: TEXT }]);
  const config = {
    targets: { primary: target(provider.url, p, "openai_chat"), backup: target(provider.url, b, "anthropic_messages") },
    routes: { chat: { fallback: ["primary", "backup"] } },
  };
  const out = `${outRoot}/esbuild-platform-node`;
  rmSync(out, { recursive: true, force: true });
  const nodeApp = `${repo}tests/e2e/apps/node-app`;
  const args = ["main.js", "--bundle", "--platform=node", "--format=esm", `--outdir=${out}`];
  try {
    await promisify(execFile)(bin("esbuild"), args, { cwd: nodeApp, timeout: 60_000 });
  } catch (e) {
    throw new Error(`esbuild ${args.join(" ")} failed: ${e.message}\n${e.stderr ?? ""}`);
  }
  copyWasm(out);
  const sizes = sizesOf(out);
  console.log(`esbuild --platform=node: JavaScript ${sizes.js} bytes; files: ${sizes.files.join(", ")}`);
  const { stdout } = await promisify(execFile)(process.execPath, [`${out}/main.js`, JSON.stringify(config)], { cwd: out, timeout: 30_000 })
    .catch((e) => {
      throw new Error(`node ${out}/main.js failed: ${e.message}\n${e.stdout ?? ""}${e.stderr ?? ""}`);
    });
  assert.deepEqual(JSON.parse(stdout), {
    complete: { text: TEXT, target: "backup" },
    fetch: { status: 200, target: "backup", text: TEXT },
  });
  await requests(env, p, 2, "primary");
  await requests(env, b, 2, "backup");
});
