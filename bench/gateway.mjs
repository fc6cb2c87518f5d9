// The gateway against the gateways people deploy (issue 29): llm-baton's gateway under Deno,
// workerd (Miniflare) and the Node command, Portkey's open-source gateway (npm, pinned in
// bench/package-lock.json, on Node), LiteLLM proxy (PyPI, pinned below, in bench/.venv, made
// here; skipped with the reason when it cannot be installed) and direct, each in front of the
// same fake OpenAI upstream (lib/gateway-upstream.mjs: 60 deltas written at once) with the same
// route: a primary tried twice, then a backup (`workerd` is the example Worker, its breakers
// shared through the Durable Object; `workerd-local` the same Worker with them in the isolate,
// as Deno and Node keep them); and `floor`, `floor-workerd` and `floor-node`, a bare JavaScript
// pass-through on Deno, in workerd and on node:http (lib/gateway-floor-deno.mjs,
// lib/gateway-floor-workerd.mjs, lib/gateway-floor-node.mjs: what the runtime itself costs per
// stream), `floor-byob` Deno's reading the upstream into one reused buffer as llm-baton does. Per gateway: whole and streamed answers at 1, 16 and 64
// connections, then a round whose primary answers 503, counting upstream calls (not for the
// pass-throughs and direct). Writes
// bench/.work/gateway.json; `node gateway.mjs deno portkey` runs only those.
//
// GATEWAY_BENCH_SECONDS (default 5) and GATEWAY_BENCH_WARMUP_SECONDS (default 1) size each cell;
// GATEWAY_BENCH_WRITES=each has the upstream write each stream event on its own turn;
// GATEWAY_BENCH_CELLS=stream-16,stream-64 runs only the cells named (whole-N, stream-N, fault,
// fresh). `fresh` starts each gateway FRESH_PASSES times anew and measures it cold (runFresh), and
// the Deno and Node pass-throughs too: the least a fresh process on that runtime adds.
// On two or more cores each gateway runs pinned to the last core, and the bench (the load) and the
// upstream to the others, as the issue's table was measured (GATEWAY_BENCH_PIN=0: not pinned);
// the `--workers` rows run on every core.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { loadNow } from "./lib/common.mjs";
import { cpuSeconds, peakRssMiB, pinTree, runCell, runFresh } from "./lib/gateway-load.mjs";
import { LITELLM_KEY, litellmDeployment, litellmVersion, portkeyVersion, startLitellm, startPortkey, withWorkerdPid } from "./lib/servers.mjs";
import { Miniflare } from "miniflare";
import { spawnAnnounced } from "../tests/e2e/provider.mjs";
import { startDenoGateway, startNodeGateway, startWorkerdGateway } from "../tests/e2e/gateway_hosts.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));
const repo = fileURLToPath(new URL("..", import.meta.url));
const KEY = "sk-bench-not-a-secret";
const MEASURE_MS = 1000 * Number(process.env.GATEWAY_BENCH_SECONDS ?? 5);
const WARMUP_MS = 1000 * Number(process.env.GATEWAY_BENCH_WARMUP_SECONDS ?? 1);
const CONNECTIONS = [1, 16, 64];
const FAULT_CONNECTIONS = 16;
/** Fresh processes per gateway in the `fresh` cell; its figure is their median. */
const FRESH_PASSES = 5;
const only = process.argv.slice(2);
const want = (g) => only.length === 0 || only.includes(g);
const cells = process.env.GATEWAY_BENCH_CELLS?.split(",") ?? null;
const wantCell = (name) => cells === null || cells.includes(name);

const upstreamProcess = await spawnAnnounced(process.execPath, [`${here}lib/gateway-upstream.mjs`], { name: "the bench upstream", variable: "UPSTREAM_URL" });
const UP = upstreamProcess.url;

/** The core each gateway is pinned to, and the cores of the rest; null when not pinning. */
const cores = availableParallelism();
const PIN = process.env.GATEWAY_BENCH_PIN !== "0" && cores >= 2
  ? { gateway: String(cores - 1), rest: cores === 2 ? "0" : `0-${cores - 2}` }
  : null;
