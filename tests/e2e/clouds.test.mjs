// Claude on Anthropic, then Amazon Bedrock, then Google Vertex AI (issue 39's route): the
// scenarios of clouds_scenarios.mjs in Node, workerd, Deno and Chromium through llm-baton/clouds,
// and the llm-baton-gateway command (which loads its clouds build for this config) read by the
// official Anthropic SDK, whole and streamed.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import { describeEverywhere } from "./everywhere.mjs";
import { startProvider } from "./provider.mjs";
import { startBedrock } from "./local_bedrock.mjs";
import { startVertex } from "./local_vertex.mjs";
import { startNodeGateway } from "./gateway_hosts.mjs";
import { API_KEY, REGION as BEDROCK_REGION } from "./bedrock_scenarios.mjs";
import { ACCESS_TOKEN, CLAUDE_TEXT, PROJECT, REGION as VERTEX_REGION } from "./vertex_scenarios.mjs";

/** The three local services every runtime's scenarios call. */
async function startClouds() {
  const [provider, bedrock, vertex] = await Promise.all([startProvider(), startBedrock(), startVertex()]);
  return {
    args: { providerUrl: provider.url, bedrockUrl: bedrock.url, vertexUrl: vertex.url },
    stop: async () => {
      provider.stop();
      bedrock.stop();
      await vertex.stop();
    },
  };
}

let clouds;
describeEverywhere("Claude across clouds, in every runtime", {
  file: "clouds_scenarios.mjs",
  exportName: "cloudScenarios",
  subpath: "./clouds",
  setup: async () => {
    clouds = await startClouds();
    return clouds.args;
  },
  teardown: () => clouds?.stop(),
});

describe("Claude across clouds through the llm-baton-gateway command", () => {
  let local;
  let gateway;
  before(async () => {
    local = await startClouds();
    const { bedrockUrl, vertexUrl } = local.args;
    gateway = await startNodeGateway({
      targets: {
        anthropic: { format: "anthropic_messages", baseUrl: `${bedrockUrl}/v1`, model: "claude-sonnet-4-5-20250929", apiKey: "sk-ant-local-test" },
        bedrock: { format: "anthropic_messages", cloud: "bedrock", region: BEDROCK_REGION, baseUrl: bedrockUrl, model: "throttled", apiKey: API_KEY },
        vertex: { format: "anthropic_messages", cloud: "vertex", project: PROJECT, region: VERTEX_REGION, baseUrl: `${vertexUrl}/v1`, model: "claude-sonnet-4-5@20250929", accessToken: ACCESS_TOKEN },
      },
      routes: { claude: { fallback: ["anthropic", "bedrock", "vertex"] } },
    });
  });
  after(async () => {
    await gateway?.stop();
    await local?.stop();
  });

  test("the official Anthropic SDK reads Vertex's answer after Anthropic's 529 and Bedrock's throttle, whole and streamed", async () => {
    const client = new Anthropic({ apiKey: "-", baseURL: gateway.url, maxRetries: 0 });
    const params = { model: "claude", max_tokens: 64, messages: [{ role: "user", content: "Say hello" }] };
    const { data: whole, response } = await client.messages.create(params).withResponse();
    assert.equal(whole.content.map((b) => b.text).join(""), CLAUDE_TEXT);
    assert.equal(response.headers.get("x-baton-target"), "vertex");
    assert.equal(response.headers.get("x-baton-attempts"), "3");
    let text = "";
    for await (const ev of await client.messages.create({ ...params, stream: true })) {
      if (ev.type === "content_block_delta" && ev.delta.type === "text_delta") text += ev.delta.text;
    }
    assert.equal(text, CLAUDE_TEXT);
  });
});
