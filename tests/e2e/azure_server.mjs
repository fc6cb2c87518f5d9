// A local Azure OpenAI resource: a real HTTP/1.1 server on 127.0.0.1 that checks what Azure
// checks (the credential: a resource key in `api-key`, or an Entra ID token as a bearer; the
// URL: the v1 API's `/openai/v1/...`, or the dated API's deployment path and a known
// `api-version`) and answers in Azure's shapes, from Microsoft's published examples:
// - Chat answers and streams with `prompt_filter_results` and each choice's
//   `content_filter_results`; a stream's first chunk has empty `choices` and the prompt's results
//   (learn.microsoft.com/azure/ai-foundry/openai/concepts/content-filter, "Content streaming");
// - the content filter's 400 (`code: "content_filter"`, `innererror.code:
//   "ResponsibleAIPolicyViolation"`, `innererror.content_filter_result`) and a finished answer cut
//   by the filter (`finish_reason: "content_filter"`), from the same page;
// - the 429 of a rate limit, with `retry-after-ms` beside `retry-after` (Azure OpenAI quotas and
//   limits, "429 errors"), and the 401 of a wrong key (the REST reference's error shape);
// - Responses in OpenAI's shape, which Azure's Responses API answers in.
// Importable by the Node tests (tests/e2e/azure.test.mjs); Deno, workerd and Chromium reach it
// over HTTP. CORS is open so a page may call it, and exposes retry-after-ms as a browser needs.
import { createServer } from "node:http";

import { AZURE_KEY, ENTRA_TOKEN, API_VERSION, TEXT, CALL, SAFE, PROMPT_RESULTS, CUT_RESULTS, REFUSED_RESULTS } from "./azure_scenarios.mjs";

const KNOWN_VERSIONS = new Set([API_VERSION, "2025-04-01-preview"]);

const USAGE = { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 };

/** The deployments: what each answers. */
const DEPLOYMENTS = {
  "gpt-4o": { text: TEXT, finish: "stop", results: SAFE },
  tools: { text: null, call: CALL, finish: "tool_calls", results: {} },
  "cut-by-filter": { text: "", finish: "content_filter", results: CUT_RESULTS },
};

function send(res, status, body, headers = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/** Azure's error shape (`{error: {code, message, ...}}`). */
const error = (res, status, code, message, more = {}, headers = {}) => send(res, status, { error: { code, message, ...more } }, headers);

function chatAnswer(deployment, answer) {
  const message = { role: "assistant", content: answer.text };
  if (answer.call) message.tool_calls = [{ id: answer.call.id, type: "function", function: { name: answer.call.name, arguments: answer.call.arguments } }];
  return {
    id: "chatcmpl-AZ1",
    object: "chat.completion",
    created: 1727000000,
    model: "gpt-4o-2024-08-06",
    system_fingerprint: "fp_azure",
    prompt_filter_results: PROMPT_RESULTS,
    choices: [{ index: 0, finish_reason: answer.finish, logprobs: null, message, content_filter_results: answer.results }],
    usage: USAGE,
  };
}

/** A Chat stream as Azure writes it: the prompt's results first with no choices, the role with empty results, the text in pieces with their results, the finish, then usage. */
function chatChunks(answer, includeUsage) {
  const base = { id: "chatcmpl-AZ1", object: "chat.completion.chunk", created: 1727000000, model: "gpt-4o-2024-08-06", system_fingerprint: "fp_azure" };
  const choice = (delta, results, finish = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null, content_filter_results: results }] });
  const chunks = [{ id: "", object: "", created: 0, model: "", choices: [], prompt_filter_results: PROMPT_RESULTS }];
  chunks.push(choice({ role: "assistant", content: "" }, {}));
  for (const piece of (answer.text ?? "").match(/.{1,7}/gs) ?? []) chunks.push(choice({ content: piece }, answer.results));
  if (answer.call) {
    const { id, name, arguments: args } = answer.call;
    chunks.push(choice({ tool_calls: [{ index: 0, id, type: "function", function: { name, arguments: "" } }] }, {}));
    for (const piece of [args.slice(0, 8), args.slice(8)]) chunks.push(choice({ tool_calls: [{ index: 0, function: { arguments: piece } }] }, {}));
  }
  chunks.push(choice({}, answer.finish === "content_filter" ? answer.results : {}, answer.finish));
  chunks.push({ ...base, choices: [] });
  if (includeUsage) chunks.push({ ...base, choices: [], usage: USAGE });
  return chunks;
}

