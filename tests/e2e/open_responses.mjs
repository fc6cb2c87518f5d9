// The Open Responses compliance test, ported: its request tests and the schema checks it makes of
// every answer and streamed event, for the gateway's own e2e runs (responses_compliance.test.mjs,
// gateway_responses.test.mjs).
//
// Source: openresponses/openresponses (Apache-2.0), the runner in src/lib/compliance-tests.ts and
// src/lib/sse-parser.ts and the spec's component schemas (schema/components/schemas/*.json, bundled
// in public/openapi/openapi.json), as of commit 92c12d9 (2026-07-15); its January 2026 set (six
// tests) is a subset of the head's request tests, plus the streamed tool call of 0cb939c. This is a
// port, not a copy: no package publishes the spec's schema, so the objects the gateway writes are
// described here in JSON Schema from the spec's `required` lists, types and enums, and checked with
// a real validator (ajv), as the runner checks them with the zod schemas generated from the spec.
// The spec's item and part unions are narrowed to the members a gateway writes (messages, function
// calls, reasoning; output text, refusals, summary and reasoning text), so a part the gateway has no
// business sending fails too.
import Ajv from "ajv";

const nullable = (schema) => ({ anyOf: [schema, { type: "null" }] });
const string = { type: "string" };
const integer = { type: "integer" };
const number = { type: "number" };
const boolean = { type: "boolean" };
const ref = (name) => ({ $ref: `#/$defs/${name}` });
const object = (required, properties) => ({ type: "object", required, properties });
const typed = (type, required, properties = {}) => object(["type", ...required], { type: { const: type }, ...properties });

const $defs = {
  InputTokensDetails: object(["cached_tokens"], { cached_tokens: integer }),
  OutputTokensDetails: object(["reasoning_tokens"], { reasoning_tokens: integer }),
  Usage: object(["input_tokens", "output_tokens", "total_tokens", "input_tokens_details", "output_tokens_details"], {
    input_tokens: integer,
    output_tokens: integer,
    total_tokens: integer,
    input_tokens_details: ref("InputTokensDetails"),
    output_tokens_details: ref("OutputTokensDetails"),
  }),
  Error: object(["code", "message"], { code: string, message: string }),
  IncompleteDetails: object(["reason"], { reason: string }),
  OutputTextContent: typed("output_text", ["text", "annotations"], { text: string, annotations: { type: "array" }, logprobs: { type: "array" } }),
  RefusalContent: typed("refusal", ["refusal"], { refusal: string }),
  SummaryTextContent: typed("summary_text", ["text"], { text: string }),
  ReasoningTextContent: typed("reasoning_text", ["text"], { text: string }),
  ContentPart: { oneOf: ["OutputTextContent", "RefusalContent", "SummaryTextContent", "ReasoningTextContent"].map(ref) },
  Status: { enum: ["in_progress", "completed", "incomplete"] },
  Message: typed("message", ["id", "status", "role", "content"], {
    id: string,
    status: ref("Status"),
    role: { enum: ["user", "assistant", "system", "developer"] },
    content: { type: "array", items: ref("ContentPart") },
    phase: string,
  }),
  FunctionCall: typed("function_call", ["id", "call_id", "name", "arguments", "status"], {
    id: string,
    call_id: string,
    name: string,
    arguments: string,
    status: ref("Status"),
  }),
  ReasoningBody: typed("reasoning", ["id", "summary"], {
    id: string,
    content: { type: "array", items: ref("ContentPart") },
    summary: { type: "array", items: ref("ContentPart") },
    encrypted_content: string,
  }),
  ItemField: { oneOf: ["Message", "FunctionCall", "ReasoningBody"].map(ref) },
  FunctionTool: typed("function", ["name", "description", "parameters", "strict"], {
    name: string,
    description: nullable(string),
    parameters: nullable({ type: "object" }),
    strict: nullable(boolean),
  }),
  ToolChoice: {
    oneOf: [{ enum: ["none", "auto", "required"] }, typed("function", [], { name: string }), typed("allowed_tools", ["tools", "mode"], { tools: { type: "array" }, mode: string })],
  },
  TextField: object(["format"], {
    format: {
      oneOf: [
        typed("text", []),
        typed("json_object", []),
        typed("json_schema", ["name", "description", "schema", "strict"], {
          name: string,
          description: nullable(string),
          schema: nullable({ type: "object" }),
          strict: boolean,
        }),
      ],
    },
    verbosity: { enum: ["low", "medium", "high"] },
  }),
  Reasoning: object(["effort", "summary"], {
    effort: nullable({ enum: ["none", "low", "medium", "high", "xhigh"] }),
    summary: nullable({ enum: ["concise", "detailed", "auto"] }),
  }),
  ResponseResource: object(
    [
      "id", "object", "created_at", "completed_at", "status", "incomplete_details", "model", "previous_response_id",
      "instructions", "output", "error", "tools", "tool_choice", "truncation", "parallel_tool_calls", "text", "top_p",
      "presence_penalty", "frequency_penalty", "top_logprobs", "temperature", "reasoning", "user", "usage",
      "max_output_tokens", "max_tool_calls", "store", "background", "service_tier", "metadata", "safety_identifier",
      "prompt_cache_key",
    ],
    {
      id: string,
      object: { const: "response" },
      created_at: integer,
      completed_at: nullable(integer),
      status: string,
      incomplete_details: nullable(ref("IncompleteDetails")),
      model: string,
      previous_response_id: nullable(string),
      instructions: nullable(string),
      output: { type: "array", items: ref("ItemField") },
      error: nullable(ref("Error")),
      tools: { type: "array", items: ref("FunctionTool") },
      tool_choice: ref("ToolChoice"),
      truncation: { enum: ["auto", "disabled"] },
      parallel_tool_calls: boolean,
      text: ref("TextField"),
      top_p: number,
      presence_penalty: number,
      frequency_penalty: number,
      top_logprobs: integer,
      temperature: number,
      reasoning: nullable(ref("Reasoning")),
      user: nullable(string),
      usage: nullable(ref("Usage")),
      max_output_tokens: nullable(integer),
      max_tool_calls: nullable(integer),
      store: boolean,
      background: boolean,
      service_tier: string,
      safety_identifier: nullable(string),
      prompt_cache_key: nullable(string),
      metadata: {},
    },
  ),
};

