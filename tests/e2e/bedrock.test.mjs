// Amazon Bedrock's Converse and ConverseStream, end to end against AWS's own code: in Node, then Deno and workerd.
//
// A local Bedrock (a real HTTP/1.1 server on 127.0.0.1) recomputes each request's SigV4
// signature with @smithy/signature-v4 (the AWS SDK's signer) and refuses a wrong or stale one
// in Bedrock's 403 shape; it takes a Bedrock API key as a bearer token; it answers Converse in
// JSON and ConverseStream in event-stream frames written by @smithy/eventstream-codec, sent in
// pieces that split the frames. The AWS SDK's BedrockRuntimeClient, pointed at the same server,
// is the oracle: what it reads, llm-baton reads the same. Its requests pass the same signature
// check, which shows the check is AWS's. Credentials never appear in an error or an event. The
// calls of bedrock_scenarios.mjs then run against the same server in Node, Deno and workerd.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { SignatureV4 } from "@smithy/signature-v4";
import { Hash } from "@smithy/hash-node";
import { EventStreamCodec } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand } from "@aws-sdk/client-bedrock-runtime";
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { Baton, BatonError } from "llm-baton";
import { createGateway } from "llm-baton/gateway";
import { API_KEY, ASK, bedrockScenarios, bedrockTarget, KEYS, MODEL, REGION, TOOLS, USAGE } from "./bedrock_scenarios.mjs";
import { resolveEntry, WORKERD_CONDITIONS, WORKERD_MODULE_RULES } from "./resolve.mjs";

const SECRETS = [...Object.keys(KEYS), ...Object.values(KEYS).flatMap((k) => [k.secretAccessKey, k.sessionToken].filter(Boolean)), API_KEY];
const codec = new EventStreamCodec(toUtf8, fromUtf8);
/** The server's clock: a test sets the client's `Date.now` wrong, in this same process. */
const serverNow = Date.now;

/** What the local Bedrock answers, by model id: text, a tool call, or an exception. */
const ANSWERS = {
  [MODEL]: { content: [{ text: "Hello from Bedrock, " }, { text: "signed and framed." }], stopReason: "end_turn" },
  "tools-model": {
    content: [{ text: "Checking." }, { toolUse: { toolUseId: "tooluse_1", name: "weather", input: { city: "Paris", days: [1, 2] } } }],
    stopReason: "tool_use",
  },
};

/** Bedrock's error answer: its type in x-amzn-ErrorType, its words in the body. */
function fail(res, status, type, message) {
  res.writeHead(status, { "content-type": "application/json", "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` });
  res.end(JSON.stringify({ message }));
}

/** `null` when the request is signed right (or carries the API key), else why not, as Bedrock words it. */
async function refusal(req, body) {
  const auth = req.headers.authorization ?? "";
  if (auth.startsWith("Bearer ")) return auth === `Bearer ${API_KEY}` ? null : [403, "UnrecognizedClientException", "Invalid API Key format: Must start with pre-defined prefix"];
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m) return [403, "AccessDeniedException", "Authorization header requires a valid signature"];
  const [, keyId, , region, service, signedHeaders] = m;
  const key = KEYS[keyId];
  if (!key) return [403, "UnrecognizedClientException", "The security token included in the request is invalid."];
  const amzDate = req.headers["x-amz-date"] ?? "";
  const signedAt = Date.parse(amzDate.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, "$1-$2-$3T$4:$5:$6Z"));
  if (!(Math.abs(serverNow() - signedAt) <= 5 * 60_000)) {
    const now = new Date().toISOString().replace(/[-:]|\.\d{3}/g, "");
    return [403, "InvalidSignatureException", `Signature expired: ${amzDate} is now earlier than ${now} (${now} - 5 min.)`];
  }
  const headers = {};
  for (const name of signedHeaders.split(";")) headers[name] = req.headers[name];
  const [host, port] = req.headers.host.split(":");
  const signer = new SignatureV4({
    credentials: { accessKeyId: keyId, secretAccessKey: key.secretAccessKey, sessionToken: key.sessionToken },
    region,
    service,
    sha256: Hash.bind(null, "sha256"),
    applyChecksum: false,
  });
  const request = { method: req.method, protocol: "http:", hostname: host, port: Number(port), path: req.url, query: {}, headers, body };
  const signed = await signer.sign(request, { signingDate: new Date(signedAt) });
  if (signed.headers.authorization !== auth || region !== REGION || service !== "bedrock") {
    return [403, "InvalidSignatureException", "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."];
  }
  return null;
}

