// Type declarations for llm-baton, shared by every runtime entry (node, deno, workerd, browser).

// ---------------------------------------------------------------------------------------------
// The config document
// ---------------------------------------------------------------------------------------------

/** The wire protocol a target speaks. */
export type Format = "openai_chat" | "anthropic_messages" | "openai_responses" | "gemini" | "bedrock_converse";

/** Per-attempt limits in milliseconds; each is off when omitted. */
export interface Timeouts {
  /** From dispatch to the last byte of the answer. */
  totalMs?: number;
  /** From dispatch to the response headers. */
  headersMs?: number;
  /** From dispatch to the first visible content delta (streams only). */
  firstTokenMs?: number;
  /** Streams: between visible content deltas, after the first. Whole answers: from the response
   * headers, and between body bytes after them. */
  idleMs?: number;
}

/** A provider endpoint and model. */
export type Target = ProviderTarget | BedrockTarget | AnthropicBedrockTarget | AzureTarget | VertexTarget;

/** A target of any format but Bedrock's, on the format's own API. */
export interface ProviderTarget {
  format: Exclude<Format, "bedrock_converse">;
  /** Only on a cloud's target (`AnthropicBedrockTarget`, `AzureTarget`, `VertexTarget`). */
  cloud?: undefined;
  /** e.g. "https://api.openai.com/v1"; no credentials in the URL (use apiKey). */
  baseUrl: string;
  model: string;
  /** Sent the way the format expects (Authorization, x-api-key, x-goog-api-key); never logged. */
  apiKey?: string;
  /**
   * Extra request headers. Values must be valid HTTP field values (no CR, LF or other control
   * characters except tab, only Latin-1, no surrounding spaces); framing and hop-by-hop headers
   * (content-length, transfer-encoding, host, expect, connection, keep-alive, te, trailer,
   * upgrade, proxy-connection) are refused.
   */
  headers?: Record<string, string>;
  timeouts?: Timeouts;
  /**
   * A malformed stream frame fails the attempt as a protocol error. Default false: one that
   * cannot hold part of a tool call is skipped with a "warning" event (at most 8 per stream).
   */
  strictFrames?: boolean;
  /**
   * The model continues a final assistant message (a prefill), so a stream that broke elsewhere
   * may be continued here (`afterStart` mode "continue"). A property of the model, not the format:
   * most Anthropic models take a prefill, newer ones refuse it; OpenAI's own Chat API has none;
   * some compatible servers do. Default false.
   */
  prefill?: boolean;
  /**
   * Send the call's remaining budget in `x-baton-deadline-ms`, so a stacked llm-baton gateway
   * never outlives the caller. "auto" (default): once the target has answered as an llm-baton
   * gateway (an `x-baton-attempts` header). Other servers ignore the header, but a browser's
   * CORS preflight must allow it.
   */
  propagateDeadline?: boolean | "auto";
  /**
   * Provider fields set at the top level of every request body, after everything llm-baton wrote
   * (so they may override it), e.g. `{ top_k: 40 }` or vLLM's `{ continue_final_message: true }`.
   * Must be an object; `stream` is refused (each call decides it).
   */
  extraBody?: Record<string, unknown>;
}

/**
 * Amazon Bedrock's Converse API (docs/bedrock.md): signed with AWS keys (`aws`) or sent with a
 * Bedrock API key (`apiKey`), not both.
 */
