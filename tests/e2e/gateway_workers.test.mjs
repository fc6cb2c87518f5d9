// llm-baton-gateway --workers N (docs/gateway.md, "Workers"): several processes on one port, as
// node:cluster runs them, with the breakers and the retry budget held by the primary. Real
// processes on loopback in front of the scripted provider; which worker served a request is
// read from the access log (`--log json` names it).
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Agent, request as httpRequest } from "node:http";
import { putScenario, startProvider, upstream } from "./provider.mjs";
import { BIN, cleanEnv, parseMetrics, scrape, start, valueOf } from "./gateway_command.mjs";

const dir = fileURLToPath(new URL("artifacts/gateway-workers", import.meta.url));
const KEY = "gw-workers-client-key";
const METRICS_KEY = "workers-metrics-scraper-key";
const SECRET = `sk-workers-secret-${Math.random().toString(36).slice(2, 10)}`;
const ASK = [{ role: "user", content: "Say hello" }];

/**
 * A chat request over node:http: on `agent` (a kept connection), or on a connection of its own
 * (the primary hands each new one to the next worker). Resolves to `{ status, target, body }`.
 */
function ask(url, body, agent = false) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}/v1/chat/completions`,
      { method: "POST", agent, headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" } },
      (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (c) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode, target: res.headers["x-baton-target"], body: text }));
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

/** The access log's JSON lines, once written. */
function logLines(gw) {
  return gw
    .stdout()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));
}

mkdirSync(dir, { recursive: true });

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The pids of `pid`'s children (the workers of a primary). */
function children(pid) {
  try {
    return execFileSync("pgrep", ["-P", String(pid)], { encoding: "utf8" }).trim().split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

let provider;
before(async () => {
  provider = await startProvider();
});
after(() => provider?.stop());

const target = (id) => ({ format: "openai_chat", baseUrl: `${provider.url}/s/${id}/v1`, model: `up-${id}`, apiKey: SECRET });

describe("llm-baton-gateway --workers", { concurrency: 1 }, () => {
  test("two workers serve one port, and a provider one of them found dead is skipped by the other (the breakers are the primary's)", async () => {
    await putScenario(provider.url, "w-dead", [{ status: 503 }]);
    await putScenario(provider.url, "w-live", [{ text: "Alive." }]);
    const config = JSON.stringify({
      targets: { dead: target("w-dead"), live: target("w-live") },
      routes: { chat: { fallback: ["dead", "live"] } },
      gateway: { apiKeys: [KEY], metrics: { apiKey: METRICS_KEY } },
      // Two failures in a row open the breaker, for a minute.
      health: { failures: 2, cooldownMs: 60000 },
    });
    const gw = await start(dir, ["--port", "0", "--workers", "2", "--log", "json"], { BATON_CONFIG: config });
    try {
      assert.equal(children(gw.child.pid).length, 2, "two worker processes");
      // Two requests on one kept connection: one worker meets the dead provider twice.
      const kept = new Agent({ keepAlive: true, maxSockets: 1 });
      for (let i = 0; i < 2; i += 1) {
        const r = await ask(gw.url, { model: "chat", messages: ASK }, kept);
        assert.deepEqual([r.status, r.target], [200, "live"]);
      }
      kept.destroy();
      assert.equal((await upstream(provider.url, "w-dead")).requests, 2);
      await sleep(50);
      const first = logLines(gw);
      assert.equal(first.length, 2);
      assert.equal(first[0].worker, first[1].worker, "the kept connection stayed with one worker");
      const finder = first[0].worker;
      // Past a worker's healthCacheMs (1 s), every worker asks the primary again.
      await sleep(1100);
      // New connections go to each worker in turn: the other one serves some of these, and
      // none of them tries the dead provider, which that worker never met itself.
      for (let i = 0; i < 4; i += 1) {
        const r = await ask(gw.url, { model: "chat", messages: ASK });
        assert.deepEqual([r.status, r.target], [200, "live"]);
      }
      await sleep(50);
      const rest = logLines(gw).slice(2);
      assert.ok(
        rest.some((l) => l.worker !== finder),
        `the other worker served some: ${rest.map((l) => l.worker)}`,
      );
      assert.ok(
        rest.every((l) => l.attempts === 1),
        "each went straight to the live provider",
      );
      assert.equal((await upstream(provider.url, "w-dead")).requests, 2, "no worker tried the dead provider again");

      const m = parseMetrics((await scrape(gw.url, METRICS_KEY)).text);
      assert.equal(valueOf(m, "llm_baton_processes"), 2);
      assert.equal(valueOf(m, "llm_baton_requests_total", { route: "chat", status: "200" }), 6, "both workers' requests");
      assert.equal(valueOf(m, "llm_baton_attempts_total", { target: "dead" }), 2);
      assert.deepEqual(
        m.get("llm_baton_skips_total").samples.map((s) => [s.labels, s.value]),
        [[{ target: "dead", reason: "breaker_open" }, 4]],
        "one series per kind of skip",
      );
      assert.equal(valueOf(m, "llm_baton_breaker_state", { target: "dead", state: "open" }), 1);
      assert.equal(valueOf(m, "llm_baton_breaker_state", { target: "live", state: "closed" }), 1);
    } finally {
      gw.child.kill("SIGTERM");
      await gw.exited;
    }
  });

  test("the retry budget is the primary's: what one worker spent, the other cannot spend again", async () => {
    await putScenario(provider.url, "w-flaky", [{ status: 503 }]);
    const config = JSON.stringify({
      targets: { flaky: target("w-flaky") },
      routes: { chat: { retry: "flaky", attempts: 3 } },
      gateway: { apiKeys: [KEY] },
      // Two retries in 10 s for the whole gateway, and breakers that stay closed.
      health: { failures: 1000, retryBudget: { ratio: 0, minPerSecond: 0.2 } },
    });
    const gw = await start(dir, ["--port", "0", "--workers", "2", "--log", "json"], { BATON_CONFIG: config });
    try {
      // One worker's call spends both units: three attempts.
      const kept = new Agent({ keepAlive: true, maxSockets: 1 });
      assert.equal((await ask(gw.url, { model: "chat", messages: ASK }, kept)).status, 503);
      kept.destroy();
      assert.equal((await upstream(provider.url, "w-flaky")).requests, 3);
      await sleep(50);
      const spender = logLines(gw)[0].worker;
      await sleep(1100);
      // Each worker's next call is made once, without a retry: the budget is spent for both.
      for (let i = 0; i < 4; i += 1) assert.equal((await ask(gw.url, { model: "chat", messages: ASK })).status, 503);
      await sleep(50);
      const rest = logLines(gw).slice(1);
      assert.ok(rest.some((l) => l.worker !== spender), `the other worker served some: ${rest.map((l) => l.worker)}`);
      assert.deepEqual(
        rest.map((l) => l.attempts),
        [1, 1, 1, 1],
        "no retries left",
      );
      assert.equal((await upstream(provider.url, "w-flaky")).requests, 3 + 4);
    } finally {
      gw.child.kill("SIGTERM");
      await gw.exited;
    }
  });

  test("SIGTERM to the primary drains both workers: their streams finish whole, new connections are refused, exit 0", async () => {
    const words = Array.from({ length: 20 }, (_, i) => `w${i}`).join(" ");
    await putScenario(provider.url, "w-slow", [{ text: words, chunks: 20, chunkDelayMs: 60, keepAlive: true }]);
    const config = JSON.stringify({ targets: { slow: target("w-slow") }, gateway: { apiKeys: [KEY] }, deadlineMs: 10000 });
    const gw = await start(dir, ["--port", "0", "--workers", "2", "--log", "json"], { BATON_CONFIG: config });
    // Two streams on two new connections: one on each worker.
    const streams = [0, 1].map(() => ask(gw.url, { model: "slow", messages: ASK, stream: true }));
    await sleep(300);
    gw.child.kill("SIGTERM");
    await sleep(300);
    const refused = await ask(gw.url, { model: "slow", messages: ASK }).then(
      () => "answered",
      (e) => e.code,
    );
    assert.equal(refused, "ECONNREFUSED", "a new connection after SIGTERM");
    for (const r of await Promise.all(streams)) {
      assert.equal(r.status, 200);
      let text = "";
      for (const line of r.body.split("\n")) if (line.startsWith("data: {")) text += JSON.parse(line.slice(6)).choices?.[0]?.delta?.content ?? "";
      assert.equal(text, words, "the whole answer");
      assert.ok(r.body.endsWith("data: [DONE]\n\n"));
    }
    const exit = await gw.exited;
    assert.equal(exit.code, 0, exit.stderr);
    assert.match(exit.stderr, /^llm-baton-gateway: SIGTERM: draining 2 workers$/m);
    for (const id of [1, 2]) {
      assert.match(exit.stderr, new RegExp(`^llm-baton-gateway \\(worker ${id}\\): SIGTERM: no longer accepting connections; finishing 1 request\\(s\\) in flight`, "m"));
    }
    assert.deepEqual(
      logLines(gw)
        .map((l) => l.worker)
        .sort(),
      [1, 2],
      "one stream on each worker",
    );
    assert.deepEqual(children(gw.child.pid), [], "no worker left behind");
  });

  test("a worker that dies is replaced, with a line on stderr (a second later when one was just replaced), and the gateway goes on serving", async () => {
    await putScenario(provider.url, "w-ok", [{ text: "Fine." }]);
    const config = JSON.stringify({ targets: { ok: target("w-ok") }, gateway: { apiKeys: [KEY], metrics: { apiKey: METRICS_KEY } } });
    const gw = await start(dir, ["--port", "0", "--workers", "2", "--log", "off"], { BATON_CONFIG: config });
    try {
      const [victim, survivor] = children(gw.child.pid);
      process.kill(victim, "SIGKILL");
      const until = performance.now() + 10_000;
      while (!/started worker 3 in its place/.test(gw.stderr()) && performance.now() < until) await sleep(50);
      assert.match(gw.stderr(), new RegExp(`^llm-baton-gateway: worker \\d \\(process ${victim}\\) exited \\(signal SIGKILL\\); started worker 3 in its place$`, "m"));
      // Its replacement dies too, at once: the next waits a second, as a crash loop would.
      while (children(gw.child.pid).length < 2 && performance.now() < until) await sleep(50);
      const replacement = children(gw.child.pid).find((pid) => pid !== survivor);
      process.kill(replacement, "SIGKILL");
      while (!/another starts in/.test(gw.stderr()) && performance.now() < until) await sleep(50);
      assert.match(gw.stderr(), new RegExp(`^llm-baton-gateway: worker 3 \\(process ${replacement}\\) exited \\(signal SIGKILL\\); another starts in 0\\.\\d s \\(the last was replaced less than 1 s ago\\)$`, "m"));
      while (children(gw.child.pid).length < 2 && performance.now() < until) await sleep(50);
      await sleep(300);
      for (let i = 0; i < 4; i += 1) assert.equal((await ask(gw.url, { model: "ok", messages: ASK })).status, 200);
      const m = parseMetrics((await scrape(gw.url, METRICS_KEY)).text);
      assert.equal(valueOf(m, "llm_baton_processes"), 2);
      assert.equal(valueOf(m, "llm_baton_requests_total", { route: "ok", status: "200" }), 4);
    } finally {
      gw.child.kill("SIGTERM");
      await gw.exited;
    }
  });

  test("--workers and GATEWAY_WORKERS take 1 to 256; anything else exits 2 saying so", async () => {
    for (const [args, env] of [[["--workers", "0"], {}], [["--workers", "two"], {}], [["--workers", "257"], {}], [[], { GATEWAY_WORKERS: "-1" }]]) {
      const r = spawnSync(process.execPath, [BIN, ...args], { cwd: dir, env: cleanEnv(env), encoding: "utf8", timeout: 20_000 });
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, /^llm-baton-gateway: (--workers|GATEWAY_WORKERS) must be a number of worker processes from 1 to 256, e\.g\. \d+ \(one per core, the default; got "[^"]*"\)\n$/);
    }
  });
});