/** One event-stream frame, as Bedrock writes it (AWS's codec). */
function frame(headers, payload) {
  const h = {};
  for (const [k, v] of Object.entries(headers)) h[k] = { type: "string", value: v };
  return codec.encode({ headers: h, body: fromUtf8(JSON.stringify(payload)) });
}
const event = (type, payload) => frame({ ":event-type": type, ":content-type": "application/json", ":message-type": "event" }, { ...payload, p: "abcdefghijklmnopqrstuvwxyz".slice(0, 1 + (JSON.stringify(payload).length % 20)) });

/** A ConverseStream's frames for an answer: blocks started, deltas, stopped; then stop and usage. */
function streamFrames(answer) {
  const frames = [event("messageStart", { role: "assistant" })];
  answer.content.forEach((block, i) => {
    if (block.text !== undefined) {
      for (const piece of block.text.match(/.{1,6}/gs)) frames.push(event("contentBlockDelta", { contentBlockIndex: i, delta: { text: piece } }));
    } else {
      const { toolUseId, name, input } = block.toolUse;
      frames.push(event("contentBlockStart", { contentBlockIndex: i, start: { toolUse: { toolUseId, name } } }));
      const json = JSON.stringify(input);
      for (const piece of [json.slice(0, 9), json.slice(9)]) frames.push(event("contentBlockDelta", { contentBlockIndex: i, delta: { toolUse: { input: piece } } }));
    }
    frames.push(event("contentBlockStop", { contentBlockIndex: i }));
  });
  frames.push(event("messageStop", { stopReason: answer.stopReason }));
  frames.push(event("metadata", { usage: USAGE, metrics: { latencyMs: 42 } }));
  return frames;
}

/** Writes the frames in pieces that cut through them, each piece its own write. */
async function writeSplit(res, frames) {
  const bytes = Buffer.concat(frames.map((f) => Buffer.from(f)));
  for (let at = 0; at < bytes.length; ) {
    const n = 7 + ((at * 13) % 61);
    res.write(bytes.subarray(at, at + n));
    at += n;
    await new Promise((r) => setImmediate(r));
  }
  res.end();
}

/** The local Bedrock; also an Anthropic Messages endpoint that is always overloaded (529). */
function startBedrock() {
  const seen = [];
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks).toString("utf8");
    if (req.url === "/v1/messages") {
      seen.push({ path: req.url });
      res.writeHead(529, { "content-type": "application/json" });
      res.end(JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }));
      return;
    }
    const route = /^\/model\/([^/]+)\/(converse|converse-stream)$/.exec(req.url);
    seen.push({ path: req.url, auth: req.headers.authorization?.split(" ")[0], body: body ? JSON.parse(body) : null });
    if (!route) return fail(res, 404, "UnknownOperationException", "no such operation");
    const refused = await refusal(req, body);
    if (refused) return fail(res, ...refused);
    const model = decodeURIComponent(route[1]);
    if (model === "throttled") return fail(res, 429, "ThrottlingException", "Too many requests, please wait before trying again.");
    if (model === "unavailable") return fail(res, 503, "ServiceUnavailableException", "Bedrock is unable to process your request.");
    if (route[2] === "converse-stream" && model === "stream-throttled") {
      res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream" });
      const exception = frame({ ":exception-type": "throttlingException", ":content-type": "application/json", ":message-type": "exception" }, { message: "Too many tokens, please wait before trying again." });
      return writeSplit(res, [event("messageStart", { role: "assistant" }), event("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "Partial" } }), exception]);
    }
    const answer = ANSWERS[model];
    if (!answer) return fail(res, 404, "ResourceNotFoundException", `Model ${model} not found`);
    if (route[2] === "converse") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ output: { message: { role: "assistant", content: answer.content } }, stopReason: answer.stopReason, usage: USAGE, metrics: { latencyMs: 42 } }));
      return;
    }
    res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream" });
    await writeSplit(res, streamFrames(answer));
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ url: `http://127.0.0.1:${server.address().port}`, seen, stop: () => server.close() })));
}

