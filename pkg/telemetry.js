// OpenTelemetry traces (and metrics) of calls, for a caller who passes `telemetry: { tracer,
// meter?, recordContent? }` to `new Baton` or `createGateway`. Without that option nothing here
// runs, or even loads: core.js checks the option and imports this file at the first traced call.
//
// llm-baton does not import @opentelemetry/api: a user without OpenTelemetry installs nothing, and
// a user with it may hold any 1.x copy. What this file needs of the API is a protocol every copy
// shares: a Context is an immutable object with getValue/setValue/deleteValue, the span a context
// carries sits under Symbol.for("OpenTelemetry Context Key SPAN"), and a remote parent is a
// non-recording span whose spanContext() gives its ids. The caller's Tracer and Meter do the rest.
//
// One call is one span (`chat {route}`, the GenAI conventions' inference span, covering every
// attempt), with one child span per attempt (`chat {model}`: the request that really went out,
// failed ones included) whose ids travel upstream as `traceparent`. Span events tell what the
// engine decided between attempts. Every span ends exactly once, however the call ends; nothing
// a span holds is a secret, and message content only with `recordContent: true`. A tracer that
// throws never breaks a call: its first error is reported with console.error, and the call goes on.

const SPAN_KEY = Symbol.for("OpenTelemetry Context Key SPAN");
const SPAN_KIND_SERVER = 1;
const SPAN_KIND_CLIENT = 2;
const STATUS_ERROR = 2;
/** `gen_ai.provider.name` of each format: the API the target speaks. */
const PROVIDERS = { openai_chat: "openai", openai_responses: "openai", anthropic_messages: "anthropic", gemini: "gcp.gemini", bedrock_converse: "aws.bedrock" };
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * What a span says about each target: its provider, host, port and model, read once from the
 * config (already validated by the wasm). A target that cannot be read is described by its name.
 */
function describeTargets(config) {
  const targets = new Map();
  try {
    for (const [name, target] of Object.entries(config.targets)) {
      let address;
      let port;
      try {
        const url = new URL(target.baseUrl);
        address = url.hostname;
        port = url.port ? Number(url.port) : url.protocol === "http:" ? 80 : 443;
      } catch {
        // No server attributes for a URL this runtime cannot parse.
      }
      targets.set(name, { provider: PROVIDERS[target.format] ?? String(target.format), address, port, model: String(target.model) });
    }
  } catch {
    // A config that reads differently the second time: spans name targets only.
  }
  return targets;
}

/** The tracer, meter and target descriptions of one Baton or gateway. */
export class Telemetry {
  #settings;
  #targets;
  #instruments = null;
  #reported = false;

  constructor(settings, config) {
    this.#settings = settings;
    this.#targets = describeTargets(config);
    if (settings.meter) this.#instruments = this.#guard(() => instruments(settings.meter), null);
  }

  get recordContent() {
    return this.#settings.recordContent;
  }

  get tracer() {
    return this.#settings.tracer;
  }

  get instruments() {
    return this.#instruments;
  }

  target(name) {
    return this.#targets.get(name);
  }

  /**
   * A new call's trace. `route`: the name the caller asked for; `parent`: a Context to start the
   * call span in (undefined: the tracer's active context); `server`: the gateway serves a client
   * (span kind SERVER, the client's traceparent as parent).
   */
  call({ route, stream, parent, server = false, request }) {
    return new CallTrace(this, { route, stream, parent, server, request });
  }

  /**
   * The trace of one gateway request: a span named for the client's `model` (SERVER at the
   * deployed gateway; CLIENT for baton.fetch, whose caller is in this process), continuing the
   * client's trace when it sent a valid `traceparent`, else under the tracer's active context.
   * `read` is the body as gateway.js read it, parsed again here only for its name (the wasm
   * parses it for real, and refuses what it cannot read).
   */
  gatewayCall(read, request, server) {
    let model;
    let stream = false;
    try {
      const body = JSON.parse(new TextDecoder().decode(read.bytes));
      if (typeof body?.model === "string") model = body.model;
      stream = body?.stream === true;
    } catch {
      // The wasm answers a 400 for it; the span says the request was refused.
    }
    const parent = remoteParent(request.headers.get("traceparent") ?? undefined, request.headers.get("tracestate") ?? undefined);
    return this.call({ route: model ?? "unknown", stream, parent, server });
  }