/** A streaming event of `type` with `required` fields besides its type and sequence number. */
const event = (type, required, properties) => typed(type, ["sequence_number", ...required], { sequence_number: integer, ...properties });
const at = { item_id: string, output_index: integer };
const lifecycle = (type) => event(type, ["response"], { response: ref("ResponseResource") });
const item = (type) => event(type, ["output_index", "item"], { output_index: integer, item: nullable(ref("ItemField")) });
const part = (type, index) => event(type, ["item_id", "output_index", index, "part"], { ...at, [index]: integer, part: ref("ContentPart") });
const text = (type, index, field, extra = {}) =>
  event(type, ["item_id", "output_index", ...(index ? [index] : []), field], { ...at, ...(index ? { [index]: integer } : {}), [field]: string, ...extra });
const logprobs = { logprobs: { type: "array" } };

/** The spec's streaming events, by type (the runner's `streamingEventSchema` union). */
const EVENTS = [
  ...["response.created", "response.queued", "response.in_progress", "response.completed", "response.failed", "response.incomplete"].map(lifecycle),
  item("response.output_item.added"),
  item("response.output_item.done"),
  part("response.content_part.added", "content_index"),
  part("response.content_part.done", "content_index"),
  part("response.reasoning_summary_part.added", "summary_index"),
  part("response.reasoning_summary_part.done", "summary_index"),
  text("response.output_text.delta", "content_index", "delta", logprobs),
  text("response.output_text.done", "content_index", "text", logprobs),
  text("response.refusal.delta", "content_index", "delta"),
  text("response.refusal.done", "content_index", "refusal"),
  text("response.reasoning_text.delta", "content_index", "delta"),
  text("response.reasoning_text.done", "content_index", "text"),
  text("response.reasoning_summary_text.delta", "summary_index", "delta"),
  text("response.reasoning_summary_text.done", "summary_index", "text"),
  text("response.function_call_arguments.delta", null, "delta"),
  text("response.function_call_arguments.done", null, "arguments"),
  event("error", ["error"], {
    error: object(["type", "code", "message", "param"], { type: string, code: nullable(string), message: string, param: nullable(string) }),
  }),
];

const ajv = new Ajv({ allErrors: true, strict: true });
const validateResource = ajv.compile({ $defs, ...ref("ResponseResource") });
const eventValidators = new Map(EVENTS.map((schema) => [schema.properties.type.const, ajv.compile({ $defs, ...schema })]));

const issues = (validate, where) => (validate.errors ?? []).map((e) => `${where}${e.instancePath || "(root)"}: ${e.message}${e.params?.allowedValues ? ` ${JSON.stringify(e.params.allowedValues)}` : ""}`);

