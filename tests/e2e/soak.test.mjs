// The soak in `make test` (issue 41; the long one with the peers is `make soak`): 300 requests
// from 32 clients through the gateway in Node, Deno and workerd and through a Baton in Node,
// against the scripted provider injecting faults (tests/e2e/soak.mjs: the fault mix and what is
// checked), with 10% of streaming clients disconnecting mid-answer and 3% sending bad input.
// Every invariant is asserted, not the speed: nothing but exact answers and explicit errors, no
// hang past the deadline, no provider request left open (but LEAKS_ALLOWED), one provider
// request per counted attempt, every disconnected client's upstream ended within ABORT_LIMIT_MS.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Baton, BatonError } from "llm-baton";
import { startProvider } from "./provider.mjs";
import { startDenoGateway, startNodeGateway, startWorkerdGateway } from "./gateway_hosts.mjs";
import { abortStats, batonClient, httpClient, runSoak, soakConfig } from "./soak.mjs";

const REQUESTS = Number(process.env.SOAK_TEST_REQUESTS ?? 300);
/**
 * The gateway aborts a disconnected client's upstream fetch within milliseconds; 1 s is the
 * margin for a loaded 2-core machine. workerd tells the Worker of a disconnect only when it
 * writes to the client, so while the upstream stalls mid-stream the abort waits for idleMs (1 s
 * in soakConfig) to fail the attempt: 1 s more. Deno's fetch can keep the aborted request's
 * connection open for seconds after the abort (issue 41, item 3: 7 of 1,003 in the soak, and a
 * plain Deno proxy without llm-baton does the same), so Deno is held to "closed before the
 * settle ends".
 */
const ABORT_LIMIT_MS = { node: 1000, workerd: 2000, baton: 1000, deno: 8000 };
/**
 * Provider requests allowed to stay open. On Deno, about 1 in 10,000 soak requests leaves one
 * open: an attempt failed by idleMs while its upstream stalls mid-stream, whose aborted fetch
 * keeps its connection (two runs of `SOAK_REQUESTS=10000 node bench/soak.mjs deno`, one each;
 * the same late close as a disconnect's, issue 41 item 3). One is allowed there, so that this
 * test is not failed by it one run in thirty; two fail it.
 */
const LEAKS_ALLOWED = { node: 0, workerd: 0, baton: 0, deno: 1 };

let provider;
before(async () => { provider = await startProvider(); });
after(() => provider?.stop());

/** Runs the soak through `client` and asserts every invariant; `name` keys ABORT_LIMIT_MS. */
async function soak(name, scenario, client) {
  const settleMs = Math.max(3000, ABORT_LIMIT_MS[name]);
  const t = await runSoak({ providerUrl: provider.url, scenario, client, requests: REQUESTS, chunk: REQUESTS, seed: 41, settleMs });
  const abort = abortStats(t.abortMs);
  const summary = `${name}: ${JSON.stringify({ ...t, abortMs: abort, examples: t.examples })}`;
  console.log(`${name}: ${t.exact} exact, ${t.error} explicit errors, ${t.disconnected} disconnected (upstream ended after p50 ${abort.p50?.toFixed(0)} ms, max ${abort.max?.toFixed(0)} ms; ${t.ranOn} ended by the provider before the abort), ${t.badRefused}/${t.bad} bad inputs refused, ${t.providerRequests} provider requests`);
  assert.equal(t.requests, REQUESTS, summary);
  assert.equal(t.truncated, 0, `truncated successes: ${summary}`);
  assert.equal(t.garbled, 0, `duplicated or interleaved text: ${summary}`);
  assert.equal(t.cut, 0, `answers cut without an explicit error: ${summary}`);
  assert.equal(t.hang, 0, `hangs past the deadline: ${summary}`);
  assert.ok(t.leaked <= LEAKS_ALLOWED[name], `provider requests left open: ${summary}`);
  assert.equal(t.attemptMismatches, 0, `provider requests against counted attempts: ${summary}`);
  assert.equal(t.badRefused, t.bad, `bad input not refused with a JSON 4xx: ${summary}`);
  assert.equal(t.sentAfterBadInput, 0, `bad input reached the provider: ${summary}`);
  assert.ok(abort.open === 0 && (abort.max === null || abort.max <= ABORT_LIMIT_MS[name]), `a disconnected client's upstream ended ${abort.max} ms after the disconnect: ${summary}`);
  // The soak is worth something only if the faults and disconnects happened and most requests
  // still got their answer.
  assert.ok(t.exact > REQUESTS * 0.5, `only ${t.exact} exact answers: ${summary}`);
  assert.ok(t.error > 0 && t.disconnected > 0 && t.bad > 0, summary);
  assert.ok(t.attemptChecks > REQUESTS * 0.8 && t.providerRequests > t.attemptChecks, summary);
}

const gateway = (name, start) => test(`the gateway in ${name}: 300 requests under faults, every invariant`, async () => {
  const scenario = `soak-${name}`;
  const gw = await start(soakConfig(`${provider.url}/s/${scenario}/v1`));
  try {
    await soak(name, scenario, httpClient({ url: gw.url }));
  } finally {
    await gw.stop();
  }
});

gateway("node", startNodeGateway);
gateway("deno", startDenoGateway);
gateway("workerd", startWorkerdGateway);

test("a Baton in Node: 300 calls under faults, every invariant", async () => {
  const baton = new Baton(soakConfig(`${provider.url}/s/soak-baton/v1`));
  await soak("baton", "soak-baton", batonClient({ baton, BatonError }));
});