export interface BedrockTarget extends Omit<ProviderTarget, "format" | "baseUrl" | "cloud"> {
  format: "bedrock_converse";
  /** Implied: a Converse target is on Bedrock. */
  cloud?: "bedrock";
  /** The model's AWS region, e.g. "us-east-1": the endpoint and the signature's scope. */
  region: string;
  /** Default `https://bedrock-runtime.{region}.amazonaws.com`. */
  baseUrl?: string;
  /** AWS keys that sign each request (SigV4); `sessionToken` for temporary credentials. Never logged. */
  aws?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

/**
 * Anthropic Messages on Amazon Bedrock (InvokeModel and InvokeModelWithResponseStream,
 * docs/bedrock.md): Anthropic's body and events, Bedrock's endpoint, signing and errors. `model`
 * is a Bedrock model id or inference profile, e.g. "us.anthropic.claude-sonnet-4-5-20250929-v1:0".
 */
export interface AnthropicBedrockTarget extends Omit<BedrockTarget, "format" | "cloud"> {
  format: "anthropic_messages";
  cloud: "bedrock";
}

/**
 * Azure OpenAI (docs/azure.md): an OpenAI format on an Azure resource, with a resource key
 * (`apiKey`, sent as `api-key`) or a Microsoft Entra ID token (`entraToken`, sent as a bearer
 * token), exactly one. Without `apiVersion`, the v1 API (`{baseUrl}/openai/v1/...`); with it,
 * the dated API (`{baseUrl}/openai/deployments/{deployment}/chat/completions?api-version=...`,
 * `{baseUrl}/openai/responses?api-version=...`).
 */
export type AzureTarget = AzureTargetFields & ({ apiKey: string; entraToken?: never } | { entraToken: string; apiKey?: never });

/** An Azure OpenAI target's fields but its credential. */
export interface AzureTargetFields extends Omit<ProviderTarget, "format" | "apiKey" | "cloud"> {
  format: "openai_chat" | "openai_responses";
  cloud: "azure";
  /** The resource's endpoint, e.g. "https://RESOURCE.openai.azure.com", without /openai. */
  baseUrl: string;
  /** The deployment's name, sent as the body's `model` (and the dated Chat API's default `deployment`). */
  model: string;
  /** The dated API's version, e.g. "2024-10-21"; omit it for the v1 API. */
  apiVersion?: string;
  /** The dated Chat API's deployment, in the path; default `model`. */
  deployment?: string;
}

/**
 * What a provider's content filter said (Azure OpenAI), as it wrote it: the prompt's results
 * (`prompt_filter_results`, one per prompt) and the answer's (a choice's `content_filter_results`,
 * or the refused request's `innererror.content_filter_result`), by category (`hate`, `violence`...).
 */
export interface ContentFilterResults {
  promptFilterResults?: Array<{ prompt_index?: number; content_filter_results?: Record<string, unknown> }>;
  contentFilterResults?: Record<string, { filtered?: boolean; severity?: string; detected?: boolean } | unknown>;
}

/**
 * Gemini or Claude on Google Vertex AI (docs/vertex.md), with an access token (`accessToken`) or
 * a service account's key (`serviceAccount`) that llm-baton mints tokens from, not both. A page
 * in a browser must never hold a service account's key: give it a short-lived token.
 */
export interface VertexTarget extends Omit<ProviderTarget, "format" | "baseUrl" | "apiKey" | "cloud"> {
  format: "gemini" | "anthropic_messages";
  cloud: "vertex";
  /** The Google Cloud project id. */
  project: string;
  /** e.g. "us-east5", or "global" (also the multi-regions "us" and "eu"). */
  region: string;
  /** Replaces `https://{region}-aiplatform.googleapis.com/v1` (a proxy, a test server). */
  baseUrl?: string;
  /** An OAuth access token (`gcloud auth print-access-token`), sent as a bearer token. Never logged. */
  accessToken?: string;
  /** The service account's JSON key, as an object or its text. Never logged. */
  serviceAccount?: GoogleServiceAccountKey | string;
}

/**
 * A service account's JSON key as Google issues it (or its text): `client_email`, the PKCS#8
 * `private_key` and `token_uri` are read; its other fields may stay.
 */
export interface GoogleServiceAccountKey {
  client_email: string;
  private_key: string;
  /** Default "https://oauth2.googleapis.com/token". */
  token_uri?: string;
  /** Named in the JWT's header as `kid`. */
  private_key_id?: string;
  [field: string]: unknown;
}

/**
 * What kind of provider error an HTTP failure is, read from the provider's own error code (README,
 * "Failure classes"). By default `context_length`, `quota` and `auth` are never retried and fail
 * over; `content_filter` is final; `overloaded` and `rate_limit` are retried and fail over.
 */
export type FailureClass = "context_length" | "content_filter" | "quota" | "auth" | "overloaded" | "rate_limit";

/**
 * Which failures qualify for a retry or a failover: a failure kind, a failure class, any
 * 4xx / 5xx, or one HTTP status. Only its class name retries `context_length`, `quota`, `auth`
 * or `content_filter`, and only its class name routes around `content_filter`.
 */
export type Condition = "transport" | "timeout" | "protocol" | "4xx" | "5xx" | FailureClass | number;

export interface Backoff {
  /** The first delay (default 250). */
  initialMs?: number;
  /** Each further delay is the previous one times this (default 2). */
  multiplier?: number;
  /** No delay exceeds this (default 8000). */
  maxMs?: number;
  /**
   * "equal" (default): half the computed delay plus a random part up to the other half, so
   * retries never come closer than half the computed delay; "full": a random delay between 0
   * and the computed one; "none": exactly it.
   */
  jitter?: "equal" | "full" | "none";
}

/** Try the same strategy again, `attempts` times in total. */
export interface RetryStrategy {
  retry: Strategy;
  attempts: number;
  backoff?: Backoff;
  /**
   * Replaces the default set: transport failures, member timeouts, 408, 409, 429 and 5xx.
   * By default a `headers` or `first_token` timeout is not retried when an enclosing fallback
   * has another member ready (it takes over at once); a list naming "timeout" retries it.
   * The caller's cancellation, the call's deadline and anything after visible stream content
   * are never retried.
   */
  retryOn?: Condition[];
  /** A Retry-After longer than this (default 60000) fails the call at once. */
  maxRetryAfterMs?: number;
}

/** Try each member in order until one answers. */
export interface FallbackStrategy {
  fallback: Strategy[];
  /** Narrows failover (default: any failure before visible stream content). */
  fallbackOn?: Condition[];
  /** What a stream that broke after its first visible content does (default: it ends). */
  afterStart?: AfterStart;
  /** Race the next member against one that has shown nothing yet (docs/hedging.md). */
  hedge?: Hedge;
}

/**
 * Hedging (docs/hedging.md): when the member in flight has shown no content by the threshold,
 * the next member starts too; the first to show content wins and every other leg is aborted
 * (its leg's outcome is "lost", no failure for its breaker). Each hedge spends a unit of the
 * retry budget and is refused, with a "warning" event, when none is left. Give `afterMs`,
 * `afterPercentile`, or both (`afterMs` until enough is learned).
 */
export interface Hedge {
  /** A fixed threshold in ms; with `afterPercentile`, the one used until enough is learned, and the latest a learned one may be. */
  afterMs?: number;
  /** This percentile (1 to 99.9) of the target's recent times to first token. */
  afterPercentile?: number;
  /** A learned threshold is never below this. Default 100. */
  floorMs?: number;
  /** Times to first token a target must have shown before a learned threshold applies (1 to 64). Default 20. */
  minSamples?: number;
  /** Hedges per call, 1 to 10. Default 1. */
  max?: number;
}

/**
 * Resuming a stream that broke after the reader saw its start (README, "Resume"). A break the
 * fallback would fail over on (`fallbackOn`) goes to a later member:
 * - "continue": the first later member whose target has `prefill: true` continues the text shown
 *   so far, in the same answer. Impossible inside a tool call or reasoning; then, as in "restart".
 * - "restart": in `Baton.stream` only, a `{type: "reset"}` item tells the reader to discard what
 *   it showed, and the next member answers afresh. The gateway never restarts.
 * A resume that fails too ends the call with the original break.
 */
export interface AfterStart {
  mode: "continue" | "restart";
  /** Breaks resumed per call, 1 to 10. Default 1. */
  attempts?: number;
  /** A resume is not started with less of the deadline left. Default 1000. */
  minRemainingMs?: number;
}

/**
 * Spread calls over the members, optionally weighted: one member per call. A failed member does
 * not move to another (wrap it in a fallback for that); a member whose breaker is open is skipped.
 */
export interface RoundRobinStrategy {
  roundRobin: Strategy[];
  /** One positive whole number per member. */
  weights?: number[];
}

/**
 * Each call tries first the member with the lowest recent median time to first token (one not
 * yet measured goes first, to learn it), then the others in that order, as a fallback would;
 * one call in twenty puts another member first, so a member that got faster is noticed. The
 * times are shared through a health store, like the breakers.
 */
export interface FastestStrategy {
  fastest: Strategy[];
}

/** A target name, another route's name, or a nested strategy. */
export type Strategy = string | RetryStrategy | FallbackStrategy | RoundRobinStrategy | FastestStrategy;

/** The `gateway` section, read by `createGateway` (and ignored by `Baton`). */
export interface GatewayConfig {
  /** When set, every request needs one: `Authorization: Bearer <key>` or `x-api-key: <key>`. */
  apiKeys?: string[];
  /** Request bodies larger than this are refused with 413 (default 1 MiB). */
  maxBodyBytes?: number;
  /**
   * `true` (or a list holding `"*"`) allows any origin; otherwise a list of exact origins such
   * as `"https://app.example"` (patterns like `"https://*.x.com"` are refused); off by default.
   */
  cors?: boolean | string[];
}

export interface Config {
  targets: Record<string, Target>;
  routes?: Record<string, Strategy>;
  /** The default deadline of every call, retries, backoff and failover included. */
  deadlineMs?: number;
  gateway?: GatewayConfig;
  /**
   * Circuit breakers per target and a retry budget per Baton (README, "Health"); on by default
   * with the values below; `false` turns both off.
   */
  health?: HealthConfig | false;
}

export interface HealthConfig {
  /** Consecutive counted failures that open a target's breaker. Default 5. */
  failures?: number;
  /** Or this share of counted outcomes over `windowMs` (once it holds `minRequests`). Default 0.5. */
  failureRatio?: number;
  /** Default 30000. */
  windowMs?: number;
  /** Default 10. */
  minRequests?: number;
  /** How long an open breaker stays open before one probe. Default 5000. */
  cooldownMs?: number;
  /**
   * Retries and failover hops spend from a budget of `minPerSecond` per second over 10 s plus
   * `ratio` of the successful calls (Finagle's 20% + 10/s by default); `false`: no budget.
   */
  retryBudget?: { ratio?: number; minPerSecond?: number } | false;
}

/** One target's circuit breaker, as `baton.health()` and `GET /v1/health` show it. */
export interface TargetHealth {
  target: string;
  state: "closed" | "open" | "half_open";
  /** When open or half-open: until the next probe may go. */
  reopensInMs?: number;
  consecutiveFailures: number;
  /** Counted outcomes and failures in the window. */
  window: { outcomes: number; failures: number };
  /** The last failure that counted against the target. */
  lastFailure?: Cause;
}

export interface HealthSnapshot {
  /** False when the config says `health: false`. */
  enabled: boolean;
  targets: TargetHealth[];
  /** Units left and spent in the last 10 s, or null without a budget. */
  retryBudget: { balance: number; spent: number } | null;
}

/** A health store's answer about some targets (times relative to when it answered). */
export interface HealthView {
  /** `ttftMs`: the target's recent times to first token, oldest first (for hedging and `fastest`). */
  targets: { target: string; state: "closed" | "open" | "half_open"; probe: boolean; reopensInMs?: number; lastFailure?: Cause; ttftMs?: number[] }[];
  /** The retry budget's balance for everyone sharing the store (absent without a budget). */
  retryBudget?: number;
}

/** A `leg` event, as stores receive it. */
export type LegEvent = { type: "leg"; leg: Leg; cause?: Cause };

/**
 * Shares breakers between Batons or gateways (README, "Health"): the Durable Object store of
 * `llm-baton/durable`, `llm-baton/gateway/redis` between Node processes and hosts,
 * `broadcastHealthStore()` between browser tabs, or your own.
 */
export interface HealthStore {
  /** The shared view of these targets; probe grants must be exclusive across everyone sharing it. */
  admit(targets: string[]): HealthView | Promise<HealthView>;
  /** Attempts as they end; fire and forget (errors are ignored). */
  report(events: LegEvent[]): void | Promise<void>;
}

export interface BatonOptions {
  /** Share breakers through this store instead of keeping them in this Baton alone. */
  healthStore?: HealthStore;
  /** The longest a call waits for the store before it fails open (default 50; taken from its deadline). */
  healthWaitMs?: number;
  /** How long the store's answer about a target holds (default 1000). */
  healthCacheMs?: number;
  /** OpenTelemetry spans (and metrics) of every call and attempt (README, "Traces (OpenTelemetry)"). */
  telemetry?: TelemetryOptions;
}

/**
 * An OpenTelemetry Context, as `context.active()` of `@opentelemetry/api` gives it. llm-baton
 * does not depend on the API: these are the members it uses.
 */
export interface TelemetryContext {
  getValue(key: symbol): unknown;
  setValue(key: symbol, value: unknown): TelemetryContext;
  deleteValue(key: symbol): TelemetryContext;
}

/** An OpenTelemetry Tracer (`trace.getTracer("my-app")`): the members llm-baton uses. */
export interface TelemetryTracer {
  startSpan(name: string, options?: object, context?: TelemetryContext): object;
}

/** An OpenTelemetry Meter (`metrics.getMeter("my-app")`): the members llm-baton uses. */
export interface TelemetryMeter {
  createHistogram(name: string, options?: { unit?: string; description?: string }): {
    record(value: number, attributes?: Record<string, string | number | boolean>): void;
  };
}

export interface TelemetryOptions {
  /**
   * One span per call (`chat {route}`, kind CLIENT; SERVER at the gateway) and one per attempt
   * (`chat {model}`, kind CLIENT), whose ids each attempt sends upstream as `traceparent`.
   */
  tracer: TelemetryTracer;
  /**
   * Histograms: `gen_ai.client.operation.duration`, `gen_ai.client.token.usage`,
   * `gen_ai.client.operation.time_to_first_chunk`, `baton.client.attempts`,
   * `baton.client.attempt.duration`.
   */
  meter?: TelemetryMeter;
  /**
   * Record the request's messages and the answer (`gen_ai.input.messages`,
   * `gen_ai.output.messages`) on the call span. Default false: no message content in any span.
   */
  recordContent?: boolean;
}

/**
 * The breakers and the retry budget on their own, for a store that keeps the shared state
 * (a Durable Object, a browser tab answering for the others).
 */
export declare class HealthState {
  /** `policy`: a config's `health` section (omitted: the defaults). */
  constructor(policy?: HealthConfig | false);
  /** Each target's admission for one asker; a half-open target grants its one probe here. */
  admit(targets: string[]): HealthView;
  report(events: LegEvent[]): void;
  snapshot(): HealthSnapshot;
}

// ---------------------------------------------------------------------------------------------
// Requests and answers
// ---------------------------------------------------------------------------------------------

export interface ToolCall {
  id: string;
  name: string;
  /** The JSON text the model produced. */
  arguments: string;
  /** What the provider issued with the call (Gemini's thought signature), to send back as it came. */
  state?: ReasoningState;
}

/**
 * What a provider issued with its reasoning, to be sent back unchanged in the next turn: an
 * Anthropic thinking block's `signature` (or a redacted one's `redactedData`), a Gemini
 * `thoughtSignature`, a Responses reasoning item's `id` and `encryptedContent`; for Chat
 * Completions reasoning, nothing but its issuer (its text goes back as `reasoning_content`). It
 * names the target's format and model that issued it, and is sent only to a target of the same
 * format and model (README, "Agents and reasoning").
 */
export type ReasoningState =
  | { format: Format; model: string }
  | { format: Format; model: string; signature: string }
  | { format: Format; model: string; redactedData: string }
  | { format: Format; model: string; id: string; encryptedContent?: string };

/** A piece of an assistant's reasoning, with its state: in assistant messages only. */
export interface ReasoningPart {
  type: "reasoning";
  text: string;
  /**
   * The text is the model's own reasoning (OpenAI Chat's reasoning fields, a Responses item's
   * `reasoning_text` content); without it, a summary of its reasoning (Responses summaries,
   * Anthropic thinking, Gemini thought summaries).
   */
  raw?: boolean;
  state?: ReasoningState;
}

/** A piece of text. */
export interface TextPart {
  type: "text";
  text: string;
}

/**
 * An image by URL (`mediaType` optional; Gemini needs it), or by base64 `data` with its
 * `mediaType`. A `data:` URL in `url` is read as data.
 */
export type ImagePart =
  | { type: "image"; url: string; mediaType?: string }
  | { type: "image"; data: string; mediaType: string };

/**
 * A file such as a PDF, by base64 `data` or by `url`, with its `mediaType`. OpenAI Chat takes
 * PDF data only (no URL), Anthropic PDFs only: a file a route's target cannot carry is a config
 * error before anything is sent.
 */
export type FilePart =
  | { type: "file"; data: string; mediaType: string; filename?: string }
  | { type: "file"; url: string; mediaType: string; filename?: string };

export type Part = TextPart | ImagePart | FilePart | ReasoningPart;

export interface Message {
  role: "system" | "user" | "assistant" | "tool";
  /**
   * A string (one text part) or parts; only user messages carry images and files, only assistant
   * messages reasoning (written before their other parts).
   */
  content?: string | Part[] | null;
  /** Tool calls an assistant message made (to replay a conversation). */
  toolCalls?: ToolCall[];
  /** For role "tool": the call this message answers. */
  toolCallId?: string;
}

export interface Tool {
  name: string;
  description?: string;
  /** A JSON Schema object (default: an object with no properties). */
  parameters?: Record<string, unknown>;
}

/** Whether the model must call a tool: "auto", "none", "required", or the named tool (one of `tools`). */
export type ToolChoice = "auto" | "none" | "required" | { name: string };

/**
 * Structured output: free text, any JSON object, or JSON following `schema` (a JSON Schema).
 * `name` (letters, digits, _ and -, up to 64) and `strict` reach the OpenAI formats; Anthropic
 * takes a schema only.
 */
export type ResponseFormat =
  | { type: "text" }
  | { type: "json"; schema?: Record<string, unknown>; name?: string; description?: string; strict?: boolean };

export interface ChatRequest {
  messages: Message[];
  maxTokens?: number;
  /** 0 to 2. */
  temperature?: number;
  /** 0 to 1. */
  topP?: number;
  /** A whole number; not sent to Anthropic and Responses targets, which have none. */
  seed?: number;
  stop?: string | string[];
  tools?: Tool[];
  toolChoice?: ToolChoice;
  /** false: at most one tool call per turn (not sent to Gemini, which has no such switch). */
  parallelToolCalls?: boolean;
  responseFormat?: ResponseFormat;
  /**
   * Reasoning on, and its state kept for the next turn (README, "Agents and reasoning"): Chat's
   * `reasoning_effort`; Responses' `reasoning` with encrypted content and `store: false`;
   * Anthropic's `thinking` (the effort's budget: 1024, 2048, 8192, 24576); Gemini's
   * `thinkingConfig` (`thinkingLevel` on Gemini 3, else `thinkingBudget`).
   */
  reasoning?: Reasoning;
}

export interface Reasoning {
  effort?: "minimal" | "low" | "medium" | "high";
  /** Tokens to think with (Anthropic, at least 1024 and below maxTokens; Gemini). */
  budgetTokens?: number;
  /** The reasoning's summary as text (Responses, Gemini). */
  summary?: boolean;
}

/** An answer as the assistant message to push onto the history, its reasoning state kept. */
export interface AssistantMessage {
  role: "assistant";
  content: Part[];
  toolCalls?: ToolCall[];
}

/** "lost": another leg of a hedge showed content first, and this one was aborted. */
export type LegOutcome = "ok" | "lost" | "http" | "timeout" | "transport" | "cancelled" | "protocol";

/** Which limit fired: the call's deadline or one of the attempt's limits. */
export type TimeoutKind = "deadline" | "total" | "headers" | "first_token" | "idle";

/** One attempt against one target. Times are milliseconds since the call started. */
export interface Leg {
  target: string;
  /** 1-based position of this attempt within the call. */
  attempt: number;
  startMs: number;
  endMs: number;
  outcome: LegOutcome;
  status?: number;
  timeout?: TimeoutKind;
  retryAfterMs?: number;
  /** The provider error's class, when it had one. */
  class?: FailureClass;
  /** Time to the first visible content (streams). */
  ttftMs?: number;
  /** Malformed stream frames skipped in this attempt (each also a "warning" event). */
  skippedFrames?: number;
  /** The token counts this attempt's provider reported, even if the attempt failed later. */
  usage?: Usage;
  /** For an attempt that resumed a broken stream: the broken attempt, how, and the text kept. */
  resumedFrom?: { attempt: number; mode: "continue" | "restart"; keptChars: number };
}

/**
 * Token counts as the provider reported them. A count it did not report, or reported as no
 * count (fractional, negative, above 2^53 - 1, not a number), is unknown and omitted.
 */
export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
}