  /** Runs `f`; a throw from the user's tracer or meter is reported once and gives `fallback`. */
  #guard(f, fallback) {
    try {
      return f();
    } catch (e) {
      this.report(e);
      return fallback;
    }
  }

  report(e) {
    if (this.#reported) return;
    this.#reported = true;
    console.error("llm-baton: the telemetry tracer or meter threw; calls go on, their spans may be incomplete:", e);
  }
}

/** The histograms of the GenAI client conventions, plus attempts per call and per attempt. */
function instruments(meter) {
  const histogram = (name, unit, description) => meter.createHistogram(name, { unit, description });
  return {
    duration: histogram("gen_ai.client.operation.duration", "s", "GenAI operation duration, every attempt included"),
    tokens: histogram("gen_ai.client.token.usage", "{token}", "Tokens of the answer, by gen_ai.token.type"),
    firstChunk: histogram("gen_ai.client.operation.time_to_first_chunk", "s", "Time from the call's start to its first visible chunk"),
    attempts: histogram("baton.client.attempts", "{attempt}", "Attempts one call made"),
    attemptDuration: histogram("baton.client.attempt.duration", "s", "Duration of one attempt, by baton.target and baton.outcome"),
  };
}

/** An immutable OpenTelemetry Context of our own, for a caller who passed none. */
class TraceContext {
  #values;

  constructor(values = new Map()) {
    this.#values = values;
  }

  getValue(key) {
    return this.#values.get(key);
  }

