// A local Amazon Bedrock for the e2e tests: a real HTTP/1.1 server on 127.0.0.1 serving Converse,
// ConverseStream, InvokeModel and InvokeModelWithResponseStream (Anthropic Messages on Bedrock),
// importable by any Node test (`startBedrock()`), e.g. to put Bedrock in a cross-cloud route.
//
// It recomputes each request's SigV4 signature with @smithy/signature-v4 (the AWS SDK's signer)
// and refuses a wrong or stale one in Bedrock's 403 shape; it takes a Bedrock API key as a bearer
// token; it answers in JSON, and streams in event-stream frames written by
// @smithy/eventstream-codec, sent in pieces that split the frames. An InvokeModel stream's `chunk`
// frames carry `{"bytes": base64}` of one Anthropic event each, as Bedrock sends them. It answers
// CORS preflights, so a page (Chromium) may call it. What it answers, by model id:
//   Converse:   MODEL (text), "tools-model" (a tool call)
//   InvokeModel: CLAUDE (text), "claude-tools" (a tool call), "claude-thinking" (thinking with its
//               signature, then text)
//   both:       "throttled" (429 ThrottlingException), "unavailable" (503 ServiceUnavailable),
//               "stream-throttled" (text, then a throttlingException frame), and for InvokeModel
//               "stream-model-error" (a modelStreamErrorException frame) and "stream-overloaded"
//               (Anthropic's overloaded_error inside a chunk, before any text)
// `/v1/messages` is an Anthropic Messages endpoint that is always overloaded (529); GET
// `/_test/seen` lists what it received, for a test in another runtime.
import { createServer } from "node:http";
import { SignatureV4 } from "@smithy/signature-v4";
import { Hash } from "@smithy/hash-node";
import { EventStreamCodec } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { API_KEY, CLAUDE, KEYS, MODEL, REGION, USAGE } from "./bedrock_scenarios.mjs";

const codec = new EventStreamCodec(toUtf8, fromUtf8);
/** The server's clock: a test may set the client's `Date.now` wrong, in this same process. */
const serverNow = Date.now;

/** What Converse answers, by model id: text or a tool call. */
const CONVERSE_ANSWERS = {
  [MODEL]: { content: [{ text: "Hello from Bedrock, " }, { text: "signed and framed." }], stopReason: "end_turn" },
  "tools-model": {
    content: [{ text: "Checking." }, { toolUse: { toolUseId: "tooluse_1", name: "weather", input: { city: "Paris", days: [1, 2] } } }],
    stopReason: "tool_use",
  },
};

/** What InvokeModel answers, by model id: Anthropic messages (the model is the one asked). */
export const ANTHROPIC_ANSWERS = {
  [CLAUDE]: { content: [{ type: "text", text: "Hello from Claude on Bedrock, in Anthropic's own words." }], stop_reason: "end_turn" },
  "claude-tools": {
    content: [{ type: "text", text: "Let me check." }, { type: "tool_use", id: "toolu_bdrk_01", name: "weather", input: { city: "Paris", days: [1, 2] } }],
    stop_reason: "tool_use",
  },
  "claude-thinking": {
    content: [
      { type: "thinking", thinking: "The user wants a greeting; keep it short.", signature: "EqQBCkYIBxgCKkDbedrockSig0123456789==" },
      { type: "text", text: "Hello, after some thought." },
    ],
    stop_reason: "end_turn",
  },
};
const ANTHROPIC_USAGE = { input_tokens: 21, output_tokens: 13 };

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
    const now = new Date(serverNow()).toISOString().replace(/[-:]|\.\d{3}/g, "");
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
  const url = new URL(req.url, "http://x");
  const query = Object.fromEntries(url.searchParams);
  const request = { method: req.method, protocol: "http:", hostname: host, port: Number(port), path: url.pathname, query, headers, body };
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
/** An event, padded with `p` as Bedrock pads its events' lengths. */
const event = (type, payload) => frame({ ":event-type": type, ":content-type": "application/json", ":message-type": "event" }, { ...payload, p: "abcdefghijklmnopqrstuvwxyz".slice(0, 1 + (JSON.stringify(payload).length % 20)) });
const exception = (type, message) => frame({ ":exception-type": type, ":content-type": "application/json", ":message-type": "exception" }, { message });
/** An InvokeModelWithResponseStream chunk: one Anthropic event, base64 in `bytes`. */
const chunk = (anthropicEvent) => event("chunk", { bytes: Buffer.from(JSON.stringify(anthropicEvent)).toString("base64") });

