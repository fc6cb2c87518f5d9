// Health through the gateway (issue 13), in workerd, Deno and Node like gateway.test.mjs (which
// imports this file, so all run in one node:test run):
// - deadline propagation: a Baton in Node whose target is the gateway sends its remaining budget
//   in x-baton-deadline-ms (always with propagateDeadline: true; with the default "auto" once the
//   gateway has answered with x-baton-attempts), and the gateway ends its upstream attempt by
//   the caller's deadline, not by its own longer one;
// - GET /v1/health behind the gateway's keys, and a failing target's breaker open in it.
//
// Between the Baton and the gateway sits a small recording proxy: it keeps each request's
// headers and the gateway's answer, and it does not pass the client's disconnect on (as a
// network between two layers may not), so only a propagated deadline can end the gateway's
// upstream attempt early.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { Baton, BatonError } from "llm-baton";
import { putScenario, startProvider, upstream } from "./provider.mjs";
import { startDenoGateway, startNodeGateway, startWorkerdGateway } from "./gateway_hosts.mjs";

const KEY = "gw-health-key";
const SLACK_MS = 400;
const GATEWAY_DEADLINE_MS = 3000;
const CALLER_DEADLINE_MS = 1000;
const ASK = { messages: [{ role: "user", content: "Say hello." }], maxTokens: 16 };
const HOSTS = { workerd: startWorkerdGateway, deno: startDenoGateway, node: startNodeGateway };

function healthConfig(providerUrl, host) {
  const at = (name) => `${providerUrl}/s/${host}-hl-${name}/v1`;
  const oa = (name) => ({ format: "openai_chat", baseUrl: at(name), model: `up-${name}`, apiKey: "sk-upstream-health" });
  return {
    targets: { stall: oa("stall"), auto: oa("auto"), down: oa("down") },
    deadlineMs: GATEWAY_DEADLINE_MS,
    gateway: { apiKeys: [KEY] },
  };
}

const HOP_BY_HOP = ["host", "connection", "keep-alive", "content-length", "transfer-encoding"];

/**
 * A loopback HTTP proxy to `target` that records every request (`seen`: path, headers, then the
 * gateway's status, body and time to answer; `answered` resolves with the entry) and does not
 * forward the client's disconnect.
 */
function startRecordingProxy(target) {
  const seen = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const entry = { path: req.url, headers: req.headers, t0: performance.now() };
      let answered;
      entry.answered = new Promise((resolve) => (answered = resolve));
      seen.push(entry);
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !HOP_BY_HOP.includes(k)));
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      fetch(`${target}${req.url}`, { method: req.method, headers, body })
        .then(async (up) => {
          entry.status = up.status;
          entry.responseHeaders = Object.fromEntries(up.headers);
          entry.body = await up.text();
          entry.ms = performance.now() - entry.t0;
          if (!res.destroyed) {
            const out = Object.fromEntries([...up.headers].filter(([k]) => !HOP_BY_HOP.includes(k)));
            res.writeHead(up.status, out).end(entry.body);
          }
        })
        .catch((e) => {
          entry.error = String(e);
          res.destroy();
        })
        .finally(() => answered(entry));
    });
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      resolve({ url: `http://127.0.0.1:${server.address().port}`, seen, stop: () => server.close() });
    });
  });
}

/** The Baton's target: the gateway's route `model`, through the proxy. */
function viaGateway(proxyUrl, model, extra = {}) {
  return { format: "openai_chat", baseUrl: `${proxyUrl}/v1`, model, apiKey: KEY, ...extra };
}

/** Runs `fn`, which must reject with a BatonError; returns [error, elapsed ms]. */
async function rejects(fn) {
  const t0 = performance.now();
  try {
    await fn();
  } catch (e) {
    assert.ok(e instanceof BatonError, String(e));
    return [e, performance.now() - t0];
  }
  assert.fail("expected the call to fail");
}

