// Runs the gateway as real HTTP servers on loopback, for the gateway tests and the latency
// benchmark: the example Worker (examples/gateway/) inside workerd (Miniflare), the example Deno
// entry under `deno run`, both configured from the environment (BATON_CONFIG) as a deployment is,
// and the package's Node command (pkg/bin/llm-baton-gateway.js) given a config file, as its users
// run it. Each resolves to `{ url, stop }`, the spawned ones with their `pid`.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { spawnAnnounced } from "./provider.mjs";
import { resolveEntry, WORKERD_CONDITIONS, WORKERD_MODULE_RULES } from "./resolve.mjs";

const repo = fileURLToPath(new URL("../../", import.meta.url));
const example = `${repo}examples/gateway`;
let nodeConfigs = 0;

/**
 * examples/gateway/worker.js in workerd. workerd has no package resolution (wrangler's bundler
 * does it), so the worker is copied with "llm-baton/gateway" pointing at the entry wrangler would pick.
 * A direct socket serves it without Miniflare's entry worker in between, so a client's
 * disconnect reaches the Worker as it would on Cloudflare. Its Durable Object bindings come from
 * wrangler.toml, as wrangler dev would bind them. `sharedHealth: false` leaves the example's
 * health store out, so breakers stay in the isolate (the bench's `workerd-local`).
 */
export async function startWorkerdGateway(config, { sharedHealth = true } = {}) {
  const dir = `${repo}tests/e2e/artifacts/gateway`;
  mkdirSync(dir, { recursive: true });
  let source = readFileSync(`${example}/worker.js`, "utf8")
    .replaceAll(`from "llm-baton/durable"`, `from "../../../../pkg/${resolveEntry(WORKERD_CONDITIONS, "./durable").slice(2)}"`)
    .replace(`from "llm-baton/gateway"`, `from "../../../../pkg/${resolveEntry(WORKERD_CONDITIONS, "./gateway").slice(2)}"`)
    .replace(`from "llm-baton/gateway/env"`, `from "../../../../pkg/${resolveEntry(WORKERD_CONDITIONS, "./gateway/env").slice(2)}"`);
  if (!sharedHealth) {
    const local = source.replace(/createGateway\(config, \{[\s\S]*?\n\}\)/, "createGateway(config)");
    if (local === source) throw new Error("examples/gateway/worker.js no longer ends in createGateway(config, { healthStore }): update startWorkerdGateway");
    source = local;
  }
  writeFileSync(`${dir}/worker.mjs`, `// Generated from examples/gateway/worker.js by tests/e2e/gateway_hosts.mjs.\n${source}`);
  const toml = readFileSync(`${example}/wrangler.toml`, "utf8");
  const mf = new Miniflare({
    modules: true,
    modulesRoot: repo,
    scriptPath: `${dir}/worker.mjs`,
    modulesRules: WORKERD_MODULE_RULES,
    compatibilityDate: /compatibility_date = "([^"]+)"/.exec(toml)[1],
    compatibilityFlags: JSON.parse(/compatibility_flags = (\[[^\]]*\])/.exec(toml)[1]),
    bindings: { BATON_CONFIG: JSON.stringify(config) },
    // wrangler.toml's [[durable_objects.bindings]]: the shared health, in this same worker.
    durableObjects: Object.fromEntries([...toml.matchAll(/name = "(\w+)"\s*\nclass_name = "(\w+)"/g)].map((m) => [m[1], m[2]])),
    unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
  });
  await mf.ready;
  const url = (await mf.unsafeGetDirectURL()).href.replace(/\/$/, "");
  return { url, stop: () => mf.dispose() };
}

/** examples/gateway/deno.mjs under `deno run`, on a free loopback port. */
export function startDenoGateway(config, { timeoutMs = 20_000 } = {}) {
  const deno = `${repo}node_modules/.bin/deno`;
  const args = ["run", "--unstable-no-legacy-abort", "--no-lock", "--no-check", "--allow-net=127.0.0.1", "--allow-read", "--allow-env", `${example}/deno.mjs`];
  const env = { ...process.env, BATON_CONFIG: JSON.stringify(config), HOST: "127.0.0.1", PORT: "0", NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" };
  return spawnAnnounced(deno, args, { name: "the Deno gateway", variable: "GATEWAY_URL", timeoutMs, spawnOptions: { cwd: repo, env } });
}

/**
 * `node pkg/bin/llm-baton-gateway.js --config FILE --port 0 --workers N`, the config written to
 * its own file. One process unless `workers` says more (the shared suites test the gateway, not
 * the workers, whose breakers follow the primary's: gateway_workers.test.mjs). `stop` sends
 * SIGTERM, which the command answers by finishing its in-flight requests.
 */
export function startNodeGateway(config, { timeoutMs = 10_000, workers = 1 } = {}) {
  const dir = `${repo}tests/e2e/artifacts/gateway-node`;
  mkdirSync(dir, { recursive: true });
  nodeConfigs += 1;
  const file = `${dir}/baton-${process.pid}-${nodeConfigs}.json`;
  writeFileSync(file, JSON.stringify(config, null, 2));
  const args = [`${repo}pkg/bin/llm-baton-gateway.js`, "--config", file, "--host", "127.0.0.1", "--port", "0", "--workers", String(workers)];
  return spawnAnnounced(process.execPath, args, { name: "the Node gateway", variable: "GATEWAY_URL", timeoutMs, spawnOptions: { cwd: repo } });
}