/** A ConverseStream's frames for an answer: blocks started, deltas, stopped; then stop and usage. */
function converseFrames(answer) {
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

/** Anthropic's whole message for `model`'s answer, as InvokeModel returns it. */
function anthropicMessage(model, answer) {
  return { id: "msg_bdrk_01", type: "message", role: "assistant", model, content: answer.content, stop_reason: answer.stop_reason, stop_sequence: null, usage: ANTHROPIC_USAGE };
}

/** The Anthropic events of a streamed answer: started, each block's deltas, stopped. */
function anthropicEvents(model, answer) {
  const events = [{ type: "message_start", message: { ...anthropicMessage(model, answer), content: [], stop_reason: null, usage: { input_tokens: ANTHROPIC_USAGE.input_tokens, output_tokens: 1 } } }];
  answer.content.forEach((block, index) => {
    const start = { text: { type: "text", text: "" }, tool_use: { ...block, input: {} }, thinking: { type: "thinking", thinking: "", signature: "" } }[block.type];
    events.push({ type: "content_block_start", index, content_block: start });
    const deltas = {
      text: () => block.text.match(/.{1,7}/gs).map((text) => ({ type: "text_delta", text })),
      tool_use: () => { const json = JSON.stringify(block.input); return [json.slice(0, 10), json.slice(10)].map((partial_json) => ({ type: "input_json_delta", partial_json })); },
      thinking: () => [...block.thinking.match(/.{1,12}/gs).map((thinking) => ({ type: "thinking_delta", thinking })), { type: "signature_delta", signature: block.signature }],
    }[block.type]();
    for (const delta of deltas) events.push({ type: "content_block_delta", index, delta });
    events.push({ type: "content_block_stop", index });
  });
  events.push({ type: "message_delta", delta: { stop_reason: answer.stop_reason, stop_sequence: null }, usage: { output_tokens: ANTHROPIC_USAGE.output_tokens } });
  events.push({ type: "message_stop", "amazon-bedrock-invocationMetrics": { inputTokenCount: 21, outputTokenCount: 13, invocationLatency: 420, firstByteLatency: 120 } });
  return events;
}

/**
 * Writes the frames in pieces that cut through them, each piece its own write, a moment apart (so
 * that a browser, too, reads the text in more than one piece).
 */
async function writeSplit(res, frames) {
  const bytes = Buffer.concat(frames.map((f) => Buffer.from(f)));
  for (let at = 0; at < bytes.length; ) {
    const n = 7 + ((at * 13) % 61);
    res.write(bytes.subarray(at, at + n));
    at += n;
    await new Promise((r) => setTimeout(r, 1));
  }
  res.end();
}

const CORS = { "access-control-allow-origin": "*", "access-control-expose-headers": "*" };

/**
 * Starts the local Bedrock on a free loopback port. Resolves with `{ url, seen, stop }`: `seen`
 * records each request (path, auth scheme, body) in order.
 */
export function startBedrock() {
  const seen = [];
  const server = createServer(async (req, res) => {
    if (req.method === "OPTIONS") {
      res.writeHead(204, { ...CORS, "access-control-allow-methods": "POST", "access-control-allow-headers": req.headers["access-control-request-headers"] ?? "", "access-control-max-age": "600" });
      return res.end();
    }
    for (const [k, v] of Object.entries(CORS)) res.setHeader(k, v);
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks).toString("utf8");
    if (req.method === "GET" && req.url === "/_test/seen") {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify(seen));
    }
    if (req.url === "/v1/messages") {
      seen.push({ path: req.url });
      res.writeHead(529, { "content-type": "application/json" });
      res.end(JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }));
      return;
    }
    const route = /^\/model\/([^/]+)\/(converse|converse-stream|invoke|invoke-with-response-stream)$/.exec(req.url);
    seen.push({ path: req.url, auth: req.headers.authorization?.split(" ")[0], body: body ? JSON.parse(body) : null });
    if (!route) return fail(res, 404, "UnknownOperationException", "no such operation");
    const refused = await refusal(req, body);
    if (refused) return fail(res, ...refused);
    const [model, operation] = [decodeURIComponent(route[1]), route[2]];
    const invoke = operation.startsWith("invoke");
    const streams = operation === "converse-stream" || operation === "invoke-with-response-stream";
    if (model === "throttled") return fail(res, 429, "ThrottlingException", "Too many requests, please wait before trying again.");
    if (model === "unavailable") return fail(res, 503, "ServiceUnavailableException", "Bedrock is unable to process your request.");
    if (streams && model.startsWith("stream-")) {
      res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream" });
      const opening = invoke
        ? [chunk({ type: "message_start", message: { ...anthropicMessage(model, { content: [], stop_reason: null }), usage: { input_tokens: 21, output_tokens: 1 } } }), chunk({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }), chunk({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Partial" } })]
        : [event("messageStart", { role: "assistant" }), event("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "Partial" } })];
      if (model === "stream-overloaded") opening.splice(1);
      const ending = {
        "stream-throttled": () => exception("throttlingException", "Too many tokens, please wait before trying again."),
        "stream-model-error": () => exception("modelStreamErrorException", "The model stream failed: an error from the model."),
        "stream-overloaded": () => chunk({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
      }[model];
      if (!ending) return res.end();
      return writeSplit(res, [...opening, ending()]);
    }
    const answer = (invoke ? ANTHROPIC_ANSWERS : CONVERSE_ANSWERS)[model];
    if (!answer) return fail(res, 404, "ResourceNotFoundException", `Model ${model} not found`);
    const sent = JSON.parse(body);
    if (invoke && ("model" in sent || "stream" in sent)) return fail(res, 400, "ValidationException", `Malformed input request: extraneous key [${"model" in sent ? "model" : "stream"}] is not permitted`);
    if (invoke && typeof sent.anthropic_version !== "string") return fail(res, 400, "ValidationException", "Malformed input request: #: required key [anthropic_version] not found");
    if (operation === "converse") {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify({ output: { message: { role: "assistant", content: answer.content } }, stopReason: answer.stopReason, usage: USAGE, metrics: { latencyMs: 42 } }));
    }
    if (operation === "invoke") {
      res.writeHead(200, { "content-type": "application/json", "x-amzn-bedrock-input-token-count": "21", "x-amzn-bedrock-output-token-count": "13" });
      return res.end(JSON.stringify(anthropicMessage(model, answer)));
    }
    res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream" });
    await writeSplit(res, invoke ? anthropicEvents(model, answer).map(chunk) : converseFrames(answer));
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ url: `http://127.0.0.1:${server.address().port}`, seen, stop: () => server.close() })));
}
