// Amazon Bedrock end to end against AWS's and Anthropic's own code: Converse and ConverseStream,
// and Anthropic Messages on Bedrock (InvokeModel and InvokeModelWithResponseStream); in Node,
// then Deno, workerd and Chromium.
//
// The local Bedrock (local_bedrock.mjs) recomputes each request's SigV4 signature with
// @smithy/signature-v4 (the AWS SDK's signer), takes a Bedrock API key as a bearer token, and
// streams in event-stream frames written by @smithy/eventstream-codec. The official clients,
// pointed at the same server, are the oracles: the AWS SDK's BedrockRuntimeClient for Converse,
// @anthropic-ai/bedrock-sdk's AnthropicBedrock for Anthropic on Bedrock. What they read,
// llm-baton reads the same; their requests pass the same signature check, which shows the check
// is AWS's. Credentials never appear in an error or an event. The calls of bedrock_scenarios.mjs
// then run against the same server in Node, Deno, workerd and Chromium.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand } from "@aws-sdk/client-bedrock-runtime";
import { AnthropicBedrock } from "@anthropic-ai/bedrock-sdk";
import Anthropic from "@anthropic-ai/sdk";
import { Baton } from "llm-baton/clouds";
import { createGateway } from "llm-baton/gateway/clouds";
import { serve } from "llm-baton/gateway/node-server";
import { anthropicOnBedrock, API_KEY, ASK, bedrockTarget, CLAUDE, CLAUDE_TEXT, KEYS, MODEL, REGION, TOOLS } from "./bedrock_scenarios.mjs";
import { startBedrock } from "./local_bedrock.mjs";
import { putScenario, startProvider } from "./provider.mjs";
import { describeEverywhere } from "./everywhere.mjs";
import { chatSseText } from "./calls.mjs";

const SECRETS = [...Object.keys(KEYS), ...Object.values(KEYS).flatMap((k) => [k.secretAccessKey, k.sessionToken].filter(Boolean)), API_KEY];
/** The AWS SDK's client against the local Bedrock, over HTTP/1.1. */
function sdk(url, keyId = "AKIABATONTEST0001") {
  const { secretAccessKey, sessionToken } = KEYS[keyId];
  return new BedrockRuntimeClient({ region: REGION, endpoint: url, credentials: { accessKeyId: keyId, secretAccessKey, sessionToken }, requestHandler: new NodeHttpHandler(), maxAttempts: 1 });
}


/** @anthropic-ai/bedrock-sdk's client against the local Bedrock, signing with the test keys. */
function anthropicSdk(url, keyId = "AKIABATONTEST0001") {
  const { secretAccessKey, sessionToken } = KEYS[keyId];
  return new AnthropicBedrock({ baseURL: url, awsAccessKey: keyId, awsSecretKey: secretAccessKey, awsSessionToken: sessionToken ?? null, awsRegion: REGION, maxRetries: 0 });
}

/** What the Anthropic SDK's message holds, in llm-baton's terms: text, calls, thinking, finish, usage. */
function readMessage(message) {
  const blocks = (type) => message.content.filter((b) => b.type === type);
  return {
    text: blocks("text").map((b) => b.text).join(""),
    calls: blocks("tool_use").map((b) => ({ id: b.id, name: b.name, input: b.input })),
    thinking: blocks("thinking").map((b) => [b.thinking, b.signature]),
    stopReason: message.stop_reason,
    usage: { inputTokens: message.usage.input_tokens, outputTokens: message.usage.output_tokens },
  };
}

/** The same from llm-baton's answer (a `complete` result or a stream's `done`). */
function readAnswer(answer) {
  return {
    text: answer.text,
    calls: (answer.toolCalls ?? []).map((c) => ({ id: c.id, name: c.name, input: JSON.parse(c.arguments) })),
    thinking: answer.message.content.filter((p) => p.type === "reasoning").map((p) => [p.text, p.state.signature]),
    stopReason: { stop: "end_turn", tool_calls: "tool_use" }[answer.finishReason],
    usage: answer.usage,
  };
}

