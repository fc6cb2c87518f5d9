// The gateway's /metrics (docs/gateway.md, "Metrics"), scraped from a running llm-baton-gateway
// after real traffic through the scripted provider (failures, so that retries and failovers
// happen), and read with a Prometheus text-format parser we did not write
// (parse-prometheus-text-format): the counts must be the traffic's, the names and labels
// Prometheus's conventions, and the endpoint closed to anyone without its own key.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { BIN, cleanEnv, parseMetrics, scrape as scrapeWith, start, valueOf } from "./gateway_command.mjs";
import { startDenoGateway, startWorkerdGateway } from "./gateway_hosts.mjs";
import { putScenario, startProvider, upstream } from "./provider.mjs";

const repo = fileURLToPath(new URL("../../", import.meta.url));
const dir = `${repo}tests/e2e/artifacts/gateway-metrics`;
const KEY = "gw-metrics-client-key";
const METRICS_KEY = `metrics-${Math.random().toString(36).slice(2, 12)}-scraper`;
const SECRET = `sk-metrics-secret-${Math.random().toString(36).slice(2, 10)}`;
const ASK = [{ role: "user", content: "Say hello" }];
/** `GET /metrics` with `key` (default the metrics key; null: no Authorization). */
const scrape = (url, key = METRICS_KEY) => scrapeWith(url, key);

mkdirSync(dir, { recursive: true });

function file(name, text) {
  const path = `${dir}/${name}`;
  writeFileSync(path, text);
  return path;
}