function responsesAnswer(answer) {
  const output = [];
  if (answer.text) output.push({ type: "message", id: "msg_1", status: "completed", role: "assistant", content: [{ type: "output_text", text: answer.text, annotations: [] }] });
  if (answer.call) output.push({ type: "function_call", id: "fc_1", call_id: answer.call.id, name: answer.call.name, arguments: answer.call.arguments, status: "completed" });
  return {
    id: "resp_AZ1", object: "response", created_at: 1727000000, status: "completed", model: "gpt-4o-2024-08-06", output,
    usage: { input_tokens: 12, output_tokens: 6, total_tokens: 18, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
  };
}

function responsesEvents(answer) {
  const whole = responsesAnswer(answer);
  const events = [["response.created", { response: { ...whole, status: "in_progress", output: [], usage: null } }]];
  whole.output.forEach((item, i) => {
    if (item.type === "message") {
      events.push(["response.output_item.added", { output_index: i, item: { ...item, status: "in_progress", content: [] } }]);
      events.push(["response.content_part.added", { output_index: i, item_id: item.id, content_index: 0, part: { type: "output_text", text: "", annotations: [] } }]);
      for (const delta of item.content[0].text.match(/.{1,7}/gs)) events.push(["response.output_text.delta", { output_index: i, item_id: item.id, content_index: 0, delta }]);
      events.push(["response.output_text.done", { output_index: i, item_id: item.id, content_index: 0, text: item.content[0].text }]);
      events.push(["response.content_part.done", { output_index: i, item_id: item.id, content_index: 0, part: item.content[0] }]);
    } else {
      events.push(["response.output_item.added", { output_index: i, item: { ...item, status: "in_progress", arguments: "" } }]);
      events.push(["response.function_call_arguments.delta", { output_index: i, item_id: item.id, delta: item.arguments }]);
      events.push(["response.function_call_arguments.done", { output_index: i, item_id: item.id, arguments: item.arguments }]);
    }
    events.push(["response.output_item.done", { output_index: i, item }]);
  });
  events.push(["response.completed", { response: whole }]);
  return events.map(([type, data], n) => ({ type, sequence_number: n, ...data }));
}

/** Writes SSE data frames, each its own write. */
async function writeSse(res, frames, named) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const frame of frames) {
    res.write(named ? `event: ${frame.type}\ndata: ${JSON.stringify(frame)}\n\n` : `data: ${JSON.stringify(frame)}\n\n`);
    await new Promise((r) => setImmediate(r));
  }
  if (!named) res.write("data: [DONE]\n\n");
  res.end();
}

/** Where a request went: `{api, deployment}` (api `chat` or `responses`), or why Azure would not find it. */
function route(url, body) {
  const version = url.searchParams.get("api-version");
  const dated = version !== null;
  if (dated && !KNOWN_VERSIONS.has(version)) return { status: 400, code: "BadRequest", message: "API version not supported" };
  let m;
  if (!dated && url.pathname === "/openai/v1/chat/completions") return { api: "chat", deployment: body.model, v1: true };
  if (!dated && url.pathname === "/openai/v1/responses") return { api: "responses", deployment: body.model, v1: true };
  if (dated && (m = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/.exec(url.pathname))) return { api: "chat", deployment: decodeURIComponent(m[1]) };
  if (dated && url.pathname === "/openai/responses") return { api: "responses", deployment: body.model };
  return { status: 404, code: "404", message: "Resource not found" };
}

/** Whether the request carries a credential the resource takes: its key as api-key, an Entra ID token as a bearer, or (the v1 API only, as Microsoft's OpenAI-client examples use it) the key as a bearer. */
function authorized(req, v1) {
  if (req.headers["api-key"] !== undefined) return req.headers["api-key"] === AZURE_KEY && req.headers.authorization === undefined;
  const auth = req.headers.authorization ?? "";
  return auth === `Bearer ${ENTRA_TOKEN}` || (v1 && auth === `Bearer ${AZURE_KEY}`);
}

/** Starts the local Azure resource; resolves to `{ url, seen, stop }`. `seen` holds each request's path and query, credential header names and body. */
export function startAzure() {
  const seen = [];
  const busy = new Set();
  const server = createServer(async (req, res) => {
    res.setHeader("access-control-allow-origin", "*");
    res.setHeader("access-control-expose-headers", "retry-after, retry-after-ms, x-ms-region, apim-request-id");
    if (req.method === "OPTIONS") {
      res.writeHead(204, { "access-control-allow-methods": "POST", "access-control-allow-headers": req.headers["access-control-request-headers"] ?? "*", "access-control-max-age": "600" });
      return res.end();
    }
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const url = new URL(req.url, "http://azure.local");
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      return error(res, 400, "BadRequest", "The request body is not valid JSON");
    }
    const where = route(url, body);
    seen.push({ path: url.pathname, query: url.search, credentials: ["api-key", "authorization"].filter((h) => req.headers[h] !== undefined), body });
    if (where.status) return error(res, where.status, where.code, where.message);
    if (!authorized(req, where.v1)) {
      return error(res, 401, "401", "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.");
    }
    const { deployment } = where;
    // Busy once per name: the first request is refused as Azure refuses one over its rate limit.
    if (deployment.startsWith("busy-once-") && !busy.has(deployment)) {
      busy.add(deployment);
      return error(res, 429, "429", "Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 1 second.", {}, { "retry-after": "1", "retry-after-ms": "300" });
    }
    if (deployment === "filtered") {
      return error(res, 400, "content_filter", "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766", {
        param: "prompt",
        type: null,
        status: 400,
        innererror: { code: "ResponsibleAIPolicyViolation", content_filter_result: REFUSED_RESULTS },
      });
    }
    const answer = DEPLOYMENTS[deployment.startsWith("busy-once-") ? "gpt-4o" : deployment];
    if (!answer) return error(res, 404, "DeploymentNotFound", "The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.");
    if (where.api === "chat") {
      if (!body.stream) return send(res, 200, chatAnswer(deployment, answer));
      return writeSse(res, chatChunks(answer, body.stream_options?.include_usage === true), false);
    }
    if (!body.stream) return send(res, 200, responsesAnswer(answer));
    return writeSse(res, responsesEvents(answer), true);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ url: `http://127.0.0.1:${server.address().port}`, seen, stop: () => server.close() })));
}