/** The result of a call: the whole answer and how it was obtained. */
export interface Completion {
  text: string;
  /** The target that finished the answer. */
  target: string;
  /** The model the provider says finished it (else the target's model). */
  model: string;
  /** The targets whose output makes up the answer, in order (two after a continue). */
  contributors: string[];
  /** "stop" | "length" | "tool_calls" | "content_filter", or the provider's own word. */
  finishReason: string;
  /** What the provider's content filter said about the prompt and the answer (Azure OpenAI); streamed, the latest of each. */
  contentFilter?: ContentFilterResults;
  /**
   * The answer's tokens: the first contributor's input, and every contributor's output (omitted
   * when one of them reported none).
   */
  usage: Usage;
  /** Every leg's reported usage added up: what the call was billed, retries and resumes included. */
  billedUsage: Usage;
  legs: Leg[];
  toolCalls?: ToolCall[];
  reasoning?: string;
  /**
   * The answer as the assistant message to push onto `messages` for the next turn: its reasoning
   * (with the provider's state), text and tool calls. Sent back as it is, it is what the provider
   * that issued the state takes.
   */
  message: AssistantMessage;
}

// ---------------------------------------------------------------------------------------------
// Calls, events and errors
// ---------------------------------------------------------------------------------------------

export type ErrorKind = "config" | "timeout" | "http" | "transport" | "cancelled" | "protocol" | "internal";