const pinned = PIN !== null && pinTree(process.pid, PIN.rest) && pinTree(upstreamProcess.pid, PIN.rest);
/**
 * Pins a started gateway `gw` of `g` to its core; a `--workers` row gets every core back (it was
 * started from the pinned bench, whose affinity it inherited).
 */
const pinGateway = (g, gw) => pinned && gw.pid != null && pinTree(gw.pid, g.pin === false ? `0-${cores - 1}` : PIN.gateway);
const counts = async () => (await fetch(`${UP}/_counts`)).json();

const message = (model, stream) => JSON.stringify({ model, stream, messages: [{ role: "user", content: "Say hello." }], max_tokens: 100 });
const wholeOk = (res) => res.body.includes("tok59") && res.body.includes('"choices"');
const streamOk = (res) => res.body.includes("tok59") && res.body.includes("data: [DONE]");

/** llm-baton's config: the route `chat`, and `chat503` whose primary answers 503. */
const batonConfig = {
  targets: {
    p: { format: "openai_chat", baseUrl: `${UP}/ok/v1`, model: "bench-model", apiKey: KEY },
    down: { format: "openai_chat", baseUrl: `${UP}/down/v1`, model: "bench-model", apiKey: KEY },
    b: { format: "openai_chat", baseUrl: `${UP}/ok/v1`, model: "bench-model", apiKey: KEY },
  },
  routes: {
    chat: { fallback: [{ retry: "p", attempts: 2 }, "b"] },
    chat503: { fallback: [{ retry: "down", attempts: 2 }, "b"] },
  },
  deadlineMs: 30_000,
};
const batonRoutes = { model: "chat", faultModel: "chat503", headers: {}, faultHeaders: {} };

/** Portkey's equivalent: a fallback of a target retried once (attempts counts retries) and a backup, per request. */
const portkeyConfig = (primary) => JSON.stringify({
  strategy: { mode: "fallback" },
  targets: [
    { provider: "openai", api_key: KEY, custom_host: `${UP}/${primary}/v1`, retry: { attempts: 1, on_status_codes: [503] } },
    { provider: "openai", api_key: KEY, custom_host: `${UP}/ok/v1` },
  ],
});

/** LiteLLM's equivalent: the model group `chat` (retried once: num_retries 1), falling back to `b`. */
function litellmYaml() {
  const deployment = (name, path) => litellmDeployment(name, `${UP}/${path}/v1`, KEY);
  return `model_list:\n${deployment("chat", "ok")}${deployment("chat503", "down")}${deployment("b", "ok")}` +
    `router_settings:\n  num_retries: 1\n  fallbacks: [{"chat": ["b"]}, {"chat503": ["b"]}]\n` +
    `litellm_settings:\n  telemetry: false\n  drop_params: true\n`;
}

/** lib/gateway-floor-workerd.mjs in Miniflare, served on a direct socket as the workerd gateway is. */
async function startWorkerdFloor() {
  const mf = new Miniflare({
    modules: true,
    scriptPath: `${here}lib/gateway-floor-workerd.mjs`,
    compatibilityDate: "2025-06-01",
    bindings: { UPSTREAM: `${UP}/ok` },
    unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
  });
  await mf.ready;
  return { url: (await mf.unsafeGetDirectURL()).href.replace(/\/$/, ""), stop: () => mf.dispose() };
}

const miniflareVersion = () => `miniflare ${JSON.parse(readFileSync(`${repo}node_modules/miniflare/package.json`, "utf8")).version}`;

