// examples/gateway under `wrangler dev`, the way its local-development steps tell a user to run
// it: the example's files as a user's checkout (copied to a fresh folder, with the `npm ci`'d
// node_modules of examples/gateway and `make build`'s pkg/wasm), `.dev.vars` written from
// `.dev.vars.example` with the scripted provider standing in for OpenAI and Anthropic, then the
// pinned wrangler's `dev` offline on a loopback port. wrangler bundles worker.js with its own
// esbuild and runs it, with its Durable Object, in workerd: what a user's local development runs,
// not Miniflare's module loader. The OpenAI SDK then asks the route "chat", whose OpenAI target
// answers 503, whole and streamed: the Anthropic target answers through the failover.
//
// wrangler and the workerd processes it starts are one process group, killed when the test ends
// however it ends (and when this runner exits); the test is bounded by its timeout.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { freePort, startProvider } from "./provider.mjs";
import { requests, script } from "./scenarios.mjs";

const repo = fileURLToPath(new URL("../../", import.meta.url));
const example = `${repo}examples/gateway`;
const wrangler = `${example}/node_modules/wrangler/bin/wrangler.js`;
const STARTUP_MS = 90_000;
const GATEWAY_KEY = "gw-test-wrangler-dev-key";
const TEXT = "The backup answers through wrangler dev.";

/**
 * `.dev.vars.example` with `values` filled in: each name's line (commented out or not) becomes
 * `NAME=value`. A name the example does not list fails, so the example stays the full list.
 */
function devVars(values) {
  let text = readFileSync(`${example}/.dev.vars.example`, "utf8");
  for (const [name, value] of Object.entries(values)) {
    const line = new RegExp(`^(# )?${name}=.*$`, "m");
    assert.match(text, line, `.dev.vars.example lists ${name}`);
    text = text.replace(line, `${name}=${value}`);
  }
  return text;
}

/**
 * wrangler dev in `dir` on `port`: `{ ready, output(), stop() }`, `ready` resolving once it
 * printed "Ready on". An exit or a signal of this process kills it and removes `dir`.
 */
function startWranglerDev(dir, port) {
  const env = {
    ...process.env,
    CI: "1",
    WRANGLER_SEND_METRICS: "false",
    XDG_CONFIG_HOME: `${dir}/.xdg`,
    NO_COLOR: "1",
    FORCE_COLOR: "0",
  };
  const child = spawn(process.execPath, [wrangler, "dev", "--ip", "127.0.0.1", "--port", String(port)], {
    cwd: dir,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let log = "";
  child.stdout.setEncoding("utf8").on("data", (s) => (log += s));
  child.stderr.setEncoding("utf8").on("data", (s) => (log += s));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const kill = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // The group is gone already.
    }
  };
  // The group is not in the terminal's: a Ctrl-C or a runner's SIGTERM reaches only this process,
  // which takes the group (and the folder with its .dev.vars) down with it, then dies of the
  // signal as it would have.
  const killOnExit = () => {
    kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  const killOnSignal = (signal) => {
    killOnExit();
    process.kill(process.pid, signal);
  };
  const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"];
  process.once("exit", killOnExit);
  for (const signal of SIGNALS) process.once(signal, killOnSignal);
  const stop = async () => {
    process.removeListener("exit", killOnExit);
    for (const signal of SIGNALS) process.removeListener(signal, killOnSignal);
    kill("SIGTERM");
    const late = setTimeout(() => kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(late);
    // workerd children that outlived wrangler.
    kill("SIGKILL");
  };
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`wrangler dev printed no "Ready on" within ${STARTUP_MS} ms:\n${log}`)), STARTUP_MS);
    const watch = () => {
      if (/Ready on http:\/\/127\.0\.0\.1:\d+/.test(log)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on("data", watch);
    child.stderr.on("data", watch);
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`wrangler dev exited (code ${code}) before it was ready:\n${log}`));
    });
  });
  return { ready, output: () => log, stop };
}