/** Why an attempt failed, as carried by retry and failover events. */
export interface Cause {
  kind: ErrorKind;
  message: string;
  status?: number;
  /** kind "http": the provider's own error code ("insufficient_quota", "overloaded_error", "RESOURCE_EXHAUSTED"...). */
  code?: string;
  /** kind "http": the failure class read from it. */
  class?: FailureClass;
  retryAfterMs?: number;
  /** kind "http", class "content_filter": what the content filter found (Azure OpenAI). */
  contentFilter?: ContentFilterResults;
  timeout?: TimeoutKind;
  limitMs?: number;
}

/** Progress of a call, reported through `CallOptions.onEvent` as it happens. */
export type CallEvent =
  | { type: "attempt"; target: string; attempt: number }
  | { type: "retry"; target: string; attempt: number; of: number; delayMs: number; cause: Cause }
  | { type: "failover"; from: string; to: string; cause: Cause }
  /** Attempt `attempt` on `to` starts beside `from`'s, which showed nothing in `afterMs`. */
  | { type: "hedge"; from: string; to: string; attempt: number; afterMs: number; threshold: "fixed" | "learned" }
  | { type: "leg"; leg: Leg; cause?: Cause }
  /** A member was passed over: its circuit breaker is open, or (no `reopensInMs`) a hedging fallback knows it slow. */
  | { type: "skip"; target: string; reason: string; reopensInMs?: number; cause?: Cause }
  /** A broken stream goes on at `attempt` on `to`; `keptChars` of text continued (0 for a restart). */
  | { type: "resume"; mode: "continue" | "restart"; from: string; to: string; attempt: number; cause: Cause; keptChars: number }
  /** A malformed stream frame was skipped, or a broken stream was not resumed; `message` says why. */
  | { type: "warning"; target: string; attempt: number; message: string };