/** What the SDK reads from a ConverseStream: text, tool calls (arguments joined), stop reason, usage. */
async function sdkStream(client, modelId, messages, toolConfig) {
  const out = await client.send(new ConverseStreamCommand({ modelId, messages, toolConfig }));
  const read = { text: "", calls: [], stopReason: null, usage: null };
  for await (const ev of out.stream) {
    if (ev.contentBlockStart?.start?.toolUse) read.calls.push({ id: ev.contentBlockStart.start.toolUse.toolUseId, name: ev.contentBlockStart.start.toolUse.name, arguments: "" });
    if (ev.contentBlockDelta?.delta?.text) read.text += ev.contentBlockDelta.delta.text;
    if (ev.contentBlockDelta?.delta?.toolUse) read.calls.at(-1).arguments += ev.contentBlockDelta.delta.toolUse.input;
    if (ev.messageStop) read.stopReason = ev.messageStop.stopReason;
    if (ev.metadata) read.usage = ev.metadata.usage;
  }
  return read;
}

/** What llm-baton's stream reads, in the same terms. */
async function batonStream(baton, route, request) {
  const read = { text: "", calls: [], done: null, events: [] };
  for await (const ev of baton.stream(route, request)) {
    read.events.push(ev);
    if (ev.type === "text") read.text += ev.text;
    if (ev.type === "done") read.done = ev;
  }
  read.calls = (read.done?.toolCalls ?? []).map(({ id, name, arguments: args }) => ({ id, name, arguments: args }));
  return read;
}

function assertNoSecret(text, what) {
  for (const secret of SECRETS) assert.ok(!text.includes(secret), `${what} shows a credential: ${text}`);
}