/**
 * The proxy's record of a call the caller's deadline ended: it carried x-baton-deadline-ms (at
 * most the caller's deadline), and the gateway answered 504 by that deadline while its upstream
 * request was closed then, well before the gateway's own deadline.
 */
async function checkPropagated(entry, providerUrl, scenario, upstreamIndex) {
  const sent = Number(entry.headers["x-baton-deadline-ms"]);
  assert.ok(sent > CALLER_DEADLINE_MS - 200 && sent <= CALLER_DEADLINE_MS, `x-baton-deadline-ms: ${entry.headers["x-baton-deadline-ms"]}, expected just under ${CALLER_DEADLINE_MS}`);
  await entry.answered;
  assert.equal(entry.status, 504, `the gateway's answer: ${entry.body}`);
  assert.match(entry.body, new RegExp(`did not finish within ${sent} ms`));
  assert.ok(entry.ms <= sent + SLACK_MS, `the gateway answered after ${entry.ms.toFixed(0)} ms; the propagated deadline was ${sent} ms`);
  const up = await upstream(providerUrl, scenario);
  const attempt = up.log[upstreamIndex];
  assert.equal(attempt.outcome, "client_closed", "the gateway closed its upstream attempt");
  const held = attempt.endedMs - attempt.startedMs;
  assert.ok(held <= sent + SLACK_MS && held < GATEWAY_DEADLINE_MS - SLACK_MS, `the upstream attempt was held ${held} ms: the caller's deadline was ${sent} ms, the gateway's own ${GATEWAY_DEADLINE_MS} ms`);
  return { sent, gatewayMs: Math.round(entry.ms), upstreamHeldMs: held };
}

let provider;
before(async () => {
  provider = await startProvider();
});
after(() => provider?.stop());