function post(url, path, body, headers = {}) {
  return fetch(`${url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

let provider;
before(async () => {
  provider = await startProvider();
});
after(() => provider?.stop());

const target = (id) => ({ format: "openai_chat", baseUrl: `${provider.url}/s/${id}/v1`, model: `up-${id}`, apiKey: SECRET });

describe("llm-baton-gateway: /metrics", { concurrency: 1 }, () => {
  for (const workers of [1, 2]) {
    test(`the counts are the traffic's (${workers} worker${workers > 1 ? "s" : ""}), by a real Prometheus parser`, async () => {
      const down = `m-down-${workers}`;
      const up = `m-up-${workers}`;
      await putScenario(provider.url, down, [{ status: 503 }]);
      await putScenario(provider.url, up, [{ text: "one two three four", usage: { inputTokens: 7, outputTokens: 4 } }]);
      // health: false, so each request meets the same upstream: two attempts on the failing
      // target (one retry), then a failover to the healthy one.
      const config = file(
        `counts-${workers}.json`,
        JSON.stringify({
          targets: { down: target(down), up: target(up) },
          routes: { chat: { fallback: [{ retry: "down", attempts: 2 }, "up"] } },
          gateway: { apiKeys: [KEY], metrics: { apiKey: METRICS_KEY } },
          health: false,
        }),
      );
      const gw = await start(dir, ["--config", config, "--port", "0", "--workers", String(workers), "--log", "off"]);
      try {
        const rounds = 3;
        for (let i = 0; i < rounds; i += 1) {
          const whole = await post(gw.url, "/v1/chat/completions", { model: "chat", messages: ASK });
          assert.equal(whole.status, 200);
          await whole.text();
          const stream = await post(gw.url, "/v1/chat/completions", { model: "chat", messages: ASK, stream: true });
          assert.equal(stream.status, 200);
          await stream.text();
        }
        const anthropic = await post(gw.url, "/v1/messages", { model: "chat", max_tokens: 10, messages: ASK });
        assert.equal(anthropic.status, 200);
        await anthropic.text();
        const unknown = await post(gw.url, "/v1/chat/completions", { model: `no-such-route-${SECRET}`, messages: ASK });
        assert.equal(unknown.status, 404);
        await unknown.text();
        const wrongKey = await post(gw.url, "/v1/chat/completions", { model: "chat", messages: ASK }, { authorization: "Bearer wrong" });
        assert.equal(wrongKey.status, 401);
        await wrongKey.text();

        const { status, text, headers } = await scrape(gw.url);
        assert.equal(status, 200);
        assert.equal(headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
        for (const secret of [SECRET, KEY, METRICS_KEY]) assert.ok(!text.includes(secret), "no key in the metrics");
        const m = parseMetrics(text);
        const calls = 2 * rounds + 1;
        const [downRecord, upRecord] = [await upstream(provider.url, down), await upstream(provider.url, up)];
        assert.equal(downRecord.requests, 2 * calls);
        assert.equal(upRecord.requests, calls);

        assert.equal(valueOf(m, "llm_baton_requests_total", { route: "chat", format: "openai_chat", status: "200" }), 2 * rounds);
        assert.equal(valueOf(m, "llm_baton_requests_total", { route: "chat", format: "anthropic_messages", status: "200" }), 1);
        // A model no route has is counted under no route: a client cannot add series.
        assert.equal(valueOf(m, "llm_baton_requests_total", { route: "", format: "openai_chat", status: "404" }), 1);
        assert.equal(valueOf(m, "llm_baton_requests_total", { route: "", format: "", status: "401" }), 1);
        assert.equal(valueOf(m, "llm_baton_requests_total"), calls + 2);
        assert.equal(valueOf(m, "llm_baton_request_duration_seconds"), calls + 2, "every request's duration");
        assert.equal(valueOf(m, "llm_baton_attempts_total", { target: "down", outcome: "http" }), downRecord.requests);
        assert.equal(valueOf(m, "llm_baton_attempts_total", { target: "up", outcome: "ok" }), upRecord.requests);
        assert.equal(valueOf(m, "llm_baton_attempts_total"), 3 * calls);
        assert.equal(valueOf(m, "llm_baton_retries_total", { target: "down" }), calls);
        assert.equal(valueOf(m, "llm_baton_failovers_total", { from: "down", to: "up" }), calls);
        assert.equal(valueOf(m, "llm_baton_hedges_total"), 0);
        assert.equal(valueOf(m, "llm_baton_tokens_total", { target: "up", type: "input" }), 7 * calls);
        assert.equal(valueOf(m, "llm_baton_tokens_total", { target: "up", type: "output" }), 4 * calls);
        // Streams have a first token; whole answers do not.
        const ttft = m.get("llm_baton_time_to_first_token_seconds").samples;
        assert.deepEqual(ttft.map((s) => [s.labels.route, s.labels.target, s.count]), [["chat", "up", rounds]]);
        assert.ok(ttft[0].sum > 0 && ttft[0].sum < 30, `first-token seconds: ${ttft[0].sum}`);
        for (const t of ["down", "up"]) {
          assert.equal(valueOf(m, "llm_baton_breaker_state", { target: t, state: "closed" }), 1);
          assert.equal(valueOf(m, "llm_baton_breaker_state", { target: t }), 1, "one state at a time");
        }
        assert.equal(valueOf(m, "llm_baton_requests_in_flight"), 0);
        assert.equal(valueOf(m, "llm_baton_processes"), workers, "every worker's counts");
      } finally {
        gw.child.kill("SIGTERM");
        await gw.exited;
      }
    });
  }

  // The example Worker in workerd keeps its breakers in the Durable Object: the breaker state is
  // then its isolate's replica of them.
  for (const [host, startHost] of [["Deno", startDenoGateway], ["workerd", startWorkerdGateway]]) {
    test(`${host} serves the same /metrics (the shared pkg/gateway.js), one isolate's counts`, async () => {
      await putScenario(provider.url, `m-${host}-down`, [{ status: 503 }]);
      await putScenario(provider.url, `m-${host}-up`, [{ text: "From elsewhere." }]);
      const gw = await startHost({
        targets: { down: target(`m-${host}-down`), up: target(`m-${host}-up`) },
        routes: { chat: { fallback: ["down", "up"] } },
        gateway: { apiKeys: [KEY], metrics: { apiKey: METRICS_KEY } },
        health: false,
      });
      try {
        for (let i = 0; i < 2; i += 1) {
          const res = await post(gw.url, "/v1/chat/completions", { model: "chat", messages: ASK, stream: i === 1 });
          assert.equal(res.status, 200);
          await res.text();
        }
        assert.equal((await scrape(gw.url, KEY)).status, 401);
        const m = parseMetrics((await scrape(gw.url)).text);
        assert.equal(valueOf(m, "llm_baton_requests_total", { route: "chat", format: "openai_chat", status: "200" }), 2);
        assert.equal(valueOf(m, "llm_baton_attempts_total", { target: "down", outcome: "http" }), 2);
        assert.equal(valueOf(m, "llm_baton_failovers_total", { from: "down", to: "up" }), 2);
        assert.equal(valueOf(m, "llm_baton_time_to_first_token_seconds", { target: "up" }), 1);
        assert.equal(valueOf(m, "llm_baton_processes"), 1);
      } finally {
        await gw.stop();
      }
    });
  }

  test("closed without its own key: a 401 that says nothing, whatever the key sent", async () => {
    await putScenario(provider.url, "m-auth", [{}]);
    const config = file("auth.json", JSON.stringify({ targets: { a: target("m-auth") }, gateway: { apiKeys: [KEY], metrics: { apiKey: METRICS_KEY } } }));
    const gw = await start(dir, ["--config", config, "--port", "0", "--workers", "1", "--log", "off"]);
    try {
      for (const key of [null, "", KEY, `${METRICS_KEY}x`, METRICS_KEY.slice(0, -1), METRICS_KEY.toUpperCase()]) {
        const { status, text, headers } = await scrape(gw.url, key);
        assert.equal(status, 401, `key ${JSON.stringify(key)}`);
        assert.equal(text, "unauthorized\n");
        assert.equal(headers.get("www-authenticate"), 'Bearer realm="metrics"');
      }
      const bySecondHeader = await fetch(`${gw.url}/metrics`, { headers: { "x-api-key": METRICS_KEY } });
      assert.equal(bySecondHeader.status, 401, "only Authorization: Bearer");
      await bySecondHeader.text();
      const post = await fetch(`${gw.url}/metrics`, { method: "POST", headers: { authorization: `Bearer ${METRICS_KEY}` } });
      assert.equal(post.status, 405);
      await post.text();
      assert.equal((await scrape(gw.url)).status, 200);
    } finally {
      gw.child.kill("SIGTERM");
      await gw.exited;
    }
  });

  test("off unless configured: /metrics is then the gateway's own 404", async () => {
    const config = file("off.json", JSON.stringify({ targets: { a: target("m-off") }, gateway: { apiKeys: [KEY] } }));
    const gw = await start(dir, ["--config", config, "--port", "0", "--workers", "1", "--log", "off"]);
    try {
      for (const key of [METRICS_KEY, KEY]) {
        const { status, text } = await scrape(gw.url, key);
        assert.equal(status, 404);
        assert.ok(!text.includes("llm_baton_"), text);
      }
    } finally {
      gw.child.kill("SIGTERM");
      await gw.exited;
    }
  });

  test("GATEWAY_METRICS_KEY turns it on, from the environment or beside --config; bad keys are refused, naming the field", async () => {
    await putScenario(provider.url, "m-env", [{}]);
    const gw = await start(dir, ["--port", "0", "--workers", "1", "--log", "off"], {
      OPENAI_API_KEY: SECRET,
      OPENAI_BASE_URL: `${provider.url}/s/m-env/v1`,
      GATEWAY_API_KEYS: KEY,
      GATEWAY_METRICS_KEY: METRICS_KEY,
    });
    try {
      assert.equal((await post(gw.url, "/v1/chat/completions", { model: "chat", messages: ASK })).status, 200);
      const m = parseMetrics((await scrape(gw.url)).text);
      assert.equal(valueOf(m, "llm_baton_requests_total", { route: "chat", status: "200" }), 1);
    } finally {
      gw.child.kill("SIGTERM");
      await gw.exited;
    }

    const run = (args, env) => spawnSync(process.execPath, [BIN, ...args], { cwd: dir, env: cleanEnv(env), encoding: "utf8", timeout: 20_000 });
    const plain = file("plain.json", JSON.stringify({ targets: { a: target("m-env") }, gateway: { apiKeys: [KEY] } }));
    const refusals = [
      [["--config", plain], { GATEWAY_METRICS_KEY: "short" }, /gateway\.metrics\.apiKey must be a key of 16 or more printable ASCII characters.*got a string of 5 characters/],
      [["--config", plain], { GATEWAY_METRICS_KEY: KEY }, /gateway\.metrics\.apiKey is also in gateway\.apiKeys; give the scraper a key of its own/],
      [["--config", file("both.json", JSON.stringify({ targets: { a: target("m-env") }, gateway: { metrics: { apiKey: METRICS_KEY } } }))], { GATEWAY_METRICS_KEY: METRICS_KEY }, /GATEWAY_METRICS_KEY is set and the config in .*both\.json has gateway\.metrics too; keep one of them/],
      [["--config", file("typo.json", JSON.stringify({ targets: { a: target("m-env") }, gateway: { metrics: { key: METRICS_KEY } } }))], {}, /gateway\.metrics\.key is not a known option; known options: apiKey/],
    ];
    for (const [args, env, message] of refusals) {
      const r = run([...args, "--port", "0", "--workers", "1"], env);
      assert.equal(r.status, 1, r.stderr);
      const lines = r.stderr.trimEnd().split("\n");
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0], message);
      for (const secret of [SECRET, METRICS_KEY, KEY]) assert.ok(!r.stderr.includes(secret), `a key on stderr: ${r.stderr}`);
    }
  });
});