/** What is wrong with a response object, as the spec describes one: [] when nothing. */
export function responseIssues(response) {
  return validateResource(response) ? [] : issues(validateResource, "response");
}

/** What is wrong with a streamed event: [] when nothing. */
export function eventIssues(data) {
  const validate = eventValidators.get(data?.type);
  if (!validate) return [`${JSON.stringify(data?.type)} is not an Open Responses streaming event`];
  return validate(data) ? [] : issues(validate, data.type);
}

/**
 * Reads an SSE response body as the runner's parser does: each event's data parsed and checked,
 * the last response.completed / failed / incomplete's response kept. `{ events, errors, finalResponse }`.
 */
export async function readEvents(response) {
  const text = await response.text();
  const events = [];
  const errors = [];
  let finalResponse = null;
  for (const frame of text.split("\n\n")) {
    const data = frame.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n");
    if (!data || data === "[DONE]") continue;
    let parsed;
    try {
      parsed = JSON.parse(data);
    } catch {
      errors.push(`Failed to parse event data: ${data}`);
      continue;
    }
    events.push(parsed);
    errors.push(...eventIssues(parsed));
    if (["response.completed", "response.failed", "response.incomplete"].includes(parsed.type)) finalResponse = parsed.response;
  }
  return { events, errors, finalResponse };
}

const hasOutput = (r) => (r.output?.length ? [] : ["Response has no output items"]);
const hasOutputType = (type) => (r) => (r.output?.some((i) => i.type === type) ? [] : [`Expected output item of type "${type}" but none found`]);
const completedStatus = (r) => (r.status === "completed" ? [] : [`Expected status "completed" but got "${r.status}"`]);
const streamedEvents = (_, sse) => (sse.events.length ? [] : ["No streaming events received"]);
const streamedFunctionCall = (_, sse) => {
  const types = sse.events.map((e) => e.type);
  const errors = [];
  if (!sse.events.some((e) => e.type === "response.output_item.added" && e.item?.type === "function_call")) errors.push("Missing response.output_item.added event with function_call item");
  for (const type of ["response.function_call_arguments.delta", "response.function_call_arguments.done"]) if (!types.includes(type)) errors.push(`Missing ${type} event`);
  if (!sse.events.some((e) => e.type === "response.output_item.done" && e.item?.type === "function_call")) errors.push("Missing response.output_item.done event with function_call item");
  return errors;
};

const WEATHER_TOOL = {
  type: "function",
  name: "get_weather",
  description: "Get the current weather for a location",
  parameters: {
    type: "object",
    properties: { location: { type: "string", description: "The city and state, e.g. San Francisco, CA" } },
    required: ["location"],
  },
};
// The runner's image (a 32x32 red heart on white), as a data: URL.
const HEART =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAIAAAD8GO2jAAABmklEQVR42tyWAaTyUBzFew/eG4AHz+MBSAHKBiJRGFKwIgQQJKLUIioBIhCAiCAAEizAQIAECaASqFFJq84nudjnaqvuPnxzgP9xfrq5938csPn7PwHTKSoViCIEAYEAMhmoKsU2mUCWEQqB5xEMIp/HaGQG2G6RSuH9HQ7H34rFrtPbdz4jl6PbwmEsl3QA1mt4vcRKk8dz9eg6IpF7tt9fzGY0gCgafFRFo5Blc5vLhf3eCOj1yNhM5GRMVK0aATxPZoz09YXjkQDmczJgquGQAPp9WwCNBgG027YACgUC6HRsAZRKBDAY2AJoNv/ZnwzA6WScznG3p4UAymXGAEkyXrTFAh8fLAGqagQAyGaZpYsi7bHTNPz8MEj//LxuFPo+UBS8vb0KaLXubrRa7aX0RMLCykwmn0z3+XA4WACcTpCkh9MFAZpmuVXo+mO/w+/HZvNgbblcUCxaSo/Hyck80Yu6XXDcvfVZr79cvMZjuN2U9O9vKAqjZrfbIZ0mV4TUi9Xqz6jddNy//7+e3n8Fhf/Llo2kxi8AQyGRoDkmAhAAAAAASUVORK5CYII=";

/**
 * The runner's HTTP tests of POST /responses: `{ id, streaming?, january?, request(model),
 * validators, reply }`, where `reply` is what the scripted provider answers with (a step of
 * tests/provider) and `january` marks the six of the January 2026 set.
 */