export interface CallOptions {
  /** This call's deadline, replacing the config's deadlineMs. */
  deadlineMs?: number;
  /** Aborting it cancels the call at once (BatonError kind "cancelled"). */
  signal?: AbortSignal;
  /**
   * Progress events. A callback that throws or returns a rejecting promise cannot break the call:
   * the first such error of a call is reported with console.error and the call goes on.
   */
  onEvent?: (event: CallEvent) => void | Promise<void>;
  /**
   * The OpenTelemetry Context to start the call's span in (e.g. `context.active()`); without it,
   * the tracer's active context. Only read when the Baton has `telemetry`.
   */
  context?: TelemetryContext;
}

/** `Baton.stream`'s options. */
export interface StreamOptions extends CallOptions {
  /**
   * Whether the reader can discard what it was given when a `reset` item comes (default true).
   * `false`: a broken stream may continue on another member (`afterStart` mode "continue") but
   * never restarts; where only a restart would do, the stream fails instead.
   */
  resettable?: boolean;
}

/** What `Baton.stream` yields, in order: deltas as they arrive, then exactly one "done". */
export type StreamEvent =
  | { type: "text"; text: string }
  /**
   * With `state`, the state that ends this piece of reasoning (its `text` is then empty). `raw`:
   * the text is the model's own reasoning, not a summary of it (README, "Agents and reasoning").
   */
  | { type: "reasoning"; text: string; raw?: true; state?: ReasoningState }
  /** With `state`, the state of the call at `index` (its `arguments` are then empty). */
  | { type: "tool_call"; index: number; id?: string; name?: string; arguments: string; state?: ReasoningState }
  /**
   * A stream that broke restarts on `to` (`afterStart`): discard everything shown so far; the new
   * answer follows. Comes only right before the new answer's first content.
   */
  | { type: "reset"; from: string; to: string; cause: Cause; discardedChars: number }
  /** What the provider's content filter said in this frame (Azure OpenAI: the prompt's first, then the answer's). */
  | ({ type: "content_filter" } & ContentFilterResults)
  | ({ type: "done" } & Completion);

