// The Open Responses compliance test (tests/e2e/open_responses.mjs, a port of the public runner)
// against the Node gateway (the llm-baton-gateway command) in front of the scripted provider: each
// request test as the runner sends it, its answer and every streamed event checked against the
// spec's schema with ajv, then the test's own checks. The upstream is OpenAI Chat, so every
// request crosses formats; the tests the gateway does not serve (the compaction endpoint, the
// WebSocket transport) are skipped with the reason docs/gateway.md gives.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { putScenario, startProvider } from "./provider.mjs";
import { startNodeGateway } from "./gateway_hosts.mjs";
import { NOT_SERVED, REQUEST_TESTS, runRequestTest } from "./open_responses.mjs";

const KEY = "gw-compliance-key";

describe("the Open Responses compliance test against the Node gateway", { concurrency: 1 }, () => {
  let provider;
  let gw;
  const results = [];

  before(async () => {
    provider = await startProvider();
    const target = { format: "openai_chat", baseUrl: `${provider.url}/s/compliance/v1`, model: "up-compliance", apiKey: "sk-upstream" };
    gw = await startNodeGateway({ targets: { compliance: target }, deadlineMs: 5000, gateway: { apiKeys: [KEY] }, health: false });
  });
  after(async () => {
    const passed = (set) => `${set.filter((r) => r.status === "passed").length} of ${set.length}`;
    const january = results.filter((r) => REQUEST_TESTS.find((t) => t.id === r.id).january);
    console.log(`Open Responses compliance: ${passed(results)} request tests pass (January 2026 set: ${passed(january)})`);
    await gw?.stop();
    provider?.stop();
  });

  for (const spec of REQUEST_TESTS) {
    test(spec.id, async () => {
      await putScenario(provider.url, "compliance", [spec.reply]);
      const result = await runRequestTest(spec, { baseUrl: `${gw.url}/v1`, apiKey: KEY, model: "compliance" });
      results.push(result);
      assert.deepEqual(result.errors, [], `${spec.id}: ${JSON.stringify(result.response)}`);
      assert.equal(result.status, "passed");
    });
  }

  for (const [id, reason] of Object.entries(NOT_SERVED)) {
    test(id, { skip: reason }, () => {});
  }
});
