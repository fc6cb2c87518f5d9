// When deadlines expire a few milliseconds apart, the sockets of the calls that ended first close
// after the timers due just after them have fired, not between them (pkg/host.js, flushAborts:
// an abort costs the event loop more than settling a call), and never more than
// ABORT_MAX_WAIT_MS after their call ended, however many timers keep coming due.
//
// The upstream is a real HTTP server on loopback that never answers and records when each
// request's connection closed.
//
//   node --test tests/e2e/deadline_aborts.test.mjs      (make test runs it)
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, test } from "node:test";
import { Baton } from "llm-baton";
import { ABORT_MAX_WAIT_MS } from "../../pkg/host.js";

const ASK = { messages: [{ role: "user", content: "Say hello." }], maxTokens: 8 };

let server;
let base;
/** When the upstream saw each path's connection close. */
const closedAt = new Map();

before(async () => {
  server = createServer((req, res) => {
    req.resume();
    res.on("close", () => closedAt.set(req.url, performance.now()));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${server.address().port}`;
  // The first abort in a process is slow (the runtime loads its abort path): not what is measured.
  await expire("warm", [300]);
});

after(() => server?.close());

/**
 * Starts one call per deadline in `deadlines` (ms), together, each on its own upstream path.
 * Resolves, once every connection closed, to `{ended, closed}` by call (performance.now()).
 */
async function expire(label, deadlines) {
  const targets = Object.fromEntries(deadlines.map((_, i) => [`t${i}`, {
    format: "openai_chat", baseUrl: `${base}/${label}/${i}/v1`, model: "m", apiKey: "sk-test",
  }]));
  const baton = new Baton({ targets });
  const ended = await Promise.all(deadlines.map(async (deadlineMs, i) => {
    const error = await baton.complete(`t${i}`, ASK, { deadlineMs }).then(() => null, (e) => e);
    assert.equal(error?.kind, "timeout", `call ${i}: ${error}`);
    return performance.now();
  }));
  const path = (i) => `/${label}/${i}/v1/chat/completions`;
  const until = performance.now() + 3000;
  while (deadlines.some((_, i) => !closedAt.has(path(i))) && performance.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { ended, closed: deadlines.map((_, i) => closedAt.get(path(i))) };
}

test("a deadline's socket closes after the deadline due 8 ms later has fired", async () => {
  for (const round of [1, 2, 3]) {
    const { ended, closed } = await expire(`pair${round}`, [300, 308]);
    assert.ok(closed.every((at) => at !== undefined), "every upstream connection closed");
    assert.ok(closed[0] > ended[1], `round ${round}: the first call's upstream closed ${(ended[1] - closed[0]).toFixed(1)} ms before the second call ended`);
  }
});

test(`timers due every 5 ms for 300 ms hold a socket open at most ABORT_MAX_WAIT_MS (${ABORT_MAX_WAIT_MS} ms), not to the last`, async () => {
  // A loaded machine can stall the loop for the whole chain, so that every timer fires in one
  // turn and the chain is no chain: up to three rounds, one of which must show the bound. Without
  // the bound no round can pass, as the first socket then waits for the last timer.
  const failures = [];
  for (const round of [1, 2, 3]) {
    const { ended, closed } = await expire(`chain${round}`, Array.from({ length: 61 }, (_, i) => 300 + 5 * i));
    assert.ok(closed.every((at) => at !== undefined), "every upstream connection closed");
    // Against the chain's own end, not a number of milliseconds: a stall moves both alike.
    if (closed[0] < ended.at(-1)) return;
    failures.push(`round ${round}: the first call's upstream closed ${(closed[0] - ended[0]).toFixed(0)} ms after it ended, after the last call of the chain ended (${(ended.at(-1) - ended[0]).toFixed(0)} ms after it)`);
  }
  assert.fail(failures.join("; "));
});