/**
 * Every failure of llm-baton. `kind` says what happened; the other fields are set when they
 * apply. kind "internal" is a bug in llm-baton (the wasm trapped; the original error is `cause`):
 * every call in progress ends with it, and the next call works on a fresh instance.
 */
export declare class BatonError extends Error {
  name: "BatonError";
  kind: ErrorKind;
  /** kind "timeout": which limit fired. */
  timeout?: TimeoutKind;
  /** kind "timeout": the limit's value. */
  limitMs?: number;
  /** kind "http": the provider's status. */
  status?: number;
  /** kind "http": the provider's Retry-After, in milliseconds. */
  retryAfterMs?: number;
  /**
   * kind "http": the provider's own error code, as it sent it: OpenAI's `code` (else `type`),
   * Anthropic's error `type`, Google's `status` ("context_length_exceeded", "overloaded_error",
   * "RESOURCE_EXHAUSTED").
   */
  code?: string;
  /** kind "http": the failure class read from the provider's error, when it has one. */
  class?: FailureClass;
  /** kind "http", class "content_filter": what the content filter found (Azure OpenAI's `innererror.content_filter_result`). */
  contentFilter?: ContentFilterResults;
  /** kind "config": the offending field, e.g. "targets.p.timeouts.totalMs" or "options.deadlineMs". */
  path?: string;
  /** The target of the last attempt. */
  target?: string;
  /** Every attempt the call made. */
  legs?: Leg[];
  /** Every leg's reported usage added up: what the failed call was billed. */
  billedUsage?: Usage;
}