  setValue(key, value) {
    const values = new Map(this.#values);
    values.set(key, value);
    return new TraceContext(values);
  }

  deleteValue(key) {
    const values = new Map(this.#values);
    values.delete(key);
    return new TraceContext(values);
  }
}

/** A W3C tracestate, as the API's TraceState interface reads it (immutable). */
class TraceState {
  #members;

  constructor(members) {
    this.#members = members;
  }

  /** The members of a `tracestate` header, or null for one that breaks the W3C grammar. */
  static parse(header) {
    const members = [];
    for (const part of header.split(",")) {
      const member = part.trim();
      if (member === "") continue;
      const eq = member.indexOf("=");
      const key = member.slice(0, eq);
      const value = member.slice(eq + 1);
      if (eq <= 0 || !/^[a-z0-9][a-z0-9_\-*/@]{0,255}$/.test(key) || !/^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/.test(value)) {
        return null;
      }
      if (!members.some(([k]) => k === key)) members.push([key, value]);
    }
    return members.length > 32 ? null : new TraceState(members);
  }

  get(key) {
    return this.#members.find(([k]) => k === key)?.[1];
  }

  set(key, value) {
    return new TraceState([[key, value], ...this.#members.filter(([k]) => k !== key)]);
  }

  unset(key) {
    return new TraceState(this.#members.filter(([k]) => k !== key));
  }

  serialize() {
    return this.#members.map(([k, v]) => `${k}=${v}`).join(",");
  }
}

/**
 * The parent a gateway's client sent (`traceparent`, `tracestate`), as a Context holding a
 * non-recording remote span; undefined when there is none or it breaks the W3C grammar (then the
 * call starts a trace of its own, as the spec says).
 */
export function remoteParent(traceparent, tracestate) {
  const m = typeof traceparent === "string" ? TRACEPARENT.exec(traceparent.trim()) : null;
  if (!m) return undefined;
  const [, version, traceId, spanId, flags, rest] = m;
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  const traceState = typeof tracestate === "string" && tracestate.length <= 512 ? (TraceState.parse(tracestate) ?? undefined) : undefined;
  const spanContext = { traceId, spanId, traceFlags: parseInt(flags, 16) & 1, isRemote: true, traceState };
  return new TraceContext().setValue(SPAN_KEY, new RemoteSpan(spanContext));
}

/** A span someone else recorded: only its ids are here (the API's NonRecordingSpan, by protocol). */
class RemoteSpan {
  #spanContext;

  constructor(spanContext) {
    this.#spanContext = spanContext;
  }

  spanContext() {
    return this.#spanContext;
  }

  setAttribute() {
    return this;
  }

  setAttributes() {
    return this;
  }

  addEvent() {
    return this;
  }

  addLink() {
    return this;
  }

  addLinks() {
    return this;
  }

  setStatus() {
    return this;
  }

  updateName() {
    return this;
  }

  end() {}

  isRecording() {
    return false;
  }

  recordException() {}
}

/** The `traceparent` (and `tracestate`) that carry `span`'s ids, or undefined for an invalid one. */
function propagation(span) {
  const context = span.spanContext();
  const { traceId, spanId, traceFlags } = context ?? {};
  if (!/^[0-9a-f]{32}$/.test(traceId) || /^0+$/.test(traceId) || !/^[0-9a-f]{16}$/.test(spanId) || /^0+$/.test(spanId)) {
    return undefined;
  }
  const flags = ((Number(traceFlags) & 0xff) >>> 0).toString(16).padStart(2, "0");
  const headers = { traceparent: `00-${traceId}-${spanId}-${flags}` };
  const tracestate = context.traceState?.serialize?.();
  if (typeof tracestate === "string" && tracestate !== "") headers.tracestate = tracestate;
  return headers;
}

/** `error.type` of a failure: its class when the provider said one, the status of another HTTP error, else its kind. */
function errorType(cause) {
  if (cause.class) return cause.class;
  if (cause.kind === "http" && cause.status !== undefined) return String(cause.status);
  return cause.kind;
}

/** Usage as attributes under `prefix` (`gen_ai.usage`, `baton.billed_usage`), counts only when known. */
function usageAttributes(prefix, usage) {
  const attributes = {};
  if (usage?.inputTokens !== undefined) attributes[`${prefix}.input_tokens`] = usage.inputTokens;
  if (usage?.outputTokens !== undefined) attributes[`${prefix}.output_tokens`] = usage.outputTokens;
  return attributes;
}

/**
 * A request's messages in the conventions' `gen_ai.input.messages` shape, as JSON. `content` is
 * a string or a list of parts (text, image, file); an image or file is recorded by its URL or
 * media type, never its bytes.
 */
function inputMessages(request) {
  const messages = Array.isArray(request?.messages) ? request.messages : [];
  return JSON.stringify(
    messages.map((m) => {
      const parts = [];
      const content = typeof m.content === "string" ? [{ type: "text", text: m.content }] : Array.isArray(m.content) ? m.content : [];
      if (m.role === "tool") {
        const response = content.map((p) => (p?.type === "text" ? p.text : "")).join("");
        parts.push({ type: "tool_call_response", id: m.toolCallId, response });
      } else {
        for (const part of content) {
          const recorded = inputPart(part);
          if (recorded) parts.push(recorded);
        }
      }
      for (const call of m.toolCalls ?? []) parts.push({ type: "tool_call", id: call.id, name: call.name, arguments: parseArguments(call.arguments) });
      return { role: m.role, parts };
    }),
  );
}

function inputPart(part) {
  if (part?.type === "text") return part.text ? { type: "text", content: part.text } : null;
  if (part?.type !== "image" && part?.type !== "file") return null;
  const modality = part.type;
  const mimeType = part.mediaType ?? undefined;
  return typeof part.url === "string" && !part.url.startsWith("data:") ? { type: "uri", modality, mime_type: mimeType, uri: part.url } : { type: "blob", modality, mime_type: mimeType };
}

/** What the call span says of the request: its parameters, and its messages only with `recordContent`. */
function requestAttributes(request, recordContent) {
  const attributes = {};
  for (const [key, name] of [["maxTokens", "max_tokens"], ["temperature", "temperature"], ["topP", "top_p"], ["seed", "seed"]]) {
    if (typeof request[key] === "number") attributes[`gen_ai.request.${name}`] = request[key];
  }
  if (!recordContent) return attributes;
  const stop = typeof request.stop === "string" ? [request.stop] : Array.isArray(request.stop) ? request.stop.map(String) : [];
  if (stop.length > 0) attributes["gen_ai.request.stop_sequences"] = stop;
  attributes["gen_ai.input.messages"] = inputMessages(request);
  return attributes;
}

/** An answer in the conventions' `gen_ai.output.messages` shape, as JSON. */
function outputMessages(answer) {
  const parts = [];
  if (answer.reasoning) parts.push({ type: "reasoning", content: answer.reasoning });
  if (answer.text) parts.push({ type: "text", content: answer.text });
  for (const call of answer.toolCalls ?? []) parts.push({ type: "tool_call", id: call.id, name: call.name, arguments: parseArguments(call.arguments) });
  return JSON.stringify([{ role: "assistant", parts, finish_reason: answer.finishReason }]);
}

function parseArguments(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * One call's spans. core.js and gateway.js feed it what the call's task outputs (`event`,
 * `done`, `failed`) and how it ended otherwise (`trapped`, `abandon`); the wasm asks it for each
 * attempt's `traceparent` through `attemptHeaders` as the attempt is sent.
 */
class CallTrace {
  #telemetry;
  #route;
  #span;
  #started = performance.now();
  /** attempt number -> { span, target, started } while the attempt's span is open. */
  #attempts = new Map();
  /** The attempt whose leg ended last (its span ends after this poll's events): a `retry` event that follows adds the backoff to it. */
  #lastLeg = null;
  /** Spans whose leg ended, closed once the rest of the same poll's events were read. */
  #closing = [];
  #ended = false;
  #abandoned = false;
  #base;

  constructor(telemetry, { route, stream, parent, server, request }) {
    this.#telemetry = telemetry;
    this.#route = route;
    const attributes = { "gen_ai.operation.name": "chat", "gen_ai.request.model": route, "gen_ai.request.stream": stream };
    const target = telemetry.target(route);
    if (target) attributes["gen_ai.provider.name"] = target.provider;
    // The caller's request object: a getter that throws costs its attributes, never the call.
    if (request) this.#safe(() => Object.assign(attributes, requestAttributes(request, telemetry.recordContent)));
    const kind = server ? SPAN_KIND_SERVER : SPAN_KIND_CLIENT;
    this.#span = this.#safe(() => telemetry.tracer.startSpan(`chat ${route}`, { kind, attributes }, parent)) ?? new RemoteSpan({});
    this.#base = (parent ?? new TraceContext()).setValue(SPAN_KEY, this.#span);
  }

  /** The request's input, known later at the gateway (the wasm parsed it); only with recordContent. */
  request(request) {
    if (!this.#telemetry.recordContent || this.#ended) return;
    this.#safe(() => this.#span.setAttribute("gen_ai.input.messages", inputMessages(request)));
  }

  /**
   * Attempt `attempt` on `target` is being sent: starts its span and returns the headers that
   * carry its ids upstream (`{traceparent, tracestate?}`), or undefined.
   */
  attemptHeaders(target, attempt) {
    if (this.#ended) return undefined;
    const span = this.#startAttempt(target, attempt);
    return span ? this.#safe(() => propagation(span)) : undefined;
  }

  #startAttempt(target, attempt) {
    const described = this.#telemetry.target(target);
    const attributes = { "gen_ai.operation.name": "chat", "baton.target": target, "baton.attempt": attempt };
    if (described) {
      attributes["gen_ai.request.model"] = described.model;
      attributes["gen_ai.provider.name"] = described.provider;
      if (described.address !== undefined) {
        attributes["server.address"] = described.address;
        attributes["server.port"] = described.port;
      }
    }
    const name = `chat ${described?.model ?? target}`;
    const span = this.#safe(() => this.#telemetry.tracer.startSpan(name, { kind: SPAN_KIND_CLIENT, attributes }, this.#base));
    if (!span) return undefined;
    this.#attempts.set(attempt, { span, target, started: performance.now() });
    return span;
  }

  /** A `{type: "event"}` output's event. */
  event(event) {
    if (this.#ended) return;
    this.#safe(() => {
      switch (event.type) {
        // "attempt": its span began in attemptHeaders, as the attempt was sent.
        case "leg":
          this.#endLeg(event.leg, event.cause);
          break;
        case "retry": {
          const open = this.#lastLeg;
          if (open && open.target === event.target) {
            open.span.setAttributes({ "baton.retry.delay_ms": event.delayMs, "baton.retry.attempt": event.attempt, "baton.retry.of": event.of });
          }
          this.#spanEvent("baton.retry", {
            "baton.target": event.target,
            "baton.retry.attempt": event.attempt,
            "baton.retry.of": event.of,
            "baton.retry.delay_ms": event.delayMs,
            ...causeAttributes(event.cause),
          });
          break;
        }
        case "failover":
          this.#spanEvent("baton.failover", { "baton.from": event.from, "baton.to": event.to, ...causeAttributes(event.cause) });
          break;
        // Both attempts' spans stay open side by side; the loser's ends with outcome "lost".
        case "hedge":
          this.#spanEvent("baton.hedge", {
            "baton.from": event.from,
            "baton.to": event.to,
            "baton.attempt": event.attempt,
            "baton.hedge.after_ms": event.afterMs,
            "baton.hedge.threshold": event.threshold,
          });
          break;
        case "skip":
          this.#spanEvent("baton.skip", {
            "baton.target": event.target,
            "baton.reason": event.reason,
            ...(event.reopensInMs !== undefined ? { "baton.reopens_in_ms": event.reopensInMs } : {}),
            ...(event.cause ? causeAttributes(event.cause) : {}),
          });
          break;
        case "resume":
          this.#spanEvent("baton.resume", {
            "baton.resume.mode": event.mode,
            "baton.from": event.from,
            "baton.to": event.to,
            "baton.attempt": event.attempt,
            "baton.resume.kept_chars": event.keptChars,
            ...causeAttributes(event.cause),
          });
          break;
        case "warning":
          this.#spanEvent("baton.warning", { "baton.target": event.target, "baton.attempt": event.attempt, "baton.message": event.message });
          break;
        default:
          break;
      }
    });
  }

  /** A restarted stream's `reset` item reached the reader. */
  reset(item) {
    if (this.#ended) return;
    this.#safe(() =>
      this.#spanEvent("baton.reset", { "baton.from": item.from, "baton.to": item.to, "baton.reset.discarded_chars": item.discardedChars, ...causeAttributes(item.cause) }),
    );
  }

  #spanEvent(name, attributes) {
    this.#span.addEvent(name, attributes);
  }

  #endLeg(leg, cause) {
    const open = this.#attempts.get(leg.attempt);
    if (!open) return; // the tracer threw as the attempt was sent
    const attributes = { "baton.outcome": leg.outcome, ...usageAttributes("gen_ai.usage", leg.usage) };
    if (leg.status !== undefined) attributes["http.response.status_code"] = leg.status;
    if (leg.timeout !== undefined) attributes["baton.timeout"] = leg.timeout;
    if (cause?.limitMs !== undefined) attributes["baton.timeout.limit_ms"] = cause.limitMs;
    if (leg.retryAfterMs !== undefined) attributes["baton.retry_after_ms"] = leg.retryAfterMs;
    if (leg.ttftMs !== undefined) attributes["gen_ai.response.time_to_first_chunk"] = leg.ttftMs / 1000;
    if (leg.skippedFrames !== undefined) attributes["baton.skipped_frames"] = leg.skippedFrames;
    if (leg.resumedFrom) {
      attributes["baton.resumed_from.attempt"] = leg.resumedFrom.attempt;
      attributes["baton.resumed_from.mode"] = leg.resumedFrom.mode;
      attributes["baton.resumed_from.kept_chars"] = leg.resumedFrom.keptChars;
    }
    if (cause) {
      attributes["error.type"] = errorType(cause);
      if (cause.code !== undefined) attributes["baton.error.code"] = cause.code;
    }
    open.span.setAttributes(attributes);
    if (cause) open.span.setStatus({ code: STATUS_ERROR, message: cause.message });
    this.#lastLeg = open;
    this.#close(leg.attempt, performance.now(), leg.outcome);
  }

  /**
   * Ends an attempt's span at `at`, once the events of the same poll were read (a `retry` that
   * follows its leg adds the backoff to it): a microtask runs after the host handed them all.
   */
  #close(attempt, at, outcome) {
    const open = this.#attempts.get(attempt);
    if (!open) return;
    this.#attempts.delete(attempt);
    this.#closing.push({ open, at });
    const instruments = this.#telemetry.instruments;
    if (instruments) this.#safe(() => instruments.attemptDuration.record((at - open.started) / 1000, { "baton.target": open.target, "baton.outcome": outcome }));
    if (this.#closing.length === 1) queueMicrotask(() => this.#flush());
  }

  #flush() {
    const closing = this.#closing;
    this.#closing = [];
    for (const { open, at } of closing) this.#safe(() => open.span.end(at));
  }

  /** The reader left the stream: the cancellation that follows is that. */
  abandon() {
    this.#abandoned = true;
  }

  /** The call answered: `summary` is the Completion. */
  done(summary) {
    if (this.#ended) return;
    this.#safe(() => {
      const target = this.#telemetry.target(summary.target);
      const attributes = {
        "gen_ai.response.model": summary.model,
        "gen_ai.response.finish_reasons": [String(summary.finishReason)],
        ...usageAttributes("gen_ai.usage", summary.usage),
        ...usageAttributes("baton.billed_usage", summary.billedUsage),
        "baton.target": summary.target,
        "baton.attempts": summary.legs.length,
        "baton.contributors": summary.contributors,
      };
      if (target) attributes["gen_ai.provider.name"] = target.provider;
      if (target?.address !== undefined) {
        attributes["server.address"] = target.address;
        attributes["server.port"] = target.port;
      }
      const firstChunk = firstChunkSeconds(summary.legs);
      if (firstChunk !== undefined) attributes["gen_ai.response.time_to_first_chunk"] = firstChunk;
      if (this.#telemetry.recordContent && summary.text !== undefined) attributes["gen_ai.output.messages"] = outputMessages(summary);
      this.#span.setAttributes(attributes);
      this.#measure({ target: summary.target, model: summary.model, usage: summary.usage, legs: summary.legs, firstChunk });
    });
    this.#end();
  }

  /** The call failed: `error` is the BatonError (or its driver object). */
  failed(error) {
    if (this.#ended) return;
    this.#safe(() => {
      const type = this.#abandoned ? "abandoned" : errorType(error);
      const target = error.target !== undefined ? this.#telemetry.target(error.target) : undefined;
      const legs = Array.isArray(error.legs) ? error.legs : [];
      const attributes = { "error.type": type, "baton.attempts": legs.length, ...usageAttributes("baton.billed_usage", error.billedUsage) };
      if (error.target !== undefined) attributes["baton.target"] = error.target;
      if (target) attributes["gen_ai.provider.name"] = target.provider;
      if (error.timeout !== undefined) attributes["baton.timeout"] = error.timeout;
      if (error.status !== undefined) attributes["http.response.status_code"] = error.status;
      this.#span.setAttributes(attributes);
      const message = this.#abandoned ? "the reader left the stream before it ended" : String(error.message);
      this.#span.setStatus({ code: STATUS_ERROR, message });
      this.#measure({ target: error.target, error: type, legs });
    });
    this.#end();
  }

  /** The wasm trapped: the call ends as BatonError kind "internal", with no more events. */
  trapped(error) {
    this.failed(error);
  }

  #measure({ target, model, usage, legs, firstChunk, error }) {
    const instruments = this.#telemetry.instruments;
    if (!instruments) return;
    const described = target !== undefined ? this.#telemetry.target(target) : undefined;
    const attributes = { "gen_ai.operation.name": "chat", "gen_ai.request.model": this.#route };
    if (described) attributes["gen_ai.provider.name"] = described.provider;
    if (model !== undefined) attributes["gen_ai.response.model"] = model;
    if (target !== undefined) attributes["baton.target"] = target;
    if (error !== undefined) attributes["error.type"] = error;
    instruments.duration.record((performance.now() - this.#started) / 1000, attributes);
    instruments.attempts.record(legs.length, { ...attributes, "baton.outcome": error ?? "ok" });
    if (firstChunk !== undefined) instruments.firstChunk.record(firstChunk, attributes);
    if (usage?.inputTokens !== undefined) instruments.tokens.record(usage.inputTokens, { ...attributes, "gen_ai.token.type": "input" });
    if (usage?.outputTokens !== undefined) instruments.tokens.record(usage.outputTokens, { ...attributes, "gen_ai.token.type": "output" });
  }

  /** Ends every span still open (attempts first, then the call), exactly once. */
  #end() {
    if (this.#ended) return;
    this.#ended = true;
    const now = performance.now();
    for (const [attempt, open] of this.#attempts) {
      // No leg came for it (a trap, or a start refused before it was sent).
      this.#safe(() => open.span.setStatus({ code: STATUS_ERROR, message: "the call ended before this attempt reported its end" }));
      this.#close(attempt, now, "unfinished");
    }
    const span = this.#span;
    const ending = this.#closing.length > 0;
    // The call span ends after its attempts, which may wait for the microtask above.
    if (ending) queueMicrotask(() => this.#safe(() => span.end(now)));
    else this.#safe(() => span.end(now));
  }

  #safe(f) {
    try {
      return f();
    } catch (e) {
      this.#telemetry.report(e);
      return undefined;
    }
  }
}

/** A failure's attributes on a span event: what failed and why, in low-cardinality words. */
function causeAttributes(cause) {
  const attributes = { "error.type": errorType(cause), "baton.cause.kind": cause.kind, "baton.cause.message": cause.message };
  if (cause.status !== undefined) attributes["http.response.status_code"] = cause.status;
  if (cause.timeout !== undefined) attributes["baton.timeout"] = cause.timeout;
  if (cause.retryAfterMs !== undefined) attributes["baton.retry_after_ms"] = cause.retryAfterMs;
  return attributes;
}

/** Seconds from the call's start to the first content its reader saw, from the legs. */
function firstChunkSeconds(legs) {
  const first = legs.find((leg) => leg.ttftMs !== undefined);
  return first ? (first.startMs + first.ttftMs) / 1000 : undefined;
}
