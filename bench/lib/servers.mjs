// Starting the gateways the bench compares llm-baton's with, for the gateway bench (gateway.mjs)
// and the soak (soak.mjs): Portkey's gateway (npm, pinned in bench/package-lock.json, on the
// Node that runs the bench), LiteLLM proxy (PyPI, pinned here, in bench/.venv, made on the first
// run; skipped with the reason when it cannot be installed), and the pid of the workerd process
// behind a Miniflare gateway, for CPU and RSS. Each start resolves to `{ url, pid, stop }` or
// `{ skip }`.
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { processTree } from "./gateway-load.mjs";

const bench = fileURLToPath(new URL("..", import.meta.url));
const LITELLM = "litellm[proxy]==1.108.0";
// LiteLLM refuses to start without a master key; clients send it.
export const LITELLM_KEY = "sk-bench-litellm-not-a-secret";

const freePort = () => new Promise((resolve, reject) => {
  const s = createServer();
  s.once("error", reject);
  s.listen(0, "127.0.0.1", () => { const { port } = s.address(); s.close(() => resolve(port)); });
});

/** Spawns a server that does not announce itself, and waits until `readyPath` answers 200. */
async function spawnPolled(command, args, { env, url, readyPath, timeoutMs, name }) {
  const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, ...env } });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (c) => { stderr = (stderr + c).slice(-2000); });
  const stop = () => { if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM"); };
  process.once("exit", stop);
  const until = performance.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited (code ${child.exitCode}): ${stderr}`);
    try {
      const res = await fetch(`${url}${readyPath}`);
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {}
    if (performance.now() > until) { stop(); throw new Error(`${name} did not answer ${readyPath} within ${timeoutMs} ms: ${stderr}`); }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url, pid: child.pid, stop };
}

/** Portkey's gateway, headless, trusting loopback custom hosts; routes come per request (x-portkey-config). */
export async function startPortkey() {
  const port = await freePort();
  return spawnPolled(process.execPath, [`${bench}node_modules/@portkey-ai/gateway/build/start-server.js`, `--port=${port}`, "--headless"], {
    env: { NODE_ENV: "production", TRUSTED_CUSTOM_HOSTS: "127.0.0.1" }, url: `http://127.0.0.1:${port}`, readyPath: "/", timeoutMs: 20_000, name: "Portkey's gateway" });
}

export const portkeyVersion = () => `${JSON.parse(readFileSync(`${bench}node_modules/@portkey-ai/gateway/package.json`, "utf8")).version} on Node ${process.version}`;

/** bench/.venv with LiteLLM proxy, made once; its `litellm` command, or a reason it cannot be had. */
function litellmCommand() {
  const venv = `${bench}.venv`;
  const bin = `${venv}/bin/litellm`;
  const stamp = `${venv}/installed.txt`;
  if (existsSync(bin) && existsSync(stamp) && readFileSync(stamp, "utf8") === LITELLM) return { bin };
  try {
    if (!existsSync(`${venv}/bin/pip`)) execFileSync("python3", ["-m", "venv", venv], { stdio: "inherit" });
    execFileSync(`${venv}/bin/pip`, ["install", "--disable-pip-version-check", "-q", LITELLM], { stdio: "inherit" });
    writeFileSync(stamp, LITELLM);
    return { bin };
  } catch (e) {
    return { skip: `pip could not install ${LITELLM} into bench/.venv (${String(e.message).split("\n")[0]})` };
  }
}

/** One entry of LiteLLM's model_list: the model group `name` served by an OpenAI-compatible `apiBase`. */
export const litellmDeployment = (name, apiBase, apiKey, extra = "") =>
  `  - model_name: ${name}\n    litellm_params:\n      model: openai/bench-model\n      api_base: ${apiBase}\n      api_key: ${apiKey}\n${extra}`;

/** LiteLLM proxy with the config `yaml` (written to bench/.work/`file`), one worker. */
export async function startLitellm(yaml, file = "litellm.yaml") {
  const cmd = litellmCommand();
  if (cmd.skip) return { skip: cmd.skip };
  mkdirSync(`${bench}.work`, { recursive: true });
  writeFileSync(`${bench}.work/${file}`, yaml);
  const port = await freePort();
  return spawnPolled(cmd.bin, ["--config", `${bench}.work/${file}`, "--host", "127.0.0.1", "--port", String(port), "--num_workers", "1"], {
    env: { LITELLM_MASTER_KEY: LITELLM_KEY, LITELLM_LOCAL_MODEL_COST_MAP: "True", LITELLM_LOG: "ERROR", NO_DOCS: "True" }, url: `http://127.0.0.1:${port}`, readyPath: "/health/liveliness", timeoutMs: 120_000, name: "LiteLLM proxy" });
}

export const litellmVersion = () => execFileSync(`${bench}.venv/bin/python`, ["-c", "import importlib.metadata as m; print(m.version('litellm'))"]).toString().trim();

/** Starts a Miniflare gateway with `start()` and adds the pid of the workerd process it spawned, for CPU and RSS. */
export async function withWorkerdPid(start) {
  const before = new Set(processTree(process.pid));
  const gw = await start();
  const workerd = processTree(process.pid).filter((p) => !before.has(p) && /workerd/.test(readFileSync(`/proc/${p}/cmdline`, "utf8")));
  return { ...gw, pid: workerd[0] ?? null };
}