export declare class Baton {
  /** Validates `config`; a mistake throws BatonError kind "config" with the field's `path`. */
  constructor(config: Config, options?: BatonOptions);
  /** Every target's circuit breaker and the retry budget, now. */
  health(): HealthSnapshot;
  /** One whole answer from `route` (a route or target name). Rejects with BatonError. */
  complete(route: string, request: ChatRequest, options?: CallOptions): Promise<Completion>;
  /**
   * The answer as it arrives. Breaking out of `for await` aborts the call upstream; a failure
   * is thrown from the loop as BatonError.
   */
  stream(route: string, request: ChatRequest, options?: StreamOptions): AsyncIterableIterator<StreamEvent>;
  /** Every name `complete` and `stream` accept. */
  routes(): string[];
  /**
   * A standard fetch for an official SDK's `fetch` option (`new OpenAI({ apiKey: "-", fetch:
   * baton.fetch, maxRetries: 0 })`): serves `POST …/chat/completions`, `POST …/messages`,
   * `POST …/responses` and `GET …/models` (matched on the path's end, any host) in process, through
   * the gateway's logic, which shares this Baton's breakers and retry budget. Error replies say
   * `x-should-retry: false`. Rejects only when the request's signal aborts (or, as fetch does,
   * when `input` is not a valid request). Works unbound. The first call loads the gateway's wasm
   * (unless `llm-baton/gateway` is imported).
   */
  readonly fetch: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;
}

export interface BroadcastHealthStoreOptions {
  /**
   * The breakers' policy: the same object as the Baton config's `health` (omitted: the
   * defaults). A probe's lease, during which no other tab probes that target, is its `cooldownMs`.
   */
  health?: HealthConfig | false;
}

/** A HealthStore shared through a BroadcastChannel. */
export interface BroadcastHealthStore extends HealthStore {
  admit(targets: string[]): Promise<HealthView>;
  report(events: LegEvent[]): void;
  /** Stops sending and hearing news; this store's breakers go on alone. */
  close(): void;
}

/**
 * A HealthStore for every tab and worker of this origin that uses the same `name` (default
 * "llm-baton-health"): each keeps a replica of the breakers, fed with every attempt any of them
 * reports through a BroadcastChannel, and a half-open target's probe is exclusive across them
 * (the Web Lock `${name}:${target}`, held for the probe's lease). Fails open: without
 * BroadcastChannel it is this context's alone; without Web Locks, probes are exclusive as far
 * as the channel's announcements reach. Throws BatonError kind "config" naming a bad argument.
 */
export declare function broadcastHealthStore(name?: string, options?: BroadcastHealthStoreOptions): BroadcastHealthStore;
