// Starts and stops the scripted provider (tests/provider) for one runner. Uses node:child_process,
// which Node and Deno both have; the scenarios themselves only talk to it over HTTP.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

const repo = fileURLToPath(new URL("../../", import.meta.url));

/** The provider binary: $BATON_PROVIDER_BIN, else cargo's debug build in $CARGO_TARGET_DIR or target/. */
export function providerBinary() {
  if (process.env.BATON_PROVIDER_BIN) return process.env.BATON_PROVIDER_BIN;
  const targetDir = process.env.CARGO_TARGET_DIR || `${repo}target`;
  return `${targetDir}/debug/baton-provider`;
}

/**
 * Spawns the provider on a free loopback port and waits for its first stdout line,
 * `BATON_PROVIDER_URL=http://127.0.0.1:PORT`. Resolves to `{ url, stop }`.
 */
export function startProvider({ timeoutMs = 10_000 } = {}) {
  const bin = providerBinary();
  if (!existsSync(bin)) {
    return Promise.reject(new Error(`the scripted provider ${bin} is missing; build it with \`cargo build -p baton-provider\``));
  }
  return spawnAnnounced(bin, [], { name: "the provider", variable: "BATON_PROVIDER_URL", timeoutMs });
}

/** Scripts scenario `id` on the provider (`PUT /_scenarios/{id}`); throws with the provider's words unless it took them. */
export async function putScenario(providerUrl, id, steps) {
  const res = await fetch(`${providerUrl}/_scenarios/${id}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ steps }),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`PUT /_scenarios/${id}: ${res.status} ${text}`);
}

/** The provider's record of a scenario once none of its requests is open (or 3 s passed). */
export async function upstream(providerUrl, id) {
  const until = performance.now() + 3000;
  for (;;) {
    const r = await (await fetch(`${providerUrl}/_scenarios/${id}`)).json();
    if (r.open === 0 || performance.now() > until) return r;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Spawns a server that announces itself with a stdout line `VARIABLE=http://...` and resolves
 * to `{ url, pid, stop }` once it has. A runner that exits takes the server with it.
 */
export function spawnAnnounced(command, args, { name, variable, timeoutMs = 10_000, spawnOptions = {} }) {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"], ...spawnOptions });
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  };
  process.once("exit", stop);
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`${name} printed no ${variable} line within ${timeoutMs} ms (got ${JSON.stringify(out)})`));
    }, timeoutMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited early (code ${code}, signal ${signal}); stdout: ${JSON.stringify(out)}`));
    });
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      out += chunk;
      // Only a whole line: a chunk may end in the middle of the port.
      const m = new RegExp(`^${variable}=(http://\\S+)\\r?\\n`, "m").exec(out);
      if (!m) return;
      clearTimeout(timer);
      // Keep draining stdout so the server never blocks on a full pipe.
      child.stdout.removeAllListeners("data");
      child.stdout.resume();
      child.removeAllListeners("exit");
      resolve({
        url: m[1].replace(/\/$/, ""),
        pid: child.pid,
        stop: () => {
          process.removeListener("exit", stop);
          stop();
        },
      });
    });
  });
}

/** A free loopback port (listened on once, then let go), for a server a test starts on it. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}