/** The AWS SDK's client against the local Bedrock, over HTTP/1.1. */
function sdk(url, keyId = "AKIABATONTEST0001") {
  const { secretAccessKey, sessionToken } = KEYS[keyId];
  return new BedrockRuntimeClient({ region: REGION, endpoint: url, credentials: { accessKeyId: keyId, secretAccessKey, sessionToken }, requestHandler: new NodeHttpHandler(), maxAttempts: 1 });
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
    const sse = await res.text();
    const text = sse.split("\n").filter((l) => l.startsWith("data: {")).map((l) => JSON.parse(l.slice(6)).choices?.[0]?.delta?.content ?? "").join("");
    assert.equal(text, "Hello from Bedrock, signed and framed.");
  });
});

const repo = fileURLToPath(new URL("../../", import.meta.url));
const artifacts = `${repo}tests/e2e/artifacts/bedrock`;

describe("bedrock in every runtime", () => {
  let bedrock;
  let mf;
  before(async () => {
    bedrock = await startBedrock();
    mkdirSync(artifacts, { recursive: true });
    const entry = resolveEntry(WORKERD_CONDITIONS).slice(2);
    writeFileSync(`${artifacts}/worker.mjs`, `// Generated by tests/e2e/bedrock.test.mjs.
import { Baton } from "../../../../pkg/${entry}";
import { bedrockScenarios } from "../../bedrock_scenarios.mjs";
export default {
  async fetch(request) {
    const url = new URL(request.url);
    try {
      await bedrockScenarios[url.searchParams.get("scenario")]({ Baton, url: url.searchParams.get("bedrock") });
      return Response.json({ ok: true });
    } catch (e) {
      return Response.json({ ok: false, error: String((e && e.stack) || e) });
    }
  },
};
`);
    writeFileSync(`${artifacts}/deno.mjs`, `// Generated by tests/e2e/bedrock.test.mjs: every scenario in Deno, one JSON line of results.
import { Baton } from "llm-baton";
import { bedrockScenarios } from "../../bedrock_scenarios.mjs";
const results = {};
for (const [name, run] of Object.entries(bedrockScenarios)) {
  results[name] = await run({ Baton, url: Deno.args[0] }).then(() => "ok", (e) => String((e && e.stack) || e));
}
console.log(JSON.stringify(results));
`);
    mf = new Miniflare({ modules: true, modulesRoot: repo, scriptPath: `${artifacts}/worker.mjs`, modulesRules: WORKERD_MODULE_RULES, compatibilityDate: "2025-01-01" });
    await mf.ready;
  });
  after(async () => {
    await mf?.dispose();
    bedrock?.stop();
  });

  for (const [name, run] of Object.entries(bedrockScenarios)) {
    test(`node: ${name}`, () => run({ Baton, BatonError, url: bedrock.url }));
    test(`workerd: ${name}`, async () => {
      const res = await mf.dispatchFetch(`http://worker.test/?scenario=${encodeURIComponent(name)}&bedrock=${encodeURIComponent(bedrock.url)}`);
      const out = await res.json();
      if (!out.ok) throw new Error(`in workerd: ${out.error}`);
    });
  }

  test("deno: every scenario", async () => {
    const deno = `${repo}node_modules/.bin/deno`;
    const args = ["run", "--no-check", "--no-lock", "--allow-net=127.0.0.1", "--allow-read", "--allow-env", `${artifacts}/deno.mjs`, bedrock.url];
    // The local Bedrock answers in this process, so Deno runs beside it (spawn, not spawnSync).
    const child = spawn(deno, args, { cwd: repo, env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    const code = await new Promise((resolve) => child.on("exit", resolve));
    assert.equal(code, 0, stderr);
    const results = JSON.parse(stdout.trim().split("\n").at(-1));
    assert.deepEqual(Object.keys(results), Object.keys(bedrockScenarios));
    for (const [name, result] of Object.entries(results)) assert.equal(result, "ok", `in deno, ${name}: ${result}`);
  });
});