for (const [host, start] of Object.entries(HOSTS)) {
  describe(`gateway in ${host}, health`, { concurrency: 1 }, () => {
    let gw;
    let proxy;
    const id = (name) => `${host}-hl-${name}`;
    const P = () => provider.url;
    before(async () => {
      gw = await start(healthConfig(provider.url, host));
      proxy = await startRecordingProxy(gw.url);
    });
    after(async () => {
      proxy?.stop();
      await gw?.stop();
    });

    test("propagateDeadline: true: the first call carries x-baton-deadline-ms and the gateway's upstream attempt ends by the caller's deadline", async () => {
      proxy.seen.length = 0;
      await putScenario(P(), id("stall"), [{ headersDelayMs: 600000 }]);
      const baton = new Baton({ targets: { gw: viaGateway(proxy.url, "stall", { propagateDeadline: true }) } });
      const [e, ms] = await rejects(() => baton.complete("gw", ASK, { deadlineMs: CALLER_DEADLINE_MS }));
      assert.equal(e.kind, "timeout");
      assert.equal(e.timeout, "deadline");
      assert.ok(ms <= CALLER_DEADLINE_MS + SLACK_MS, `the caller's call took ${ms.toFixed(0)} ms`);
      assert.equal(proxy.seen.length, 1);
      const figures = await checkPropagated(proxy.seen[0], P(), id("stall"), 0);
      console.log(`# ${host}: propagateDeadline true: ${JSON.stringify(figures)}`);

      // The contrast: propagateDeadline false sends nothing, and the gateway holds its upstream
      // attempt to its own deadline.
      proxy.seen.length = 0;
      const silent = new Baton({ targets: { gw: viaGateway(proxy.url, "stall", { propagateDeadline: false }) } });
      await rejects(() => silent.complete("gw", ASK, { deadlineMs: CALLER_DEADLINE_MS }));
      const entry = await proxy.seen[0].answered;
      assert.equal(entry.headers["x-baton-deadline-ms"], undefined);
      assert.equal(entry.status, 504);
      assert.ok(entry.ms >= GATEWAY_DEADLINE_MS - 50, `without propagation the gateway answered after ${entry.ms.toFixed(0)} ms, before its own ${GATEWAY_DEADLINE_MS} ms deadline`);
      const up = await upstream(P(), id("stall"));
      const held = up.log[1].endedMs - up.log[1].startedMs;
      console.log(`# ${host}: propagateDeadline false: no header, gateway answered after ${entry.ms.toFixed(0)} ms, upstream held ${held} ms`);
      assert.ok(held >= GATEWAY_DEADLINE_MS - 50, `upstream held ${held} ms`);
    });

    test('propagateDeadline "auto" (the default): not sent until the gateway answered with x-baton-attempts, then sent', async () => {
      proxy.seen.length = 0;
      await putScenario(P(), id("auto"), [{ text: "first answer" }, { headersDelayMs: 600000 }]);
      const baton = new Baton({ targets: { gw: viaGateway(proxy.url, "auto") } });
      const first = await baton.complete("gw", ASK, { deadlineMs: 2000 });
      assert.equal(first.text, "first answer");
      assert.equal(proxy.seen[0].headers["x-baton-deadline-ms"], undefined, "the first call does not know the target is a gateway");
      assert.equal((await proxy.seen[0].answered).responseHeaders["x-baton-attempts"], "1", "the gateway says what it is");
      await rejects(() => baton.complete("gw", ASK, { deadlineMs: CALLER_DEADLINE_MS }));
      assert.equal(proxy.seen.length, 2);
      const figures = await checkPropagated(proxy.seen[1], P(), id("auto"), 1);
      console.log(`# ${host}: propagateDeadline auto, second call: ${JSON.stringify(figures)}`);
    });

    test("GET /v1/health: behind the gateway's keys, every target and the retry budget, a failing target open", async () => {
      const health = (headers) => fetch(`${gw.url}/v1/health`, { headers });
      for (const headers of [{}, { authorization: "Bearer wrong" }]) {
        const refused = await health(headers);
        assert.equal(refused.status, 401);
        assert.equal((await refused.json()).error.type, "authentication_error");
      }
      const fresh = await health({ authorization: `Bearer ${KEY}` });
      assert.equal(fresh.status, 200);
      const before = await fresh.json();
      assert.equal(before.enabled, true);
      assert.deepEqual(before.targets.map((t) => t.target).sort(), ["auto", "down", "stall"]);
      assert.equal(typeof before.retryBudget.balance, "number");
      assert.equal(typeof before.retryBudget.spent, "number");
      assert.equal(before.targets.find((t) => t.target === "down").state, "closed");

      // Five 503s in a row (the default `failures`) open the breaker; the sixth request fails at
      // once with the same 503 and never reaches the provider.
      await putScenario(P(), id("down"), [{ status: 503, message: "down for maintenance" }]);
      const ask = () => fetch(`${gw.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "down", messages: ASK.messages }),
      });
      for (let i = 0; i < 6; i++) {
        const res = await ask();
        assert.equal(res.status, 503, `request ${i + 1}`);
        assert.match((await res.json()).error.message, /down for maintenance/);
      }
      assert.equal((await upstream(P(), id("down"))).requests, 5, "the open breaker kept the sixth request from the provider");
      const after = await (await fetch(`${gw.url}/v1/health`, { headers: { "x-api-key": KEY } })).json();
      const down = after.targets.find((t) => t.target === "down");
      console.log(`# ${host}: GET /v1/health after 6 requests: ${JSON.stringify({ down, retryBudget: after.retryBudget })}`);
      assert.equal(down.state, "open");
      assert.equal(down.consecutiveFailures, 5);
      assert.deepEqual(down.window, { outcomes: 5, failures: 5 });
      assert.equal(down.lastFailure?.status, 503);
      assert.ok(down.reopensInMs > 0 && down.reopensInMs <= 5000, `reopensInMs ${down.reopensInMs}`);
      assert.equal(after.targets.find((t) => t.target === "stall").lastFailure, undefined, "a call's deadline says nothing about its target");
    });
  });
}
