// The Redis health store (llm-baton/gateway/redis) against a real redis-server (Debian's package,
// `make redis-server`), each on a free loopback port with a temp dir and no persistence:
// - its RESP client: pipelined replies in order, error replies, a password and a database from
//   the URL, an ACL user, a refused password, a server killed and frozen (every command fails
//   within its timeout) and started again (the client reconnects), rediss:// with the server's
//   certificate checked; the password in the URL never appears in an error or a warning;
// - the store in process: one made later knows what another learned and spent, close() sends
//   what waits, junk in the stream teaches nothing, bad arguments are config errors;
// - two real llm-baton-gateway processes sharing one Redis: the second skips a provider the first
//   found dead and spends from the same retry budget, while a third without Redis tries it; after
//   a cooldown one probe leaves both; Redis frozen or killed mid-run leaves both serving on their
//   own breakers with one warning each, no call waiting on it; Redis started again, sharing
//   resumes. A bad URL stops the command naming the field, never the password.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { redisHealthStore } from "llm-baton/gateway/redis";
import { RedisClient, RedisReplyError, RedisUnavailableError, ReplyReader } from "../../pkg/gateway/resp.js";
import { freePort, putScenario, startProvider } from "./provider.mjs";
import { BIN, cleanEnv } from "./gateway_command.mjs";

const repo = fileURLToPath(new URL("../../", import.meta.url));
const REDIS_SERVER = process.env.BATON_REDIS_SERVER ?? "/usr/bin/redis-server";
const KEY = "gw-redis-key";
const PASSWORD = `pw-${Math.random().toString(36).slice(2, 12)}`;
const PROBE_COOLDOWN_MS = 1000;
/** Every process a test started, killed if the runner exits first. */
const children = new Set();
process.on("exit", () => children.forEach((child) => child.kill("SIGKILL")));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * redis-server on `port` with `dir` as its working dir and no persistence; resolves once it
 * accepts connections to `{ child, stop(signal), exited }`.
 */
function startRedis(port, dir, extra = []) {
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no", ...extra];
  const child = spawn(REDIS_SERVER, args, { stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const stop = (signal = "SIGTERM") => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  children.add(child);
  child.on("exit", () => children.delete(child));
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`redis-server not ready within 10 s: ${out}`)), 10_000);
    child.on("exit", (code) => reject(new Error(`redis-server exited (${code}): ${out}`)));
    const read = (chunk) => {
      out += chunk;
      if (!/Ready to accept connections/.test(out)) return;
      clearTimeout(timer);
      resolve({ child, stop, exited });
    };
    child.stdout.setEncoding("utf8").on("data", read);
    child.stderr.setEncoding("utf8").on("data", read);
  });
}

/** How long a promise took to settle, and how: `{ ms, value }` or `{ ms, error }`. */
async function timed(promise) {
  const t0 = performance.now();
  try {
    const value = await promise;
    return { ms: performance.now() - t0, value };
  } catch (error) {
    return { ms: performance.now() - t0, error };
  }
}