describe("bedrock", () => {
  let bedrock;
  before(async () => {
    bedrock = await startBedrock();
  });
  after(() => bedrock?.stop());

  test("the local Bedrock's check is AWS's: the SDK's signed requests pass it, a wrong key fails it", async () => {
    const out = await sdk(bedrock.url).send(new ConverseCommand({ modelId: MODEL, messages: [{ role: "user", content: [{ text: "hi" }] }] }));
    assert.equal(out.output.message.content.map((b) => b.text).join(""), "Hello from Bedrock, signed and framed.");
    const temp = await sdk(bedrock.url, "ASIABATONTEMP0002").send(new ConverseCommand({ modelId: MODEL, messages: [{ role: "user", content: [{ text: "hi" }] }] }));
    assert.equal(temp.stopReason, "end_turn");
    const wrong = new BedrockRuntimeClient({ region: REGION, endpoint: bedrock.url, credentials: { accessKeyId: "AKIABATONTEST0001", secretAccessKey: "not-the-secret" }, requestHandler: new NodeHttpHandler(), maxAttempts: 1 });
    await assert.rejects(wrong.send(new ConverseCommand({ modelId: MODEL, messages: [{ role: "user", content: [{ text: "hi" }] }] })), (e) => e.name === "InvalidSignatureException" && e.$metadata.httpStatusCode === 403);
  });

  test("Converse: a whole answer reads as the SDK reads it, signed with keys or a session token, or with an API key", async () => {
    const oracle = await sdk(bedrock.url).send(new ConverseCommand({ modelId: MODEL, system: [{ text: "Be brief." }], messages: [{ role: "user", content: [{ text: "Say hello" }] }] }));
    const auths = [
      undefined,
      { aws: { accessKeyId: "ASIABATONTEMP0002", secretAccessKey: KEYS.ASIABATONTEMP0002.secretAccessKey, sessionToken: KEYS.ASIABATONTEMP0002.sessionToken } },
      { apiKey: API_KEY },
    ];
    for (const auth of auths) {
      const baton = new Baton({ targets: { b: bedrockTarget(bedrock.url, MODEL, auth) } });
      const out = await baton.complete("b", ASK);
      assert.equal(out.text, oracle.output.message.content.map((b) => b.text).join(""));
      assert.equal(out.finishReason, "stop");
      assert.deepEqual(out.usage, { inputTokens: oracle.usage.inputTokens, outputTokens: oracle.usage.outputTokens });
    }
    const sent = bedrock.seen.findLast((r) => r.path.endsWith("/converse"));
    assert.equal(sent.path, `/model/${encodeURIComponent(MODEL)}/converse`, "the model id is percent-encoded in the path, as the SDK sends it");
    assert.deepEqual(sent.body, { messages: [{ role: "user", content: [{ text: "Say hello" }] }], system: [{ text: "Be brief." }] });
  });

  test("ConverseStream: event-stream frames split across reads stream as the SDK reads them", async () => {
    const oracle = await sdkStream(sdk(bedrock.url), MODEL, [{ role: "user", content: [{ text: "Say hello" }] }]);
    const baton = new Baton({ targets: { b: bedrockTarget(bedrock.url, MODEL) } });
    const read = await batonStream(baton, "b", ASK);
    assert.equal(read.text, oracle.text);
    assert.equal(read.done.finishReason, "stop");
    assert.equal(oracle.stopReason, "end_turn");
    assert.deepEqual(read.done.usage, { inputTokens: oracle.usage.inputTokens, outputTokens: oracle.usage.outputTokens });
    assert.ok(read.events.filter((e) => e.type === "text").length > 1, "text arrives as it streams");
  });

  test("tool calls, whole and streamed, read as the SDK reads them", async () => {
    const toolConfig = { tools: [{ toolSpec: { name: "weather", description: "The weather", inputSchema: { json: TOOLS.tools[0].parameters } } }] };
    const messages = [{ role: "user", content: [{ text: "Weather in Paris?" }] }];
    const whole = await sdk(bedrock.url).send(new ConverseCommand({ modelId: "tools-model", messages, toolConfig }));
    const call = whole.output.message.content.find((b) => b.toolUse).toolUse;
    const streamed = await sdkStream(sdk(bedrock.url), "tools-model", messages, toolConfig);
    const baton = new Baton({ targets: { b: bedrockTarget(bedrock.url, "tools-model") } });
    const out = await baton.complete("b", TOOLS);
    assert.equal(out.finishReason, "tool_calls");
    assert.deepEqual(out.toolCalls.map((c) => ({ id: c.id, name: c.name, input: JSON.parse(c.arguments) })), [{ id: call.toolUseId, name: call.name, input: call.input }]);
    const read = await batonStream(baton, "b", TOOLS);
    assert.deepEqual(read.calls, streamed.calls);
    assert.equal(read.text, streamed.text);
    assert.equal(read.done.finishReason, "tool_calls");
    const sent = bedrock.seen.findLast((r) => r.path.endsWith("/converse-stream"));
    assert.deepEqual(sent.body.toolConfig, toolConfig, "the tools go as the SDK sends them");
  });

  test("a wrong secret and a skewed clock are refused in Bedrock's words, classified, with no credential shown", async () => {
    const wrong = new Baton({ targets: { b: bedrockTarget(bedrock.url, MODEL, { aws: { accessKeyId: "AKIABATONTEST0001", secretAccessKey: "wrong/secret+0001" } }) } });
    const events = [];
    const e = await wrong.complete("b", ASK, { onEvent: (ev) => events.push(ev) }).then(() => null, (err) => err);
    assert.equal(e?.status, 403);
    assert.equal(e.class, "auth");
    assert.equal(e.code, "InvalidSignatureException");
    assert.match(e.message, /signature we calculated does not match/);
    assertNoSecret(`${e.message} ${JSON.stringify(e)} ${JSON.stringify(events)}`, "a refused signature");

    const realNow = Date.now;
    Date.now = () => realNow() - 10 * 60_000;
    let skewed;
    try {
      skewed = await new Baton({ targets: { b: bedrockTarget(bedrock.url, MODEL) } }).complete("b", ASK).then(() => null, (err) => err);
    } finally {
      Date.now = realNow;
    }
    assert.equal(skewed?.status, 403);
    assert.equal(skewed.class, "auth");
    assert.match(skewed.message, /^.*clock skew: the request's signature time is more than 5 minutes from AWS's/);
    assertNoSecret(`${skewed.message} ${JSON.stringify(skewed)}`, "a skewed signature");
  });

  test("Bedrock's exceptions steer the gate: throttled and unavailable members fail over, and a throttle inside a stream fails it in AWS's words", async () => {
    const events = [];
    const baton = new Baton({
      targets: { throttled: bedrockTarget(bedrock.url, "throttled"), unavailable: bedrockTarget(bedrock.url, "unavailable"), b: bedrockTarget(bedrock.url, MODEL) },
      routes: { main: { fallback: ["throttled", "unavailable", "b"] } },
    });
    const out = await baton.complete("main", ASK, { onEvent: (ev) => events.push(ev) });
    assert.equal(out.text, "Hello from Bedrock, signed and framed.");
    assert.deepEqual(out.legs.map((l) => [l.target, l.status, l.class]), [["throttled", 429, "rate_limit"], ["unavailable", 503, "overloaded"], ["b", undefined, undefined]]);
    assertNoSecret(JSON.stringify(events), "the events");
    const alone = await new Baton({ targets: { t: bedrockTarget(bedrock.url, "throttled") } }).complete("t", ASK).then(() => null, (e) => e);
    assert.deepEqual([alone?.status, alone?.class, alone?.code], [429, "rate_limit", "ThrottlingException"], "AWS's error type header is the code");

    const midStream = new Baton({ targets: { s: bedrockTarget(bedrock.url, "stream-throttled") } });
    const seen = [];
    const err = await (async () => {
      for await (const ev of midStream.stream("s", ASK)) seen.push(ev);
    })().then(() => null, (e) => e);
    assert.equal(seen.filter((e) => e.type === "text").map((e) => e.text).join(""), "Partial");
    assert.equal(err?.status, 429);
    assert.equal(err.code, "ThrottlingException");
    assert.match(err.message, /in stream: Too many tokens/);
  });

  test("a route of an anthropic_messages target then a bedrock_converse target fails over on 529, and the gateway serves it", async () => {
    const config = {
      targets: {
        claude: { format: "anthropic_messages", baseUrl: `${bedrock.url}/v1`, model: "claude-3-5-haiku-latest", apiKey: "sk-ant-local" },
        bedrock: bedrockTarget(bedrock.url, MODEL),
      },
      routes: { main: { fallback: ["claude", "bedrock"] } },
    };
    const out = await new Baton(config).complete("main", ASK);
    assert.equal(out.text, "Hello from Bedrock, signed and framed.");
    assert.deepEqual(out.legs.map((l) => [l.target, l.status, l.class]), [["claude", 529, "overloaded"], ["bedrock", undefined, undefined]]);

    const gateway = createGateway({ ...config, gateway: { apiKeys: ["gw-key"] } });
    const res = await gateway.fetch(new Request("http://gateway.local/v1/chat/completions", {
      method: "POST",
      headers: { authorization: "Bearer gw-key", "content-type": "application/json" },
      body: JSON.stringify({ model: "main", stream: true, messages: [{ role: "user", content: "Say hello" }] }),
    }));
    assert.equal(res.status, 200);
    const { text } = chatSseText(await res.text());
    assert.equal(text, "Hello from Bedrock, signed and framed.");
  });

  test("Anthropic on Bedrock: the SDK's signed InvokeModel passes the check, and a body as the SDK sends it", async () => {
    const params = { model: CLAUDE, max_tokens: 1024, system: "Be brief.", messages: [{ role: "user", content: "Say hello" }] };
    await anthropicSdk(bedrock.url).messages.create(params);
    const fromSdk = bedrock.seen.at(-1);
    await new Baton({ targets: { c: anthropicOnBedrock(bedrock.url, CLAUDE) } }).complete("c", ASK);
    const fromBaton = bedrock.seen.at(-1);
    // The same path; the model id percent-encoded as the AWS SDK sends it (this SDK leaves its `:`).
    assert.equal(decodeURIComponent(fromBaton.path), decodeURIComponent(fromSdk.path));
    assert.equal(fromBaton.path, `/model/${encodeURIComponent(CLAUDE)}/invoke`);
    // The SDK sends its own Anthropic API version; llm-baton, the one Bedrock documents.
    assert.equal(fromBaton.body.anthropic_version, "bedrock-2023-05-31");
    assert.equal(typeof fromSdk.body.anthropic_version, "string");
    const unversioned = ({ anthropic_version, ...rest }) => rest;
    assert.deepEqual(unversioned(fromBaton.body), unversioned(fromSdk.body), "the same body: Anthropic's, without model or stream");
    const wrong = new AnthropicBedrock({ baseURL: bedrock.url, awsAccessKey: "AKIABATONTEST0001", awsSecretKey: "not-the-secret", awsRegion: REGION, maxRetries: 0 });
    await assert.rejects(wrong.messages.create(params), (e) => e.status === 403);
  });

  test("Anthropic on Bedrock: text, tool calls and thinking with its signature read as the SDK reads them, whole and streamed", async () => {
    const cases = [
      [CLAUDE, ASK, { messages: [{ role: "user", content: "Say hello" }], system: "Be brief." }],
      ["claude-tools", TOOLS, { messages: [{ role: "user", content: "Weather in Paris?" }], tools: [{ name: "weather", description: "The weather", input_schema: TOOLS.tools[0].parameters }] }],
      ["claude-thinking", { ...ASK, reasoning: { budgetTokens: 1024 } }, { messages: [{ role: "user", content: "Say hello" }], system: "Be brief.", thinking: { type: "enabled", budget_tokens: 1024 } }],
    ];
    const baton = new Baton({ targets: Object.fromEntries(cases.map(([model]) => [model, anthropicOnBedrock(bedrock.url, model)])) });
    for (const [model, ask, params] of cases) {
      const sdkWhole = readMessage(await anthropicSdk(bedrock.url).messages.create({ model, max_tokens: 2048, ...params }));
      const sdkStream = anthropicSdk(bedrock.url).messages.stream({ model, max_tokens: 2048, ...params });
      let sdkText = "";
      sdkStream.on("text", (t) => (sdkText += t));
      const sdkStreamed = readMessage(await sdkStream.finalMessage());
      assert.deepEqual(sdkStreamed, sdkWhole, `${model}: the SDK reads the same whole and streamed`);
      assert.ok(sdkWhole.text.length > 0);

      const whole = readAnswer(await baton.complete(model, ask));
      assert.deepEqual(whole, sdkWhole, `${model}: whole`);
      const read = await batonStream(baton, model, ask);
      assert.deepEqual(readAnswer(read.done), sdkStreamed, `${model}: streamed`);
      assert.equal(read.text, sdkText, `${model}: the streamed text`);
      assert.ok(read.events.filter((e) => e.type === "text").length > 1, `${model}: text arrives as it streams`);
    }
    const sent = bedrock.seen.findLast((r) => r.path.endsWith("/invoke-with-response-stream"));
    assert.equal(sent.body.thinking.type, "enabled", "thinking is asked as Anthropic asks it");
  });

  test("Anthropic on Bedrock: throttling, 503, exceptions mid-stream and Anthropic's 529 inside a Bedrock answer fail as the SDK's do, classified", async () => {
    const sdkWhole = await anthropicSdk(bedrock.url).messages.create({ model: "throttled", max_tokens: 64, messages: [{ role: "user", content: "hi" }] }).then(() => null, (e) => e);
    assert.equal(sdkWhole?.status, 429);
    const baton = new Baton({ targets: { t: anthropicOnBedrock(bedrock.url, "throttled"), u: anthropicOnBedrock(bedrock.url, "unavailable") } });
    const throttled = await baton.complete("t", ASK).then(() => null, (e) => e);
    assert.deepEqual([throttled?.status, throttled?.class, throttled?.code], [429, "rate_limit", "ThrottlingException"]);
    const unavailable = await baton.complete("u", ASK).then(() => null, (e) => e);
    assert.deepEqual([unavailable?.status, unavailable?.class, unavailable?.code], [503, "overloaded", "ServiceUnavailableException"]);
    for (const [model, words] of [["stream-throttled", /Too many tokens/], ["stream-model-error", /model stream failed/], ["stream-overloaded", /Overloaded/]]) {
      let sdkText = "";
      const stream = anthropicSdk(bedrock.url).messages.stream({ model, max_tokens: 64, messages: [{ role: "user", content: "hi" }] });
      stream.on("text", (t) => (sdkText += t));
      const sdkError = await stream.finalMessage().then(() => null, (e) => e);
      assert.match(String(sdkError?.message), words, `${model}: the SDK fails too`);
      const read = { text: "" };
      const err = await (async () => {
        for await (const ev of new Baton({ targets: { s: anthropicOnBedrock(bedrock.url, model) } }).stream("s", ASK)) if (ev.type === "text") read.text += ev.text;
      })().then(() => null, (e) => e);
      assert.equal(read.text, sdkText, `${model}: the text before the error`);
      assert.match(err?.message ?? "", words);
      assertNoSecret(`${err.message} ${JSON.stringify(err)}`, model);
    }
  });

  test("a route of Anthropic (scripted, 529) then Anthropic on Bedrock fails over, whole and streamed", async () => {
    const provider = await startProvider();
    try {
      for (const mode of ["complete", "stream"]) {
        const id = `bedrock-529-${mode}`;
        await putScenario(provider.url, id, [{ status: 529, errorType: "overloaded_error", message: "Overloaded" }]);
        const baton = new Baton({
          targets: {
            anthropic: { format: "anthropic_messages", baseUrl: `${provider.url}/s/${id}/v1`, model: "claude-sonnet-4-5", apiKey: "sk-test-not-a-secret" },
            bedrock: anthropicOnBedrock(bedrock.url, CLAUDE),
          },
          routes: { claude: { fallback: ["anthropic", "bedrock"] } },
        });
        const out = mode === "complete" ? await baton.complete("claude", ASK) : (await batonStream(baton, "claude", ASK)).done;
        assert.equal(out.text, CLAUDE_TEXT, mode);
        assert.deepEqual(out.legs.map((l) => [l.target, l.status, l.class]), [["anthropic", 529, "overloaded"], ["bedrock", undefined, undefined]], mode);
      }
    } finally {
      provider.stop();
    }
  });

  test("an Anthropic client through the Node gateway to an Anthropic-on-Bedrock member has its unmodelled fields passed on", async () => {
    const gateway = await serve(createGateway({ targets: { claude: anthropicOnBedrock(bedrock.url, CLAUDE) }, gateway: { apiKeys: ["gw-key"] } }), { port: 0 });
    try {
      const client = new Anthropic({ baseURL: gateway.url, apiKey: "gw-key", maxRetries: 0 });
      const params = { model: "claude", max_tokens: 64, top_k: 7, service_tier: "standard_only", metadata: { user_id: "u-1" }, messages: [{ role: "user", content: "Say hello" }] };
      const whole = await client.messages.create(params);
      assert.equal(whole.content.map((b) => b.text).join(""), CLAUDE_TEXT);
      const sent = bedrock.seen.at(-1);
      assert.equal(sent.path, `/model/${encodeURIComponent(CLAUDE)}/invoke`);
      assert.deepEqual([sent.body.top_k, sent.body.service_tier, sent.body.metadata], [7, "standard_only", { user_id: "u-1" }]);
      assert.equal(sent.body.anthropic_version, "bedrock-2023-05-31");
      let text = "";
      for await (const ev of await client.messages.create({ ...params, stream: true })) if (ev.type === "content_block_delta" && ev.delta.type === "text_delta") text += ev.delta.text;
      assert.equal(text, CLAUDE_TEXT);
      assert.equal(bedrock.seen.at(-1).body.top_k, 7, "streamed too");
      assert.ok(!("stream" in bedrock.seen.at(-1).body));
    } finally {
      gateway.server.close();
    }
  });
});

let everywhere;
describeEverywhere("bedrock in every runtime", {
  file: "bedrock_scenarios.mjs",
  exportName: "bedrockScenarios",
  subpath: "./clouds",
  setup: async () => {
    everywhere = await startBedrock();
    return { url: everywhere.url };
  },
  teardown: () => everywhere?.stop(),
});