test("examples/gateway under wrangler dev (.dev.vars, its Durable Object) answers through the failover, whole and streamed", {
  skip: !existsSync(wrangler) && "wrangler is not installed in examples/gateway (cd examples/gateway && npm ci)",
  timeout: 150_000,
}, async (t) => {
  let provider;
  let dir;
  let dev;
  // wrangler first (it may still write into dir), then the rest.
  t.after(async () => {
    await dev?.stop();
    provider?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  provider = await startProvider();
  const env = { providerUrl: provider.url, runtime: "wrangler-dev" };
  const openai = await script(env, "openai", [{ status: 503, message: "primary overloaded" }]);
  const anthropic = await script(env, "anthropic", [{ text: TEXT, chunks: 4, chunkDelayMs: 20 }]);

  // The user's checkout: the example's files, without what git ignores.
  dir = mkdtempSync(`${tmpdir()}/llm-baton-wrangler-dev-`);
  const ignored = new Set(["node_modules", ".wrangler", ".dev.vars"]);
  cpSync(example, dir, { recursive: true, filter: (src) => !ignored.has(src.slice(example.length + 1).split("/")[0]) });
  symlinkSync(`${example}/node_modules`, `${dir}/node_modules`, "dir");
  writeFileSync(`${dir}/.dev.vars`, devVars({
    OPENAI_API_KEY: "sk-test-openai-not-a-secret",
    OPENAI_BASE_URL: `${provider.url}/s/${openai}/v1`,
    ANTHROPIC_API_KEY: "sk-test-anthropic-not-a-secret",
    ANTHROPIC_BASE_URL: `${provider.url}/s/${anthropic}/v1`,
    GATEWAY_API_KEYS: GATEWAY_KEY,
  }));

  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  dev = startWranglerDev(dir, port);
  await dev.ready;
  const readyMs = performance.now() - t0;
  // The first request runs the Worker's top level (createGateway): an error there is a 500.
  const models = await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${GATEWAY_KEY}` }, signal: AbortSignal.timeout(30_000) });
  const modelsText = await models.text();
  assert.equal(models.status, 200, `GET /v1/models: ${modelsText}\nwrangler dev's output:\n${dev.output()}`);
  const servedMs = performance.now() - t0;
  assert.deepEqual(JSON.parse(modelsText).data.map((m) => m.id).sort(), ["anthropic", "chat", "openai"], "the models the Worker serves");

  const client = new OpenAI({ apiKey: GATEWAY_KEY, baseURL: `${url}/v1`, maxRetries: 0, timeout: 30_000 });
  const ask = { model: "chat", messages: [{ role: "user", content: "Say hello." }] };
  const { data: whole, response } = await client.chat.completions.create(ask).withResponse();
  assert.equal(whole.choices[0].message.content, TEXT, "the whole answer's text");
  assert.equal(response.headers.get("x-baton-target"), "anthropic", "the whole answer came from the backup");
  await requests(env, openai, 2, "the whole call: OpenAI (two attempts, both 503)");
  await requests(env, anthropic, 1, "the whole call: Anthropic");

  const deltas = [];
  for await (const chunk of await client.chat.completions.create({ ...ask, stream: true })) {
    const delta = chunk.choices[0]?.delta?.content;
    if (delta) deltas.push(delta);
  }
  assert.equal(deltas.join(""), TEXT, "the streamed text");
  assert.ok(deltas.length >= 2, `the text streamed in pieces: ${JSON.stringify(deltas)}`);
  const primary = await requests(env, openai, 4, "both calls: OpenAI (the streamed call's two attempts too)");
  await requests(env, anthropic, 2, "both calls: Anthropic");

  assert.doesNotMatch(dev.output(), /Uncaught|ReferenceError/, "wrangler dev's output has no uncaught error");
  console.log(`wrangler dev: "Ready on" after ${readyMs.toFixed(0)} ms, the first answer (GET /v1/models) after ${servedMs.toFixed(0)} ms; ` +
    `both calls answered by the Anthropic target after OpenAI's 503s (${primary.requests} OpenAI requests, 2 Anthropic)`);
});