describe("the RESP client against redis-server", { concurrency: 1 }, () => {
  let dir;
  let port;
  let redis;
  before(async () => {
    assert.ok(existsSync(REDIS_SERVER), `${REDIS_SERVER} is missing: run make redis-server (apt-get install redis-server)`);
    dir = mkdtempSync(`${tmpdir()}/baton-redis-`);
    port = await freePort();
    redis = await startRedis(port, dir, ["--requirepass", PASSWORD]);
  });
  after(async () => {
    await redis?.stop("SIGKILL");
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("replies cut anywhere are read whole; nested arrays, nulls, integers and error replies", () => {
    const wire = Buffer.from("+OK\r\n:42\r\n$-1\r\n*2\r\n*2\r\n$2\r\nid\r\n*2\r\n$1\r\na\r\n$3\r\nb\u00e9\r\n$0\r\n\r\n-ERR bad\r\n*-1\r\n");
    for (let cut = 0; cut <= wire.length; cut += 1) {
      const reader = new ReplyReader();
      const replies = [...reader.push(wire.subarray(0, cut)), ...reader.push(wire.subarray(cut))];
      assert.equal(replies.length, 6, `cut at ${cut}`);
      assert.deepEqual(replies.slice(0, 4), ["OK", 42, null, [["id", ["a", "bé"]], ""]]);
      assert.ok(replies[4] instanceof RedisReplyError && replies[4].message === "ERR bad");
      assert.equal(replies[5], null);
    }
    assert.throws(() => new ReplyReader().push(Buffer.from("?what\r\n")), /a reply starts with "\?"/);
  });

  test("pipelined commands get their own replies in order; an error reply fails its command only", async () => {
    const client = new RedisClient(`redis://:${PASSWORD}@127.0.0.1:${port}`, { timeoutMs: 2000 });
    const sets = Array.from({ length: 200 }, (_, i) => client.send("SET", `k${i}`, `value ${i} ü`));
    const gets = client.pipeline(Array.from({ length: 200 }, (_, i) => ["GET", `k${i}`]));
    assert.ok((await Promise.all(sets)).every((r) => r === "OK"));
    assert.deepEqual(await Promise.all(gets), Array.from({ length: 200 }, (_, i) => `value ${i} ü`));
    const [bad, good] = client.pipeline([["INCR", "k1"], ["GET", "missing"]]);
    await assert.rejects(bad, (e) => e instanceof RedisReplyError && /not an integer/.test(e.message));
    assert.equal(await good, null);
    assert.equal(await client.send("XADD", "s", "*", "f", "v").then((id) => /^\d+-\d+$/.test(id)), true);
    const read = await client.send("XREAD", "COUNT", "10", "STREAMS", "s", "0");
    assert.deepEqual(read[0][0], "s");
    assert.deepEqual(read[0][1][0][1], ["f", "v"]);
    client.close();
  });

  test("the URL's password, user and database reach the server; a refused one is never repeated", async () => {
    const inDb3 = new RedisClient(`redis://:${PASSWORD}@127.0.0.1:${port}/3`, { timeoutMs: 2000 });
    const inDb0 = new RedisClient(`redis://default:${PASSWORD}@127.0.0.1:${port}/0`, { timeoutMs: 2000 });
    assert.equal(await inDb3.send("SET", "where", "db3"), "OK");
    assert.equal(await inDb0.send("GET", "where"), null);
    assert.equal(await inDb3.send("GET", "where"), "db3");
    const userPassword = `${PASSWORD}-alice/:@?`;
    await inDb0.send("ACL", "SETUSER", "alice", "on", `>${userPassword}`, "~*", "+@all");
    const alice = new RedisClient(`redis://alice:${encodeURIComponent(userPassword)}@127.0.0.1:${port}`, { timeoutMs: 2000 });
    assert.equal(await alice.send("ACL", "WHOAMI"), "alice");
    assert.equal(alice.where, `redis://127.0.0.1:${port}/0`);

    const states = [];
    const wrong = `${PASSWORD}-wrong`;
    const refused = new RedisClient(`redis://alice:${wrong}@127.0.0.1:${port}`, { timeoutMs: 2000, onState: (up, why) => states.push({ up, why }) });
    const error = (await timed(refused.send("PING"))).error;
    assert.ok(error instanceof RedisUnavailableError, String(error));
    assert.match(error.message, /refused the connection's setup: WRONGPASS/);
    // Down for a backoff: the next command fails at once, without a connection.
    const again = await timed(refused.send("PING"));
    assert.ok(again.error instanceof RedisUnavailableError && again.ms < 50, `${again.error} after ${again.ms} ms`);
    const said = [error.message, again.error.message, ...states.map((s) => s.why)].join("\n");
    assert.ok(states.length === 1 && states[0].up === false && /refused the connection's setup: WRONGPASS/.test(states[0].why), JSON.stringify(states));
    assert.ok(!said.includes(PASSWORD), `the password was repeated: ${said}`);
    for (const c of [inDb3, inDb0, alice, refused]) c.close();
  });

  test("a server killed fails every command within its timeout; started again, the client reconnects", async () => {
    const states = [];
    const client = new RedisClient(`redis://:${PASSWORD}@127.0.0.1:${port}`, { timeoutMs: 300, onState: (up, why) => states.push({ up, why }) });
    assert.equal(await client.send("PING"), "PONG");
    // Frozen: the connection stays open, nothing answers.
    redis.child.kill("SIGSTOP");
    const frozen = await timed(client.send("PING"));
    redis.child.kill("SIGCONT");
    assert.ok(frozen.error instanceof RedisUnavailableError && frozen.ms < 300 + 150, `${frozen.error} after ${frozen.ms} ms`);
    assert.match(frozen.error.message, /did not answer within 300 ms/);
    await sleep(600);
    assert.equal(await client.send("PING"), "PONG");
    // Killed: refused at once, then down until started again.
    await redis.stop("SIGKILL");
    const killed = await timed(client.send("PING"));
    assert.ok(killed.error instanceof RedisUnavailableError && killed.ms < 300, `${killed.error} after ${killed.ms} ms`);
    const refused = [];
    for (let i = 0; i < 5; i += 1) {
      refused.push(await timed(client.send("PING")));
      await sleep(100);
    }
    assert.ok(refused.every((r) => r.error instanceof RedisUnavailableError && r.ms < 300), JSON.stringify(refused.map((r) => r.ms)));
    redis = await startRedis(port, dir, ["--requirepass", PASSWORD]);
    let back = null;
    for (const until = performance.now() + 5000; back === null && performance.now() < until; await sleep(100)) {
      back = await client.send("PING").catch(() => null);
    }
    assert.equal(back, "PONG", "the client did not reconnect within 5 s of the server's restart");
    assert.deepEqual(states.map((s) => s.up), [true, false, true, false, true], JSON.stringify(states));
    assert.ok(!JSON.stringify(states).includes(PASSWORD));
    client.close();
  });

  test("the store: one made later knows what another learned and spent; close() sends what waits; junk in the stream teaches nothing", async () => {
    const url = `redis://:${PASSWORD}@127.0.0.1:${port}/4`;
    const health = { failures: 2, cooldownMs: 30_000, retryBudget: { ratio: 0, minPerSecond: 1 } };
    const warnings = [];
    const options = { health, prefix: `store-test-${Date.now()}:`, onWarning: (m) => warnings.push(m) };
    const failed = (attempt) => ({ type: "leg", leg: { target: "x", outcome: "failed", attempt }, cause: { kind: "http", status: 503, message: "overloaded" } });
    const first = redisHealthStore(url, options);
    first.report([failed(1), failed(2)]);
    assert.equal((await first.admit(["x"])).targets[0].state, "open", "its own replica learned at once");
    await first.close();
    const raw = new RedisClient(url);
    await raw.send("XADD", `${options.prefix}legs`, "*", "from", "someone", "legs", "not json");
    await raw.send("XADD", `${options.prefix}legs`, "*", "legs", JSON.stringify([{ leg: { target: "x" } }]));
    raw.close();
    const later = redisHealthStore(url, options);
    const view = await later.admit(["x", "y"]);
    assert.deepEqual(
      view.targets.map((t) => [t.target, t.state, t.probe]),
      [["x", "open", false], ["y", "closed", false]],
      JSON.stringify(view),
    );
    assert.equal(view.targets[0].lastFailure?.status, 503);
    assert.equal(view.retryBudget, 9, "one retry spent by the first store, of a budget of 10");
    assert.deepEqual(warnings, []);
    await later.close();
    assert.throws(() => redisHealthStore(`redis://:${PASSWORD}@127.0.0.1:${port}/db`), (e) => e.kind === "config" && e.path === "url" && !e.message.includes(PASSWORD));
    assert.throws(() => redisHealthStore(url, { health: { failures: 0 } }), (e) => e.kind === "config" && e.path === "options.health.failures");
    assert.throws(() => redisHealthStore(url, { waitMs: 0 }), /redisHealthStore: options\.waitMs must be a number of milliseconds from 1 to 60000, e\.g\. 40 \(got 0\)/);
  });

  test("rediss:// speaks TLS and checks the server's certificate (a private CA through NODE_EXTRA_CA_CERTS)", async () => {
    const tlsPort = await freePort();
    const made = spawnSync(
      "openssl",
      ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", `${dir}/key.pem`, "-out", `${dir}/cert.pem`, "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
      { encoding: "utf8" },
    );
    assert.equal(made.status, 0, made.stderr);
    const tlsArgs = ["--port", "0", "--tls-port", String(tlsPort), "--tls-cert-file", `${dir}/cert.pem`, "--tls-key-file", `${dir}/key.pem`];
    const tlsRedis = await startRedis(tlsPort, dir, [...tlsArgs, "--tls-ca-cert-file", `${dir}/cert.pem`, "--tls-auth-clients", "no", "--requirepass", PASSWORD]);
    try {
      const url = `rediss://:${PASSWORD}@127.0.0.1:${tlsPort}/2`;
      // A certificate no CA this process trusts signed: refused, the password never sent.
      const untrusted = await timed(new RedisClient(url, { timeoutMs: 2000 }).send("PING"));
      assert.ok(untrusted.error instanceof RedisUnavailableError, String(untrusted.error));
      assert.match(untrusted.error.message, /cannot reach rediss:\/\/127\.0\.0\.1:\d+\/2: DEPTH_ZERO_SELF_SIGNED_CERT/);
      // Trusted: a child process with the CA added, as an operator adds a private CA.
      const script = `import { RedisClient } from ${JSON.stringify(`${repo}pkg/gateway/resp.js`)};
        const client = new RedisClient(process.env.URL, { timeoutMs: 2000 });
        console.log(await client.send("SET", "over", "tls"), await client.send("CLIENT", "INFO").then((i) => /db=2/.test(i)));
        client.close();`;
      const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
        env: { ...process.env, URL: url, NODE_EXTRA_CA_CERTS: `${dir}/cert.pem` },
        encoding: "utf8",
        timeout: 10_000,
      });
      assert.equal(child.stdout.trim(), "OK true", child.stderr);
    } finally {
      await tlsRedis.stop("SIGKILL");
    }
  });
});

/**
 * The gateway command with `args` and `env`, as one process unless `workers` says otherwise
 * (these tests share breakers between processes through Redis; gateway_workers.test.mjs tests the
 * workers); resolves once it printed GATEWAY_URL.
 */
function startGateway(args, env = {}, { workers = 1 } = {}) {
  const child = spawn(process.execPath, [BIN, "--workers", String(workers), ...args], { env: cleanEnv(env), stdio: ["ignore", "pipe", "pipe"] });
  const output = { stdout: "", stderr: "" };
  child.stderr.setEncoding("utf8").on("data", (c) => (output.stderr += c));
  child.stdout.setEncoding("utf8").on("data", (c) => (output.stdout += c));
  const exited = new Promise((resolve) => child.on("exit", resolve));
  children.add(child);
  child.on("exit", () => children.delete(child));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no GATEWAY_URL within 10 s: ${output.stdout} ${output.stderr}`)), 10_000);
    exited.then((code) => reject(new Error(`the gateway exited (${code}): ${output.stderr}`)));
    const check = () => {
      const m = /^GATEWAY_URL=(http:\/\/\S+)\n/m.exec(output.stdout);
      if (!m) return;
      clearTimeout(timer);
      resolve({ url: m[1], output, stop: () => (child.kill("SIGKILL"), exited) });
    };
    child.stdout.on("data", check);
  });
}

/** A chat call on `route` through `gateway`: `{ status, ms, line }`, `line` its access-log line. */
async function call(gateway, route) {
  const before = gateway.output.stdout.length;
  const t0 = performance.now();
  const res = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: route, messages: [{ role: "user", content: "Say hello" }] }),
  });
  await res.text();
  const ms = performance.now() - t0;
  let line;
  for (const until = performance.now() + 1000; performance.now() < until; await sleep(5)) {
    line = gateway.output.stdout.slice(before).split("\n").find((l) => l.includes("POST /v1/chat/completions"));
    if (line) break;
  }
  return { status: res.status, ms, line };
}

async function requests(providerUrl, id) {
  return (await (await fetch(`${providerUrl}/_scenarios/${id}`)).json()).log.length;
}

async function health(gateway) {
  const res = await fetch(`${gateway.url}/v1/health`, { headers: { authorization: `Bearer ${KEY}` } });
  return res.json();
}

describe("llm-baton-gateway processes sharing breakers through Redis", { concurrency: 1 }, () => {
  let dir;
  let port;
  let redis;
  let provider;
  const gateways = [];
  const ids = {};
  let configs;

  before(async () => {
    assert.ok(existsSync(REDIS_SERVER), `${REDIS_SERVER} is missing: run make redis-server (apt-get install redis-server)`);
    dir = mkdtempSync(`${tmpdir()}/baton-redis-gw-`);
    port = await freePort();
    [redis, provider] = await Promise.all([startRedis(port, dir, ["--requirepass", PASSWORD]), startProvider()]);
    const stamp = Date.now().toString(36);
    for (const name of ["dead", "deadLater", "deadForWorkers", "backup"]) ids[name] = `redis-${name}-${stamp}`;
    await putScenario(provider.url, ids.dead, [{ status: 503 }]);
    await putScenario(provider.url, ids.deadLater, [{ status: 503 }]);
    await putScenario(provider.url, ids.deadForWorkers, [{ status: 503 }]);
    await putScenario(provider.url, ids.backup, [{}]);
    const target = (id) => ({ format: "openai_chat", baseUrl: `${provider.url}/s/${id}/v1`, model: "scripted-model", apiKey: "sk-test-not-a-secret" });
    const config = {
      targets: { dead: target(ids.dead), deadLater: target(ids.deadLater), deadForWorkers: target(ids.deadForWorkers), backup: target(ids.backup) },
      routes: {
        first: { fallback: ["dead", "backup"] },
        later: { fallback: ["deadLater", "backup"] },
        workers: { fallback: ["deadForWorkers", "backup"] },
        ok: { fallback: ["backup"] },
      },
      // A budget of 10 units, no deposits: what is left shows what everyone spent.
      health: { failures: 2, cooldownMs: 60_000, retryBudget: { ratio: 0, minPerSecond: 1 } },
      deadlineMs: 10_000,
      gateway: { apiKeys: [KEY] },
    };
    const url = `redis://:${PASSWORD}@127.0.0.1:${port}/1`;
    configs = {
      // The first names Redis in its config, the second in GATEWAY_REDIS_URL, the third not at all.
      inConfig: `${dir}/in-config.json`,
      plain: `${dir}/plain.json`,
      url,
    };
    writeFileSync(configs.inConfig, JSON.stringify({ ...config, gateway: { ...config.gateway, healthStore: { redis: url } } }));
    writeFileSync(configs.plain, JSON.stringify(config));
    // Breakers of their own (another prefix), one failure opening them for 1 s.
    const probing = {
      ...config,
      health: { failures: 1, cooldownMs: PROBE_COOLDOWN_MS },
      gateway: { apiKeys: [KEY], healthStore: { redis: url, prefix: "probe-test:" } },
    };
    configs.probing = `${dir}/probing.json`;
    writeFileSync(configs.probing, JSON.stringify(probing));
  });
  after(async () => {
    await Promise.all(gateways.map((g) => g.stop()));
    await redis?.stop("SIGKILL");
    provider?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("a bad Redis setting stops the command naming the field, never the password", () => {
    const refusals = [
      [["--config", configs.plain], { GATEWAY_REDIS_URL: `http://:${PASSWORD}@127.0.0.1:${port}` }, /the config in .*plain\.json is not valid: GATEWAY_REDIS_URL must start with redis:\/\/ or rediss:\/\/ \(TLS\), not http:\/\//],
      [["--config", configs.inConfig], { GATEWAY_REDIS_URL: configs.url }, /gateway\.healthStore is given both in the config and in GATEWAY_REDIS_URL; give it once/],
    ];
    for (const [args, env, message] of refusals) {
      const r = spawnSync(process.execPath, [BIN, ...args, "--port", "0"], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 20_000 });
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, message);
      assert.ok(!r.stderr.includes(PASSWORD), r.stderr);
    }
    const badField = `${dir}/bad-field.json`;
    writeFileSync(badField, JSON.stringify({ targets: {}, gateway: { healthStore: { redis: configs.url, waitMS: 40 } } }));
    const r = spawnSync(process.execPath, [BIN, "--config", badField, "--port", "0"], { encoding: "utf8", timeout: 20_000 });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /gateway\.healthStore\.waitMS is not a known option; known options: redis, waitMs, timeoutMs, prefix/);
  });

  test("a second process skips a provider the first found dead, and spends from the same retry budget; one without Redis tries it", async () => {
    const first = await startGateway(["--config", configs.inConfig, "--port", "0"]);
    const second = await startGateway(["--config", configs.plain, "--port", "0"], { GATEWAY_REDIS_URL: configs.url });
    const alone = await startGateway(["--config", configs.plain, "--port", "0"]);
    gateways.push(first, second, alone);

    const firstCalls = [await call(first, "first"), await call(first, "first")];
    const seen = await requests(provider.url, ids.dead);
    assert.ok(firstCalls.every((c) => c.status === 200 && /target=backup/.test(c.line)), JSON.stringify(firstCalls));
    assert.ok(seen >= 2, `the dead provider saw ${seen} requests from the first process`);
    const spent = firstCalls.reduce((sum, c) => sum + Number(/attempts=(\d+)/.exec(c.line)[1]) - 1, 0);
    await sleep(100); // the first process's legs reach Redis within its 10 ms window

    const secondCall = await call(second, "first");
    assert.equal(secondCall.status, 200);
    assert.match(secondCall.line, /target=backup attempts=1\b/, "the second process went straight to the backup");
    assert.equal(await requests(provider.url, ids.dead), seen, "the second process sent the dead provider nothing");
    const budget = (await health(second)).retryBudget;
    assert.equal(budget?.balance, 10 - spent, `the second process's retry budget after the first spent ${spent}: ${JSON.stringify(budget)}`);
    const secondView = (await health(second)).targets.find((t) => t.target === "dead");
    assert.equal(secondView?.state, "open", JSON.stringify(secondView));

    const aloneCall = await call(alone, "first");
    assert.equal(aloneCall.status, 200);
    assert.match(aloneCall.line, /target=backup attempts=[2-9]/, "a process without Redis tries the dead provider itself");
    assert.ok((await requests(provider.url, ids.dead)) > seen);
    console.log(
      `redis: the first process found the provider dead in ${seen} requests (${spent} retry budget units); the second skipped it` +
        ` (${secondCall.line.trim()}), its budget balance ${budget.balance}; one without Redis tried it (${aloneCall.line.trim()})`,
    );
  });

  test("with --workers 2 each worker shares through Redis: both skip a provider a one-process gateway found dead", async () => {
    const single = await startGateway(["--config", configs.inConfig, "--port", "0"]);
    const pair = await startGateway(["--config", configs.inConfig, "--port", "0"], {}, { workers: 2 });
    gateways.push(single, pair);
    const found = [await call(single, "workers"), await call(single, "workers")];
    assert.ok(found.every((c) => c.status === 200 && /target=backup/.test(c.line)), JSON.stringify(found));
    const seen = await requests(provider.url, ids.deadForWorkers);
    await sleep(100);
    // Calls at once open connections of their own, which the primary deals out to both workers.
    const before = pair.output.stdout.length;
    const results = await Promise.all(Array.from({ length: 8 }, () => call(pair, "workers")));
    assert.ok(results.every((r) => r.status === 200), JSON.stringify(results));
    // A worker writes its access-log line once the exchange has ended, a moment after the answer.
    let lines = [];
    for (const until = performance.now() + 1000; lines.length < 8 && performance.now() < until; await sleep(10)) {
      lines = pair.output.stdout.slice(before).split("\n").filter((l) => l.includes("POST /v1/chat/completions"));
    }
    assert.equal(lines.length, 8, lines.join("\n"));
    assert.ok(lines.every((l) => /target=backup attempts=1\b/.test(l)), `every call went straight to the backup:\n${lines.join("\n")}`);
    const workers = new Set(lines.map((l) => /worker=(\d+)/.exec(l)?.[1]));
    assert.equal(workers.size, 2, `both workers served: ${lines.join("\n")}`);
    assert.equal(await requests(provider.url, ids.deadForWorkers), seen, "neither worker sent the dead provider anything");
  });

  test("when the cooldown ends, a burst of calls on both processes sends the dead provider one probe", async () => {
    const pair = [await startGateway(["--config", configs.probing, "--port", "0"]), await startGateway(["--config", configs.probing, "--port", "0"])];
    gateways.push(...pair);
    const before = await requests(provider.url, ids.dead);
    assert.match((await call(pair[0], "first")).line, /target=backup attempts=2\b/, "the first process's failure opens the breaker");
    await sleep(100);
    assert.match((await call(pair[1], "first")).line, /target=backup attempts=1\b/, "the second learns it at once");
    assert.equal(await requests(provider.url, ids.dead), before + 1);
    await sleep(PROBE_COOLDOWN_MS + 300);
    const logged = pair.map((g) => g.output.stdout.length);
    const burst = await Promise.all([0, 1, 0, 1, 0, 1].map((i) => call(pair[i], "first")));
    // Concurrent calls: each process's new access-log lines, not one per call (a line may come
    // just after its response).
    const newLines = () => pair.flatMap((g, i) => g.output.stdout.slice(logged[i]).split("\n").filter((l) => l.includes("POST /v1/chat/completions")));
    for (const until = performance.now() + 1000; newLines().length < burst.length && performance.now() < until; ) await sleep(10);
    const lines = newLines();
    assert.ok(burst.every((c) => c.status === 200), JSON.stringify(burst));
    assert.equal(lines.filter((l) => /target=backup attempts=1\b/.test(l)).length, 5, lines.join("\n"));
    assert.equal(lines.filter((l) => /target=backup attempts=2\b/.test(l)).length, 1, lines.join("\n"));
    const probes = (await requests(provider.url, ids.dead)) - before - 1;
    assert.equal(probes, 1, `the dead provider saw ${probes} probes after the cooldown:\n${lines.join("\n")}`);
    console.log(`redis: a burst of 6 calls over 2 processes after the cooldown sent the dead provider ${probes} probe`);
  });

  test("Redis frozen: calls go on without waiting for it, the connection is given up after its timeout", async () => {
    const [first, second] = gateways;
    const warned = gateways.map((g) => g.output.stderr.length);
    redis.child.kill("SIGSTOP");
    const during = [];
    try {
      for (const until = performance.now() + 1500; performance.now() < until; await sleep(50)) {
        during.push(await call(first, "first"), await call(second, "first"));
      }
    } finally {
      redis.child.kill("SIGCONT");
    }
    assert.ok(during.every((c) => c.status === 200), JSON.stringify(during.filter((c) => c.status !== 200)));
    const slowest = Math.max(...during.map((c) => c.ms));
    // A call that waited for the frozen server would take its whole command timeout (1000 ms).
    assert.ok(slowest < 800, `the slowest call while Redis was frozen took ${Math.round(slowest)} ms`);
    assert.ok(during.every((c) => /target=backup attempts=1\b/.test(c.line)), JSON.stringify(during));
    for (const [i, g] of [first, second].entries()) {
      const said = g.output.stderr.slice(warned[i]);
      assert.match(said, /is unreachable \(redis:\/\/127\.0\.0\.1:\d+\/1 did not answer within 1000 ms\)/);
    }
    for (const until = performance.now() + 8000; performance.now() < until; await sleep(100)) {
      await Promise.all([call(first, "ok"), call(second, "ok")]);
      if ([first, second].every((g, i) => /is reachable again/.test(g.output.stderr.slice(warned[i])))) break;
    }
    for (const [i, g] of [first, second].entries()) assert.match(g.output.stderr.slice(warned[i]), /is reachable again; breakers are shared/);
    console.log(`redis: ${during.length} calls while Redis was frozen, all served, the slowest in ${Math.round(slowest)} ms`);
  });

  test("Redis killed: both still serve on their own breakers, one warning each, no call waiting on it; back, sharing resumes", async () => {
    const [first, second] = gateways;
    const warned = gateways.map((g) => g.output.stderr.length);
    await redis.stop("SIGKILL");
    const during = [];
    // Over more than the Baton's healthCacheMs (1 s), so both ask the store and report to it.
    for (const until = performance.now() + 1500; performance.now() < until; await sleep(50)) {
      during.push(await call(first, "first"), await call(second, "first"));
    }
    assert.ok(during.every((c) => c.status === 200), JSON.stringify(during.filter((c) => c.status !== 200)));
    const slowest = Math.max(...during.map((c) => c.ms));
    assert.ok(slowest < 1000, `the slowest call while Redis was down took ${Math.round(slowest)} ms`);
    for (const [i, g] of [first, second].entries()) {
      const warnings = g.output.stderr.slice(warned[i]).match(/the health store at redis:\/\/127\.0\.0\.1:\d+\/1 is unreachable/g) ?? [];
      assert.equal(warnings.length, 1, g.output.stderr);
    }
    // The first process's own breaker stays open: it keeps skipping the dead provider.
    assert.ok(during.filter((_, i) => i % 2 === 0).every((c) => /target=backup attempts=1\b/.test(c.line)), JSON.stringify(during));

    redis = await startRedis(port, dir, ["--requirepass", PASSWORD]);
    // Traffic makes each client try again once its backoff (at most 2 s) ends.
    for (const until = performance.now() + 8000; performance.now() < until; await sleep(100)) {
      await Promise.all([call(first, "ok"), call(second, "ok")]);
      if ([first, second].every((g, i) => /is reachable again/.test(g.output.stderr.slice(warned[i])))) break;
    }
    for (const [i, g] of [first, second].entries()) {
      assert.equal(g.output.stderr.slice(warned[i]).match(/is reachable again; breakers are shared/g)?.length, 1, g.output.stderr);
    }

    const before = await requests(provider.url, ids.deadLater);
    const firstCalls = [await call(first, "later"), await call(first, "later")];
    assert.ok(firstCalls.every((c) => c.status === 200), JSON.stringify(firstCalls));
    const seen = await requests(provider.url, ids.deadLater);
    assert.ok(seen - before >= 2, `the first process sent the newly dead provider ${seen - before} requests`);
    await sleep(100);
    const secondCall = await call(second, "later");
    assert.match(secondCall.line, /target=backup attempts=1\b/, "after the restart the second process again skips what the first found dead");
    assert.equal(await requests(provider.url, ids.deadLater), seen);
    for (const g of gateways) {
      const said = g.output.stdout + g.output.stderr;
      assert.ok(!said.includes(PASSWORD), `the Redis password reached the gateway's output: ${said}`);
    }
    console.log(
      `redis: ${during.length} calls while Redis was down, all served, the slowest in ${Math.round(slowest)} ms, one warning per process;` +
        ` after the restart the second process skipped the newly dead provider (${secondCall.line.trim()})`,
    );
  });
});
