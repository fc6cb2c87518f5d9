// Compile-only check of pkg/index.d.ts (`deno check`, TypeScript strict): the declarations
// parse, and typical code that uses the API type-checks. Never run.
import { Baton, BatonError, broadcastHealthStore, HealthState } from "../../pkg/index.d.ts";
import { createGateway } from "../../pkg/gateway.d.ts";
import type { AfterStart, CallEvent, ChatRequest, Completion, Config, Part, StreamEvent } from "../../pkg/index.d.ts";
import type { Gateway } from "../../pkg/gateway.d.ts";
import "./types_check_durable.ts";
import "./types_check_ai_sdk.ts";
import "./types_check_node_server.ts";
import "./types_check_redis.ts";

const config: Config = {
  targets: {
    primary: { format: "openai_chat", baseUrl: "http://127.0.0.1:1/v1", model: "m", apiKey: "k", timeouts: { headersMs: 1000, firstTokenMs: 2000, idleMs: 500 } },
    backup: { format: "gemini", baseUrl: "http://127.0.0.1:1/v1beta", model: "g", headers: { "x-extra": "1" }, strictFrames: true, prefill: true, extraBody: { safetySettings: [] } },
    bedrock: { format: "bedrock_converse", region: "us-east-1", model: "anthropic.claude-3-5-haiku-20241022-v1:0", aws: { accessKeyId: "AKIA", secretAccessKey: "s", sessionToken: "t" } },
    bedrockByKey: { format: "bedrock_converse", region: "us-west-2", baseUrl: "http://127.0.0.1:1", model: "m", apiKey: "k", cloud: "bedrock" },
    azure: { format: "openai_chat", cloud: "azure", baseUrl: "https://res.openai.azure.com", model: "gpt-4o", apiKey: "k" },
    azureDated: { format: "openai_responses", cloud: "azure", baseUrl: "https://res.openai.azure.com", model: "gpt-4o", entraToken: "t", apiVersion: "2025-04-01-preview" },
    azureDeployment: { format: "openai_chat", cloud: "azure", baseUrl: "https://res.openai.azure.com", model: "gpt-4o", apiKey: "k", apiVersion: "2024-10-21", deployment: "chat" },
    claudeOnBedrock: { format: "anthropic_messages", cloud: "bedrock", region: "us-east-1", model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", aws: { accessKeyId: "AKIA", secretAccessKey: "s" } },
    claudeOnBedrockByKey: { format: "anthropic_messages", cloud: "bedrock", region: "us-east-1", baseUrl: "http://127.0.0.1:1", model: "m", apiKey: "k" },
    vertexClaude: { format: "anthropic_messages", cloud: "vertex", project: "p", region: "us-east5", model: "claude-sonnet-4-5@20250929", accessToken: "ya29.t" },
    vertexGemini: {
      format: "gemini", cloud: "vertex", project: "p", region: "global", model: "gemini-2.5-flash",
      serviceAccount: { type: "service_account", client_email: "a@p.iam.gserviceaccount.com", private_key: "-----BEGIN PRIVATE KEY-----\n…", token_uri: "https://oauth2.googleapis.com/token" },
    },
    vertexByText: { format: "gemini", cloud: "vertex", project: "p", region: "us-central1", baseUrl: "http://127.0.0.1:1/v1", model: "g", serviceAccount: "{\"client_email\": \"…\"}" },
  },
  routes: {
    main: { fallback: [{ retry: "primary", attempts: 3, backoff: { initialMs: 250, jitter: "none" }, retryOn: ["transport", "timeout", 429, "5xx", "overloaded"] }, "backup"], fallbackOn: ["timeout", "context_length", "quota", "content_filter"] },
    spread: { roundRobin: ["primary", "backup"], weights: [3, 1] },
    resumed: { fallback: ["primary", "backup"], afterStart: { mode: "continue", attempts: 2, minRemainingMs: 1500 } },
    restarted: { fallback: ["primary", "backup"], afterStart: { mode: "restart" } },
  },
  deadlineMs: 30_000,
  gateway: { apiKeys: ["gw"], cors: ["http://localhost:3000"], maxBodyBytes: 1 << 20 },
};

// @ts-expect-error: Anthropic on Bedrock names its region
export const claudeNoRegion: Config = { targets: { c: { format: "anthropic_messages", cloud: "bedrock", model: "m" } } };
// @ts-expect-error: only Anthropic Messages (and Converse) run on Bedrock
export const chatOnBedrock: Config = { targets: { c: { format: "openai_chat", cloud: "bedrock", region: "us-east-1", model: "m" } } };
// @ts-expect-error: a Bedrock target names its region
export const noRegion: Config = { targets: { b: { format: "bedrock_converse", model: "m" } } };
// @ts-expect-error: an Azure target authenticates with a key or an Entra ID token, not both
export const twoCredentials: Config = { targets: { a: { format: "openai_chat", cloud: "azure", baseUrl: "https://r.openai.azure.com", model: "m", apiKey: "k", entraToken: "t" } } };
// @ts-expect-error: Azure serves the OpenAI formats only
export const azureGemini: Config = { targets: { a: { format: "gemini", cloud: "azure", baseUrl: "https://r.openai.azure.com", model: "m", apiKey: "k" } } };
// @ts-expect-error: a Vertex target names its project
export const noProject: Config = { targets: { v: { format: "gemini", cloud: "vertex", region: "global", model: "g", accessToken: "t" } } };
// @ts-expect-error: Vertex serves Gemini and Claude only
export const vertexChat: Config = { targets: { v: { format: "openai_chat", cloud: "vertex", project: "p", region: "global", model: "g", accessToken: "t" } } };
// @ts-expect-error: other formats need their baseUrl
export const noBaseUrl: Config = { targets: { o: { format: "openai_chat", model: "m" } } };

// @ts-expect-error: a stream resumes by continuing or restarting, nothing else
export const replay: AfterStart = { mode: "replay" };

/** A request with every part kind and the sampling, tool and output parameters. */
export const described: ChatRequest = {
  messages: [
    { role: "system", content: [{ type: "text", text: "Be brief." }] },
    {
      role: "user",
      content: [
        { type: "text", text: "Describe these." },
        { type: "image", url: "https://example.com/cat.png" },
        { type: "image", data: "iVBORw0K", mediaType: "image/png" },
        { type: "file", data: "JVBERi0x", mediaType: "application/pdf", filename: "a.pdf" },
        { type: "file", url: "https://example.com/b.pdf", mediaType: "application/pdf" },
      ],
    },
  ],
  topP: 0.9,
  seed: 7,
  stop: "END",
  tools: [{ name: "lookup" }],
  toolChoice: { name: "lookup" },
  parallelToolCalls: false,
  responseFormat: { type: "json", schema: { type: "object" }, name: "answer", strict: true },
};
export const freeText: ChatRequest = { messages: [{ role: "user", content: "hi" }], toolChoice: "auto", responseFormat: { type: "text" } };

// @ts-expect-error: image data needs its mediaType
export const untypedImage: Part = { type: "image", data: "iVBORw0K" };
// @ts-expect-error: "any" is Anthropic's word; the request says "required"
export const anthropicWord: ChatRequest = { messages: [], toolChoice: "any" };

export async function use(): Promise<string> {
  const baton = new Baton(config);
  const names: string[] = baton.routes();
  const ctrl = new AbortController();
  const onEvent = (ev: CallEvent) => {
    if (ev.type === "retry") console.log(ev.delayMs, ev.cause.kind, ev.cause.status, ev.cause.code, ev.cause.class);
    if (ev.type === "leg") console.log(ev.leg.outcome, ev.leg.timeout, ev.leg.skippedFrames);
    if (ev.type === "warning") console.log(ev.target, ev.attempt, ev.message);
    if (ev.type === "resume") console.log(ev.mode, ev.from, ev.to, ev.attempt, ev.cause.kind, ev.keptChars);
  };
  try {
    const out: Completion = await baton.complete(names[0], { messages: [{ role: "user", content: "hi" }], maxTokens: 5 }, { deadlineMs: 5000, signal: ctrl.signal, onEvent });
    let text = out.text + JSON.stringify(out.contentFilter?.contentFilterResults) + out.legs.map((l) => l.outcome).join() + out.contributors.join() + (out.billedUsage.inputTokens ?? 0);
    for (const leg of out.legs) text += `${leg.usage?.outputTokens ?? 0} ${leg.resumedFrom?.attempt} ${leg.resumedFrom?.mode} ${leg.resumedFrom?.keptChars}`;
    for await (const ev of baton.stream("main", { messages: [{ role: "system", content: "s" }, { role: "user", content: "u" }] }, { resettable: false })) {
      const e: StreamEvent = ev;
      if (e.type === "text") text += e.text;
      else if (e.type === "tool_call") text += e.arguments;
      else if (e.type === "reset") text = `${e.from} ${e.to} ${e.cause.kind} ${e.discardedChars}`;
      else if (e.type === "content_filter") text += JSON.stringify(e.promptFilterResults?.[0]?.content_filter_results ?? e.contentFilterResults);
      else if (e.type === "done") text += (e.usage.outputTokens ?? 0) + e.finishReason + e.contributors.join() + (e.billedUsage.outputTokens ?? 0);
    }
    // @ts-expect-error: a whole answer shows nothing before it is done; resettable is a stream option
    await baton.complete("main", { messages: [{ role: "user", content: "hi" }] }, { resettable: false });
    return text;
  } catch (e) {
    if (e instanceof BatonError && e.kind === "timeout") return `${e.timeout} ${e.limitMs}`;
    if (e instanceof BatonError && e.kind === "config") return e.path ?? "";
    if (e instanceof BatonError && e.class === "context_length") return e.code ?? "";
    if (e instanceof BatonError && e.class === "content_filter") return JSON.stringify(e.contentFilter?.contentFilterResults);
    if (e instanceof BatonError && e.billedUsage !== undefined) return String(e.billedUsage.inputTokens ?? 0);
    throw e;
  }
}

/** baton.fetch, unbound, as an SDK's fetch option takes it. */
export const inProcess: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response> = new Baton(config).fetch;

/** A Worker's default export and a Deno.serve handler. */
export const gateway: Gateway = createGateway(config);
/** A gateway serving /metrics to its scraper (docs/gateway.md, "Metrics"). */
export const scraped: Gateway = createGateway({ ...config, gateway: { apiKeys: ["client"], metrics: { apiKey: "a-scraper-key-of-its-own" } } });
// @ts-expect-error: the scraper's key is required
export const keylessMetrics = createGateway({ ...config, gateway: { metrics: {} } });
export function serve(request: Request): Promise<Response> {
  return gateway.fetch(request);
}

/** Health: a Baton sharing breakers between tabs, and what it reports. */
const shared = broadcastHealthStore("my-app-health", { health: { cooldownMs: 2000 } });
export const sharedBaton = new Baton(config, { healthStore: shared, healthWaitMs: 50 });
export const breakerStates: string[] = sharedBaton.health().targets.map((t) => `${t.target} ${t.state} ${t.reopensInMs ?? 0}`);
shared.close();
export const replica = new HealthState({ failures: 3, retryBudget: false });
replica.report([{ type: "leg", leg: { target: "p", attempt: 1, startMs: 0, endMs: 1, outcome: "http", status: 503 }, cause: { kind: "http", message: "down", status: 503 } }]);
export const view: number = replica.admit(["p"]).targets.length;
// @ts-expect-error a store needs report()
export const noStore = new Baton(config, { healthStore: { admit: () => ({ targets: [] }) } });

// OpenTelemetry (docs/traces.md): the API's own Tracer, Meter and Context fit.
import { context as otelContext, metrics as otelMetrics, trace as otelTrace } from "@opentelemetry/api";
export const traced = new Baton(config, { telemetry: { tracer: otelTrace.getTracer("app"), meter: otelMetrics.getMeter("app"), recordContent: false } });
export const tracedGateway = createGateway(config, { telemetry: { tracer: otelTrace.getTracer("app") } });
export const tracedCall = traced.complete("main", { messages: [{ role: "user", content: "Hi" }] }, { context: otelContext.active() });
// @ts-expect-error: a tracer is required
export const noTracer = new Baton(config, { telemetry: { recordContent: true } });
