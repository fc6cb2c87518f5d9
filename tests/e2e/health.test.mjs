// The retry storm of issue 13 in Node, over real sockets: 200 concurrent calls on ONE Baton
// against a dead primary (503), each allowed 3 attempts on it before the backup. Without a
// budget that is 600 requests to a provider that is down; with the default budget, retries and
// failover hops together spend at most 10 per second over 10 s plus 20% of the successful calls.
// The provider counts what really reached it.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Baton } from "llm-baton";
import { putScenario, startProvider, upstream } from "./provider.mjs";

const CALLS = 200;
const ATTEMPTS = 3;
const ASK = { messages: [{ role: "user", content: "Say hello." }], maxTokens: 32 };
// The default budget: minPerSecond 10 over its 10 s window, plus ratio 0.2 of successful calls.
const FLOOR = 10 * 10;
const RATIO = 0.2;

let serial = 0;

async function script(providerUrl, label, steps) {
  serial += 1;
  const id = `node-storm-${label}-${Date.now().toString(36)}-${serial}`;
  await putScenario(providerUrl, id, steps);
  return id;
}

/** One call, whole or streamed by turn, with its events; resolves to {target, events}. */
async function call(baton, i) {
  const events = [];
  const onEvent = (ev) => events.push(ev);
  if (i % 2 === 0) {
    const out = await baton.complete("chat", ASK, { onEvent });
    return { target: out.target, events };
  }
  let done;
  for await (const ev of baton.stream("chat", ASK, { onEvent })) if (ev.type === "done") done = ev;
  return { target: done?.target, events };
}

/** 200 calls at once on one Baton; the primary's and backup's request counts and the events. */
async function storm(providerUrl, health) {
  const p = await script(providerUrl, "primary", [{ status: 503, message: "primary is down" }]);
  const b = await script(providerUrl, "backup", [{ text: "from backup" }]);
  const target = (id) => ({ format: "openai_chat", baseUrl: `${providerUrl}/s/${id}/v1`, model: "m", apiKey: "sk-test-not-a-secret" });
  const config = {
    targets: { primary: target(p), backup: target(b) },
    routes: { chat: { fallback: [{ retry: "primary", attempts: ATTEMPTS, retryOn: ["5xx"] }, "backup"] } },
  };
  if (health !== undefined) config.health = health;
  const baton = new Baton(config);
  const t0 = performance.now();
  const results = await Promise.all(Array.from({ length: CALLS }, (_, i) => call(baton, i)));
  const ms = performance.now() - t0;
  const primary = await upstream(providerUrl, p);
  const backup = await upstream(providerUrl, b);
  const events = results.flatMap((r) => r.events);
  return {
    ms,
    served: results.map((r) => r.target),
    primaryRequests: primary.requests,
    backupRequests: backup.requests,
    retryEvents: events.filter((ev) => ev.type === "retry").length,
    budgetWarnings: events.filter((ev) => ev.type === "warning" && /retry budget/.test(ev.message)),
    health: baton.health(),
    perCall: results.map((x) => ({
      retries: x.events.filter((ev) => ev.type === "retry").length,
      warnings: x.events.filter((ev) => ev.type === "warning" && /retry budget/.test(ev.message)).length,
    })),
  };
}

describe("health: a retry storm on one Baton", { concurrency: 1 }, () => {
  let provider;
  before(async () => {
    provider = await startProvider();
  });
  after(() => provider?.stop());

  test(`${CALLS} concurrent calls on a dead primary send it no more retries than the budget allows`, async () => {
    const r = await storm(provider.url);
    const retries = r.primaryRequests - CALLS;
    const allowed = FLOOR + RATIO * CALLS;
    console.log(`# storm, default budget: ${r.primaryRequests} primary requests (${CALLS} first attempts + ${retries} retries; allowed ${allowed}), ` +
      `${r.backupRequests} backup requests, ${r.budgetWarnings.length} budget warnings, ${r.retryEvents} retry events, ` +
      `budget after ${JSON.stringify(r.health.retryBudget)}, ${r.ms.toFixed(0)} ms`);
    assert.deepEqual(new Set(r.served), new Set(["backup"]), "every call is served by the backup");
    assert.equal(r.backupRequests, CALLS, "one backup request per call");
    assert.ok(retries <= allowed, `${retries} retries reached the dead primary; the budget allows ${allowed}`);
    assert.ok(retries > 0, "the budget's floor still lets the first calls retry: a lone call's ladder is never cut");
    assert.equal(r.retryEvents, retries, "one retry event per retry the provider saw");
    assert.ok(r.budgetWarnings.length > 0, "a retry the budget refused says so in a warning event");
    assert.match(r.budgetWarnings[0].message, /^not retried: the retry budget is spent/);
    // A refused retry ends the call's ladder on the primary: the failure goes to the backup.
    const ladders = r.perCall.map(({ retries: made, warnings }) => (made === ATTEMPTS - 1 && warnings === 0) || (made < ATTEMPTS - 1 && warnings === 1));
    assert.ok(ladders.every(Boolean), "each call made its 2 retries, or stopped at a refused one with one warning");
    const { spent } = r.health.retryBudget;
    assert.ok(spent >= retries && spent <= allowed, `the budget spent ${spent} units: every retry (${retries}), hops while units were left, never more than ${allowed}`);
    const primary = r.health.targets.find((t) => t.target === "primary");
    assert.equal(primary.state, "open", "the dead primary's breaker is open after the storm");
  });

  test(`the contrast: the same storm with health: false multiplies the load (${CALLS * ATTEMPTS} primary requests)`, async () => {
    const r = await storm(provider.url, false);
    console.log(`# storm, health: false: ${r.primaryRequests} primary requests (${CALLS} calls x ${ATTEMPTS} attempts), ${r.backupRequests} backup requests, ${r.budgetWarnings.length} budget warnings, ${r.ms.toFixed(0)} ms`);
    assert.deepEqual(new Set(r.served), new Set(["backup"]), "every call is served by the backup");
    assert.ok(r.primaryRequests >= 0.9 * CALLS * ATTEMPTS, `${r.primaryRequests} primary requests; without a budget every call pays its whole ladder`);
    assert.equal(r.budgetWarnings.length, 0, "no budget, no budget warnings");
    assert.equal(r.health.enabled, false);
    assert.equal(r.health.retryBudget, null);
  });
});