/** The bare pass-through on Deno, reading the upstream with the `reader` named (FLOOR_READER). */
const startFloor = (reader) => spawnAnnounced(`${repo}node_modules/.bin/deno`, ["run", "--no-lock", "--allow-net=127.0.0.1", "--allow-env", `${here}lib/gateway-floor-deno.mjs`], {
  name: "the Deno pass-through", variable: "GATEWAY_URL", spawnOptions: { env: { ...process.env, UPSTREAM: `${UP}/ok`, FLOOR_READER: reader, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" } } });

/** Each gateway: how to start it, and what a request through it says. */
const GATEWAYS = {
  floor: {
    label: "JS pass-through (Deno)",
    start: () => startFloor("default"),
    model: "bench-model", headers: {}, passThrough: true, freshFloor: true,
  },
  "floor-byob": {
    label: "JS pass-through, BYOB reads (Deno)",
    start: () => startFloor("byob"),
    model: "bench-model", headers: {}, passThrough: true,
  },
  "floor-node": {
    label: "JS pass-through (Node, node:http)",
    freshFloor: true,
    start: () => spawnAnnounced(process.execPath, [`${here}lib/gateway-floor-node.mjs`], { name: "the Node pass-through", variable: "GATEWAY_URL", spawnOptions: { env: { ...process.env, UPSTREAM: `${UP}/ok` } } }),
    model: "bench-model", headers: {}, passThrough: true,
    version: () => `Node ${process.version}`,
  },
  "floor-workerd": {
    label: "JS pass-through (workerd, Miniflare)",
    start: () => withWorkerdPid(startWorkerdFloor),
    model: "bench-model", headers: {}, passThrough: true,
    version: miniflareVersion,
  },
  direct: {
    label: "direct",
    start: async () => ({ url: `${UP}/ok`, pid: null, stop: () => {} }),
    model: "bench-model", headers: {}, passThrough: true,
  },
  deno: {
    label: "llm-baton (Deno)",
    start: () => startDenoGateway(batonConfig),
    ...batonRoutes,
    version: () => execFileSync(`${repo}node_modules/.bin/deno`, ["--version"]).toString().split(" ").slice(0, 2).join(" "),
  },
  workerd: {
    label: "llm-baton (workerd, Miniflare, Durable Object health)",
    start: () => withWorkerdPid(() => startWorkerdGateway(batonConfig)),
    ...batonRoutes,
    version: miniflareVersion,
  },
  "workerd-local": {
    label: "llm-baton (workerd, breakers in the isolate)",
    start: () => withWorkerdPid(() => startWorkerdGateway(batonConfig, { sharedHealth: false })),
    ...batonRoutes,
    version: miniflareVersion,
  },
  node: {
    label: "llm-baton (Node server)",
    start: () => startNodeGateway(batonConfig),
    ...batonRoutes,
    version: () => `Node ${process.version}`,
  },
  // gateway.metrics on: each request counted for /metrics (pkg/gateway/metrics.js).
  "node-metrics": {
    label: "llm-baton (Node server, /metrics on)",
    start: () => startNodeGateway({ ...batonConfig, gateway: { metrics: { apiKey: "bench-metrics-scraper-key" } } }),
    ...batonRoutes,
    version: () => `Node ${process.version}`,
  },
  // --workers: the same command on node:cluster, breakers and retry budget in the primary.
  "node-2": {
    label: "llm-baton (Node server, --workers 2)",
    start: () => startNodeGateway(batonConfig, { workers: 2 }),
    pin: false,
    ...batonRoutes,
    version: () => `Node ${process.version}`,
  },
  "node-cores": {
    label: `llm-baton (Node server, --workers ${cores}: one per core)`,
    start: () => startNodeGateway(batonConfig, { workers: cores }),
    pin: false,
    ...batonRoutes,
    version: () => `Node ${process.version}`,
  },
  portkey: {
    label: "Portkey gateway",
    start: startPortkey,
    model: "bench-model", headers: { "x-portkey-config": portkeyConfig("ok") }, faultModel: "bench-model", faultHeaders: { "x-portkey-config": portkeyConfig("down") },
    version: portkeyVersion,
  },
  litellm: {
    label: "LiteLLM proxy",
    start: () => startLitellm(litellmYaml()),
    model: "chat", headers: { authorization: `Bearer ${LITELLM_KEY}` }, faultModel: "chat503", faultHeaders: { authorization: `Bearer ${LITELLM_KEY}` },
    version: litellmVersion,
  },
};

/**
 * The `fresh` cell: FRESH_PASSES new processes of gateway `g`, each measured by runFresh against
 * the upstream direct. Returns a reason when the gateway cannot start (the rest is skipped too).
 */
async function fresh(key, g, result) {
  const passes = [];
  for (let pass = 0; pass < FRESH_PASSES; pass++) {
    let gw;
    try {
      gw = await g.start();
    } catch (e) {
      gw = { skip: `did not start: ${String(e.message).slice(0, 300)}` };
    }
    if (gw.skip) {
      result.skip = gw.skip;
      console.log(`${key}: skipped: ${gw.skip}`);
      return gw.skip;
    }
    pinGateway(g, gw);
    try {
      passes.push(await runFresh({
        url: `${gw.url}/v1/chat/completions`, headers: g.headers, body: message(g.model, false),
        directUrl: `${UP}/ok/v1/chat/completions`, directBody: message("bench-model", false),
        check: wholeOk, pid: gw.pid,
      }));
    } finally {
      await gw.stop();
    }
  }
  const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];
  result.fresh = {
    passes,
    addedMs: median(passes.map((p) => p.addedMs)),
    cpuMsPerRequest: passes.every((p) => p.cpuMsPerRequest !== null) ? median(passes.map((p) => p.cpuMsPerRequest)) : null,
  };
  console.log(`${key} fresh: added ${result.fresh.addedMs.toFixed(2)} ms (passes ${passes.map((p) => p.addedMs.toFixed(2)).join(", ")}), CPU ${result.fresh.cpuMsPerRequest?.toFixed(2) ?? "-"} ms per request`);
  return null;
}

const out = { node: process.version, pinned: pinned ? PIN : null, measureMs: MEASURE_MS, warmupMs: WARMUP_MS, deltas: 60, eachWrite: process.env.GATEWAY_BENCH_WRITES === "each", gateways: {} };
try {
  for (const [key, g] of Object.entries(GATEWAYS)) {
    if (!want(key)) continue;
    const result = { label: g.label, load: [loadNow()], cells: {} };
    out.gateways[key] = result;
    if ((!g.passThrough || g.freshFloor) && wantCell("fresh")) {
      const skipped = await fresh(key, g, result);
      if (skipped) continue;
    }
    let gw;
    try {
      gw = await g.start();
    } catch (e) {
      result.skip = `did not start: ${String(e.message).slice(0, 300)}`;
      console.log(`${key}: ${result.skip}`);
      continue;
    }
    if (gw.skip) {
      result.skip = gw.skip;
      console.log(`${key}: skipped: ${gw.skip}`);
      continue;
    }
    result.pinned = pinGateway(g, gw);
    try {
      result.version = g.version?.() ?? null;
      const url = `${gw.url}/v1/chat/completions`;
      const cell = (name, opts) => runCell({ url, warmupMs: WARMUP_MS, measureMs: MEASURE_MS, pid: gw.pid, ...opts }).then((r) => {
        result.cells[name] = r;
        console.log(`${key} ${name}: ${r.n} in ${MEASURE_MS / 1000} s (${r.perSecond.toFixed(0)}/s), p50 ${r.p50?.toFixed(2)} ms, p99 ${r.p99?.toFixed(2)} ms${r.cpuSecondsPer1000 != null ? `, CPU ${r.cpuSecondsPer1000.toFixed(2)} s per 1000` : ""}${r.errors ? `, ${r.errors} errors (${r.firstError})` : ""}`);
        return r;
      });
      for (const stream of [false, true]) {
        for (const connections of CONNECTIONS) {
          if (!wantCell(`${stream ? "stream" : "whole"}-${connections}`)) continue;
          await cell(`${stream ? "stream" : "whole"}-${connections}`, { body: message(g.model, stream), headers: g.headers, connections, check: stream ? streamOk : wholeOk });
        }
      }
      if (!g.passThrough && wantCell("fault")) {
        const before = await counts();
        const r = await cell(`fault-${FAULT_CONNECTIONS}`, { body: message(g.faultModel, false), headers: g.faultHeaders, connections: FAULT_CONNECTIONS, check: wholeOk });
        const after = await counts();
        r.upstreamCallsPerRequest = (after.ok + after.down - before.ok - before.down) / r.total;
        r.primaryCallsPerRequest = (after.down - before.down) / r.total;
      }
      if (gw.pid != null) {
        result.peakRssMiB = peakRssMiB(gw.pid);
        result.cpuSecondsTotal = cpuSeconds(gw.pid);
      }
    } finally {
      await gw.stop();
    }
    result.load.push(loadNow());
  }
} finally {
  upstreamProcess.stop();
}
mkdirSync(`${here}.work`, { recursive: true });
writeFileSync(`${here}.work/gateway.json`, JSON.stringify(out, null, 1));
process.exit(0);