export const REQUEST_TESTS = [
  {
    id: "basic-response",
    january: true,
    request: (model) => ({ model, input: [{ type: "message", role: "user", content: "Say hello in exactly 3 words." }] }),
    validators: [hasOutput, completedStatus],
    reply: { text: "Hello there, friend." },
  },
  {
    id: "assistant-phase",
    request: (model) => ({
      model,
      input: [
        { type: "message", role: "assistant", phase: "commentary", content: "I should answer with the saved number." },
        { type: "message", role: "assistant", phase: "final_answer", content: "The number is four." },
        { type: "message", role: "user", content: "Repeat only the number." },
      ],
    }),
    validators: [hasOutput, completedStatus],
    reply: { text: "Four." },
  },
  {
    id: "streaming-response",
    january: true,
    streaming: true,
    request: (model) => ({ model, input: [{ type: "message", role: "user", content: "Count from 1 to 5." }] }),
    validators: [streamedEvents, completedStatus],
    reply: { text: "1, 2, 3, 4, 5.", chunks: 5 },
  },
  {
    id: "system-prompt",
    january: true,
    request: (model) => ({
      model,
      input: [
        { type: "message", role: "system", content: "You are a pirate. Always respond in pirate speak." },
        { type: "message", role: "user", content: "Say hello." },
      ],
    }),
    validators: [hasOutput, completedStatus],
    reply: { text: "Ahoy, matey!" },
  },
  {
    id: "tool-calling",
    january: true,
    request: (model) => ({ model, input: [{ type: "message", role: "user", content: "What's the weather like in San Francisco?" }], tools: [WEATHER_TOOL] }),
    validators: [hasOutput, hasOutputType("function_call")],
    reply: { toolCall: { name: "get_weather", arguments: '{"location":"San Francisco, CA"}' } },
  },
  {
    id: "tool-calling-streaming",
    streaming: true,
    request: (model) => ({ model, input: [{ type: "message", role: "user", content: "What's the weather like in San Francisco?" }], tools: [WEATHER_TOOL] }),
    validators: [streamedEvents, streamedFunctionCall],
    reply: { toolCall: { name: "get_weather", arguments: '{"location":"San Francisco, CA"}' } },
  },
  {
    id: "image-input",
    january: true,
    request: (model) => ({
      model,
      input: [
        {
          type: "message",
          role: "user",
          content: [
            { type: "input_text", text: "What do you see in this image? Answer in one sentence." },
            { type: "input_image", image_url: HEART },
          ],
        },
      ],
    }),
    validators: [hasOutput, completedStatus],
    reply: { text: "A red heart on a white background." },
  },
  {
    id: "multi-turn",
    january: true,
    request: (model) => ({
      model,
      input: [
        { type: "message", role: "user", content: "My name is Alice." },
        { type: "message", role: "assistant", content: "Hello Alice! Nice to meet you. How can I help you today?" },
        { type: "message", role: "user", content: "What is my name?" },
      ],
    }),
    validators: [hasOutput, completedStatus],
    reply: { text: "Your name is Alice." },
  },
];

/**
 * The runner's tests the gateway does not serve, with why (docs/gateway.md, "Open Responses"): the
 * compaction endpoint and the WebSocket transport.
 */
export const NOT_SERVED = {
  "compact-response": "POST /responses/compact: the gateway keeps no state and has no opaque compaction to give (docs/gateway.md)",
  "compact-missing-model": "POST /responses/compact is not served (docs/gateway.md)",
  "websocket-*": "the WebSocket transport is not served: the gateway streams over SSE (docs/gateway.md)",
};

/**
 * Runs one request test as the runner does: the request (streamed when the test streams), the
 * answer checked against the schema (every streamed event too), then the test's own checks.
 * Resolves to `{ id, status: "passed" | "failed", errors, response }`.
 */
export async function runRequestTest(test, { baseUrl, apiKey, model }) {
  const body = { ...test.request(model), ...(test.streaming ? { stream: true } : {}) };
  const res = await fetch(`${baseUrl}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
    body: JSON.stringify(body),
  });
  if (!res.ok) return { id: test.id, status: "failed", errors: [`HTTP ${res.status}: ${await res.text()}`] };
  const sse = test.streaming ? await readEvents(res) : { events: [], errors: [] };
  const response = test.streaming ? sse.finalResponse : await res.json();
  const schema = responseIssues(response);
  const errors = schema.length ? [...sse.errors, ...schema] : [...sse.errors, ...test.validators.flatMap((v) => v(response, sse))];
  return { id: test.id, status: errors.length ? "failed" : "passed", errors, response };
}
