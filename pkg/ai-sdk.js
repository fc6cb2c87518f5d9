// llm-baton/ai-sdk: each route of a Baton as an AI SDK language model (specification v4, the
// one `ai` 7 calls), so streamText, generateText, tools, structured output and useChat get the
// route's deadline, retries and failover.
//
// The AI SDK's prompt and call options are mapped to llm-baton's request, its stream events to
// the AI SDK's stream parts. The reasoning state a provider issues (signatures, redacted thinking,
// encrypted reasoning) rides in `providerMetadata.baton.state` on reasoning and tool-call parts,
// which the AI SDK hands back as the parts' `providerOptions` in the next step's prompt, so an
// agent loop keeps it as `baton.complete` does. llm-baton is the one retry loop: every error is
// one of the AI SDK's own types marked not retryable, and a broken stream may be continued by the
// route but never restarted (the AI SDK cannot take back text it has passed on). This module imports no entry of
// llm-baton, so it works with whichever one the runtime loaded (Node, Deno, workerd, browsers).
import {
  APICallError,
  InvalidArgumentError,
  InvalidPromptError,
  NoSuchModelError,
  UnsupportedFunctionalityError,
} from "@ai-sdk/provider";

const PROVIDER = "llm-baton";
const FINISH_REASONS = { stop: "stop", length: "length", tool_calls: "tool-calls", content_filter: "content-filter" };
/** The keys of a call's `providerOptions.baton`. */
const BATON_OPTIONS = ["deadlineMs", "parallelToolCalls", "reasoning"];
/**
 * The AI SDK's reasoning levels above llm-baton's highest, rounded down to it as the AI SDK's
 * providers round a level a model lacks.
 */
const ROUNDED_EFFORTS = { xhigh: "high", max: "high" };
/** Call options llm-baton's request has no field for; each one set gives an "unsupported" warning. */
const UNSUPPORTED_OPTIONS = ["topK", "presencePenalty", "frequencyPenalty"];

/**
 * `createBatonProvider(baton)("chat")` is the language model of route "chat". `settings.onEvent`
 * receives every call's progress events (retry, failover, ...); `settings.deadlineMs` replaces
 * the config's deadline for calls through this provider (per call: `providerOptions.baton.deadlineMs`).
 */
export function createBatonProvider(baton, settings = {}) {
  if (baton === null || typeof baton !== "object" || typeof baton.stream !== "function" || typeof baton.complete !== "function") {
    throw new InvalidArgumentError({ argument: "baton", message: "createBatonProvider(baton) needs a Baton (new Baton(config) from llm-baton)" });
  }
  const { onEvent, deadlineMs } = settings ?? {};
  if (onEvent != null && typeof onEvent !== "function") {
    throw new InvalidArgumentError({ argument: "settings.onEvent", message: "settings.onEvent must be a function" });
  }
  const languageModel = (route) => {
    if (typeof route !== "string" || !baton.routes().includes(route)) {
      throw new NoSuchModelError({
        modelId: String(route),
        modelType: "languageModel",
        message: `llm-baton has no route or target named ${JSON.stringify(route)}; known: ${baton.routes().join(", ")}`,
      });
    }
    return new BatonLanguageModel(baton, route, { onEvent, deadlineMs });
  };
  const provider = (route) => languageModel(route);
  provider.specificationVersion = "v4";
  provider.languageModel = languageModel;
  for (const kind of ["embeddingModel", "imageModel"]) {
    provider[kind] = (modelId) => {
      throw new NoSuchModelError({ modelId: String(modelId), modelType: kind, message: `llm-baton routes are language models only (asked for ${kind} ${JSON.stringify(modelId)})` });
    };
  }
  return provider;
}

class BatonLanguageModel {
  specificationVersion = "v4";
  provider = PROVIDER;
  /**
   * Images by http(s) URL go to the provider as URLs (every format but Gemini takes them; a
   * Gemini target refuses such a request as a config error); the AI SDK downloads any other URL
   * and hands it over as data.
   */
  supportedUrls = { "image/*": [/^https?:\/\//] };

  #baton;
  #settings;

  constructor(baton, route, settings) {
    this.#baton = baton;
    this.modelId = route;
    this.#settings = settings;
  }

  async doGenerate(options) {
    const { request, origins, warnings, callOptions } = this.#prepare(options, null);
    let out;
    try {
      out = await this.#baton.complete(this.modelId, request, callOptions);
    } catch (e) {
      throw toAiSdkError(e, this.modelId, request, origins, options.abortSignal);
    }
    const content = out.message.content.filter((part) => part.type === "reasoning").map((part) => ({ type: "reasoning", text: part.text, ...reasoningMetadata(part.raw, part.state) }));
    if (out.text) content.push({ type: "text", text: out.text });
    for (const call of out.toolCalls ?? []) content.push(toolCallPart(call.id, call));
    return {
      content,
      finishReason: finishReason(out.finishReason),
      usage: usageOf(out.usage),
      providerMetadata: metadataOf(out),
      request: { body: request },
      response: { modelId: out.model },
      warnings,
    };
  }

  async doStream(options) {
    // Call events (retry, failover...) reach the stream as raw parts when asked for.
    const pendingRaw = [];
    const rawEvent = options.includeRawChunks ? (event) => pendingRaw.push({ type: "raw", rawValue: event }) : null;
    const { request, origins, warnings, callOptions } = this.#prepare(options, rawEvent);
    const route = this.modelId;
    let events;
    let first;
    // The first item is awaited here, so a call that fails before any content (every attempt
    // failed, a config error) rejects doStream, as an HTTP provider's failed request does.
    try {
      // The AI SDK passes text on as it comes and cannot take it back: never a `reset`.
      events = this.#baton.stream(route, request, { ...callOptions, resettable: false })[Symbol.asyncIterator]();
      first = await events.next();
    } catch (e) {
      throw toAiSdkError(e, route, request, origins, options.abortSignal);
    }
    const parts = new StreamParts();
    let started = false;
    const stream = new ReadableStream({
      // Each pull enqueues at least one part or ends the stream: a pull that enqueues nothing
      // is not called again (workerd's reader then waits forever), so events that make no part
      // (a tool call's state, empty text) are read past here.
      async pull(controller) {
        let enqueued = 0;
        const enqueue = (part) => {
          enqueued++;
          controller.enqueue(part);
        };
        if (!started) {
          started = true;
          enqueue({ type: "stream-start", warnings });
        }
        while (enqueued === 0 || first) {
          let next = first;
          first = null;
          try {
            next ??= await events.next();
          } catch (e) {
            const error = toAiSdkError(e, route, request, origins, options.abortSignal);
            pendingRaw.splice(0).forEach(enqueue);
            if (isAbort(error)) {
              controller.error(error);
              return;
            }
            parts.close(enqueue);
            enqueue({ type: "error", error });
            enqueue({ type: "finish", finishReason: { unified: "error", raw: undefined }, usage: usageOf(e?.billedUsage ?? {}), providerMetadata: errorMetadata(e) });
            controller.close();
            return;
          }
          pendingRaw.splice(0).forEach(enqueue);
          if (next.done) {
            controller.close();
            return;
          }
          const event = next.value;
          if (options.includeRawChunks) enqueue({ type: "raw", rawValue: event });
          parts.push(event, enqueue);
          if (event.type === "done") {
            controller.close();
            return;
          }
        }
      },
      async cancel() {
        // The reader went away (the AI SDK's consumer stopped): abort the call upstream.
        await events.return?.();
      },
    });
    return { stream, request: { body: request } };
  }

  /**
   * The llm-baton request and call options for the AI SDK's call options, where the request's
   * messages came from in its prompt (`origins`, see toMessages), and the warnings.
   * `rawEvent` (or null) also receives the call's events.
   */
  #prepare(options, rawEvent) {
    const warnings = [];
    const origins = [];
    const request = { messages: toMessages(options.prompt, origins) };
    if (options.maxOutputTokens !== undefined) request.maxTokens = options.maxOutputTokens;
    if (options.temperature !== undefined) request.temperature = options.temperature;
    if (options.topP !== undefined) request.topP = options.topP;
    if (options.seed !== undefined) request.seed = options.seed;
    if (options.stopSequences?.length) request.stop = options.stopSequences;
    for (const key of UNSUPPORTED_OPTIONS) {
      if (options[key] !== undefined) warnings.push({ type: "unsupported", feature: key, details: "llm-baton's request has no such field; not sent" });
    }
    const extraHeaders = Object.keys(options.headers ?? {}).filter((name) => name.toLowerCase() !== "user-agent");
    if (extraHeaders.length) {
      warnings.push({ type: "unsupported", feature: "headers", details: `request headers are set per target in the llm-baton config; not sent: ${extraHeaders.join(", ")}` });
    }
    const tools = [];
    for (const tool of options.tools ?? []) {
      if (tool.type === "function") {
        const t = { name: tool.name, parameters: tool.inputSchema };
        if (tool.description !== undefined) t.description = tool.description;
        tools.push(t);
      } else {
        warnings.push({ type: "unsupported", feature: `provider-defined tool ${tool.id ?? tool.name}`, details: "llm-baton sends function tools only; this tool was left out" });
      }
    }
    if (tools.length) request.tools = tools;
    // "auto" is every format's default once tools are given, so it is not sent.
    const choice = options.toolChoice;
    if (tools.length && choice !== undefined && choice.type !== "auto") {
      request.toolChoice = choice.type === "tool" ? { name: choice.toolName } : choice.type;
    }
    const format = options.responseFormat;
    if (format?.type === "json") {
      const rf = { type: "json" };
      for (const key of ["schema", "name", "description"]) if (format[key] !== undefined) rf[key] = format[key];
      request.responseFormat = rf;
    }
    const batonOptions = options.providerOptions?.baton ?? {};
    for (const key of Object.keys(batonOptions)) {
      if (!BATON_OPTIONS.includes(key)) {
        throw new InvalidArgumentError({ argument: `providerOptions.baton.${key}`, message: `providerOptions.baton.${key} is not an llm-baton option; known: ${BATON_OPTIONS.join(", ")}` });
      }
    }
    if (batonOptions.parallelToolCalls !== undefined) request.parallelToolCalls = batonOptions.parallelToolCalls;
    const reasoning = reasoningOf(options.reasoning, batonOptions.reasoning, warnings);
    if (reasoning) request.reasoning = reasoning;
    const callOptions = {};
    const deadlineMs = batonOptions.deadlineMs ?? this.#settings.deadlineMs;
    if (deadlineMs !== undefined) callOptions.deadlineMs = deadlineMs;
    if (options.abortSignal) callOptions.signal = options.abortSignal;
    // Events are passed only to someone who reads them: llm-baton serializes none otherwise.
    const userEvent = this.#settings.onEvent;
    if (rawEvent && userEvent) {
      callOptions.onEvent = (event) => {
        rawEvent(event);
        return userEvent(event);
      };
    } else if (rawEvent || userEvent) callOptions.onEvent = rawEvent ?? userEvent;
    return { request, origins, warnings, callOptions };
  }
}

/** Turns llm-baton's stream items into the AI SDK's stream parts, opening and closing blocks. */
class StreamParts {
  #open = null; // { kind: "text" | "reasoning", id }
  #blocks = 0;
  #tools = []; // by index: { id, name }

  push(event, enqueue) {
    switch (event.type) {
      case "text":
      case "reasoning": {
        // A state ends the reasoning just streamed: it goes on that part's end, or on a part of
        // its own when none is open (redacted thinking, a signature on Gemini's text).
        if (event.state) {
          if (this.#open?.kind !== "reasoning") this.#openBlock("reasoning", enqueue);
          enqueue({ type: "reasoning-end", id: this.#open.id, ...reasoningMetadata(this.#open.raw, event.state) });
          this.#open = null;
          return;
        }
        if (!event.text) return;
        // Raw reasoning and a summary are parts of their own, so each keeps its kind.
        if (this.#open?.kind !== event.type || this.#open.raw !== event.raw) this.#openBlock(event.type, enqueue, event.raw);
        enqueue({ type: `${event.type}-delta`, id: this.#open.id, delta: event.text });
        return;
      }
      case "tool_call": {
        // A call's state comes again with the call in `done`, where its tool-call part gets it.
        if (event.state) return;
        let tool = this.#tools[event.index];
        if (!tool) {
          this.#closeBlock(enqueue);
          tool = { id: event.id ?? `baton-call-${randomId()}`, name: event.name ?? "" };
          this.#tools[event.index] = tool;
          enqueue({ type: "tool-input-start", id: tool.id, toolName: tool.name });
        }
        if (event.arguments) enqueue({ type: "tool-input-delta", id: tool.id, delta: event.arguments });
        return;
      }
      case "done": {
        this.#closeBlock(enqueue);
        (event.toolCalls ?? []).forEach((call, index) => {
          const tool = this.#tools[index] ?? { id: call.id, name: call.name };
          if (this.#tools[index]) enqueue({ type: "tool-input-end", id: tool.id });
          enqueue(toolCallPart(tool.id, call));
        });
        enqueue({ type: "response-metadata", modelId: event.model });
        enqueue({ type: "finish", finishReason: finishReason(event.finishReason), usage: usageOf(event.usage), providerMetadata: metadataOf(event) });
        return;
      }
      default:
        // A `reset` cannot come: calls are made with `resettable: false`.
        return;
    }
  }

  /** Ends what is open before an error ends the stream. */
  close(enqueue) {
    this.#closeBlock(enqueue);
    this.#tools.forEach((tool) => enqueue({ type: "tool-input-end", id: tool.id }));
    this.#tools = [];
  }

  /** Opens a text or reasoning part; `raw` marks reasoning that is the model's own, not a summary. */
  #openBlock(kind, enqueue, raw) {
    this.#closeBlock(enqueue);
    this.#open = { kind, id: `${kind}-${this.#blocks++}`, raw };
    enqueue({ type: `${kind}-start`, id: this.#open.id, ...reasoningMetadata(raw) });
  }

  #closeBlock(enqueue) {
    if (this.#open) enqueue({ type: `${this.#open.kind}-end`, id: this.#open.id, ...reasoningMetadata(this.#open.raw) });
    this.#open = null;
  }
}

// ---- The prompt ---------------------------------------------------------------------------------

/**
 * The AI SDK's prompt as llm-baton messages. `origins` gets where each one came from (`prompt[i]`,
 * or a tool result's `prompt[i].content[j]`): the prompt's tool messages are split into one
 * message per result, so llm-baton's `request.messages[k]` in an error is not always the prompt's.
 */
function toMessages(prompt, origins) {
  const messages = [];
  prompt.forEach((message, i) => {
    const where = `prompt[${i}]`;
    switch (message.role) {
      case "system":
        messages.push({ role: "system", content: message.content });
        origins.push(where);
        return;
      case "user": {
        const parts = message.content.map((part, j) => userPart(part, `${where}.content[${j}]`, prompt));
        const textOnly = parts.every((p) => p.type === "text");
        messages.push({ role: "user", content: textOnly ? parts.map((p) => p.text).join("") : parts });
        origins.push(where);
        return;
      }
      case "assistant": {
        let text = "";
        const reasoning = [];
        const toolCalls = [];
        message.content.forEach((part, j) => {
          if (part.type === "text") text += part.text;
          else if (part.type === "tool-call") {
            const call = { id: part.toolCallId, name: part.toolName, arguments: typeof part.input === "string" ? part.input : JSON.stringify(part.input ?? {}) };
            toolCalls.push(withState(call, part));
          } else if (part.type === "reasoning") {
            // Sent back with its state; llm-baton sends each state only to the format and model
            // that issued it, and leaves reasoning without one out.
            reasoning.push(withState({ type: "reasoning", text: part.text, ...(part.providerOptions?.baton?.raw === true && { raw: true }) }, part));
          } else if (part.type !== "reasoning-file") {
            // A reasoning file (an image the model made while thinking) is left out: llm-baton's
            // messages have no place for it.
            throw new InvalidPromptError({ prompt, message: `${where}.content[${j}] is an assistant ${part.type} part; llm-baton's assistant messages carry reasoning, text and tool calls only` });
          }
        });
        const out = { role: "assistant", content: reasoning.length ? [...reasoning, ...(text ? [{ type: "text", text }] : [])] : text };
        if (toolCalls.length) out.toolCalls = toolCalls;
        messages.push(out);
        origins.push(where);
        return;
      }
      case "tool":
        message.content.forEach((part, j) => {
          if (part.type === "tool-result") {
            messages.push({ role: "tool", toolCallId: part.toolCallId, content: toolOutput(part.output, `${where}.content[${j}]`, prompt) });
            origins.push(`${where}.content[${j}]`);
          } else if (part.type !== "tool-approval-response") {
            throw new InvalidPromptError({ prompt, message: `${where}.content[${j}] is a tool ${part.type} part, which llm-baton cannot send` });
          }
          // Approval responses answer provider-executed tools, which llm-baton never sends.
        });
        return;
      default:
        throw new InvalidPromptError({ prompt, message: `${where}.role ${JSON.stringify(message.role)} is not system, user, assistant or tool` });
    }
  });
  return messages;
}

/** A user part: text, or a file (images as image parts, other media as file parts). */
function userPart(part, where, prompt) {
  if (part.type === "text") return { type: "text", text: part.text };
  if (part.type !== "file") throw new InvalidPromptError({ prompt, message: `${where} is a ${part.type} part; user messages carry text and files` });
  const mediaType = part.mediaType;
  const fullType = typeof mediaType === "string" && /^[^/\s]+\/[^/\s*]+$/.test(mediaType);
  const isImage = typeof mediaType === "string" && (mediaType === "image" || mediaType.startsWith("image/"));
  const out = { type: isImage ? "image" : "file" };
  const data = part.data;
  switch (data?.type) {
    case "data":
      if (!fullType) throw new InvalidPromptError({ prompt, message: `${where}.mediaType ${JSON.stringify(mediaType)} is not a full media type; data needs one such as "image/png" or "application/pdf"` });
      out.data = typeof data.data === "string" ? data.data : base64(data.data);
      out.mediaType = mediaType;
      break;
    case "url":
      out.url = String(data.url);
      if (fullType) out.mediaType = mediaType;
      else if (!isImage) throw new InvalidPromptError({ prompt, message: `${where}.mediaType ${JSON.stringify(mediaType)} is not a full media type; a file by URL needs one such as "application/pdf"` });
      break;
    case "text":
      if (!fullType) throw new InvalidPromptError({ prompt, message: `${where}.mediaType ${JSON.stringify(mediaType)} is not a full media type; an inline text file needs one such as "text/plain"` });
      out.data = base64(new TextEncoder().encode(data.text));
      out.mediaType = mediaType;
      break;
    default:
      throw new UnsupportedFunctionalityError({ functionality: `file parts of data type ${JSON.stringify(data?.type)} (${where}); llm-baton sends files as data or URL` });
  }
  if (!isImage && part.filename !== undefined) out.filename = part.filename;
  return out;
}

/** A tool result as the text of a tool message. */
function toolOutput(output, where, prompt) {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value;
    case "json":
    case "error-json":
      return JSON.stringify(output.value);
    case "execution-denied":
      return output.reason ? `Tool execution denied: ${output.reason}` : "Tool execution denied.";
    case "content":
      return output.value.map((item, k) => {
        if (item.type === "text") return item.text;
        throw new InvalidPromptError({ prompt, message: `${where}.output.value[${k}] is a ${item.type} item; llm-baton's tool messages carry text only` });
      }).join("");
    default:
      throw new InvalidPromptError({ prompt, message: `${where}.output.type ${JSON.stringify(output.type)} is not a tool output llm-baton knows` });
  }
}

/** `value` with the reasoning state a prompt part's `providerOptions.baton.state` holds, if any. */
function withState(value, part) {
  const state = part.providerOptions?.baton?.state;
  if (state !== undefined) value.state = state;
  return value;
}

/**
 * The request's `reasoning`: the AI SDK's level as its effort (`"none"` and `"provider-default"`
 * ask for none), under `providerOptions.baton.reasoning`, whose fields win. A warning says where
 * the level could not be sent as asked, unless `own` decides it.
 */
function reasoningOf(level, own, warnings) {
  if (own != null && (typeof own !== "object" || Array.isArray(own))) {
    throw new InvalidArgumentError({ argument: "providerOptions.baton.reasoning", message: `providerOptions.baton.reasoning must be llm-baton's request reasoning, { effort?, budgetTokens?, summary? } (got ${JSON.stringify(own)})` });
  }
  if (level === "none" && own == null) {
    warnings.push({ type: "compatibility", feature: "reasoning", details: `reasoning "none": llm-baton sends no reasoning fields, so the target's default applies (off where reasoning must be asked for)` });
  }
  let effort;
  if (level !== undefined && level !== "provider-default" && level !== "none" && own?.effort === undefined) {
    effort = ROUNDED_EFFORTS[level] ?? level;
    if (effort !== level) warnings.push({ type: "compatibility", feature: "reasoning", details: `reasoning "${level}" sent as effort "${effort}", llm-baton's highest` });
  }
  if (own == null) return effort && { effort };
  return { ...(effort && { effort }), ...own };
}

function base64(bytes) {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

function randomId() {
  return Math.random().toString(36).slice(2, 12);
}

// ---- Results ------------------------------------------------------------------------------------

/** `providerMetadata.baton.state` for a part that carries a reasoning state (none for no state). */
function stateMetadata(state) {
  return state ? { providerMetadata: { baton: { state } } } : {};
}

/**
 * A reasoning part's `providerMetadata.baton`: its state, and `raw: true` when the text is the
 * model's own reasoning rather than a summary, so a replayed prompt sends it back as such.
 */
function reasoningMetadata(raw, state) {
  if (!raw) return stateMetadata(state);
  return { providerMetadata: { baton: { raw: true, ...(state && { state }) } } };
}

function toolCallPart(id, call) {
  return { type: "tool-call", toolCallId: id, toolName: call.name, input: call.arguments, ...stateMetadata(call.state) };
}

function finishReason(raw) {
  return { unified: FINISH_REASONS[raw] ?? "other", raw };
}

function usageOf(usage) {
  const raw = {};
  if (usage.inputTokens !== undefined) raw.inputTokens = usage.inputTokens;
  if (usage.outputTokens !== undefined) raw.outputTokens = usage.outputTokens;
  return {
    inputTokens: { total: usage.inputTokens, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: usage.outputTokens, text: undefined, reasoning: undefined },
    raw,
  };
}

/** What llm-baton knows of how the answer was obtained, as `providerMetadata.baton`. */
function metadataOf(out) {
  return { baton: json({ target: out.target, model: out.model, contributors: out.contributors, billedUsage: out.billedUsage, legs: out.legs }) };
}

function errorMetadata(e) {
  return { baton: json({ target: e?.target, billedUsage: e?.billedUsage, legs: e?.legs }) };
}

/** Drops undefined fields, so the metadata is a JSON object. */
function json(value) {
  return JSON.parse(JSON.stringify(value ?? {}));
}

// ---- Errors -------------------------------------------------------------------------------------

function isAbort(error) {
  return error?.name === "AbortError" || error?.name === "TimeoutError";
}

/** `message` about `path`, saying which part of the AI SDK's prompt its `request.messages[k]` is. */
function withOrigin(message, path, origins) {
  const k = /^request\.messages\[(\d+)\]/.exec(path)?.[1];
  const origin = k === undefined ? undefined : origins[Number(k)];
  return origin === undefined ? message : `${message} (request.messages[${k}] is the AI SDK's ${origin})`;
}

/**
 * A BatonError as the AI SDK's own error: the caller's abort as the signal's reason (or an
 * AbortError), a config error about the request as InvalidPromptError and any other as
 * InvalidArgumentError, every failed call as APICallError with `isRetryable: false`, so the AI
 * SDK never retries on top of llm-baton. Messages are llm-baton's, which never carry a key.
 */
function toAiSdkError(e, route, request, origins, signal) {
  if (e?.name !== "BatonError") return e;
  if (e.kind === "cancelled" && signal?.aborted) {
    const reason = signal.reason;
    if (isAbort(reason)) return reason;
    return new DOMException(`the call to route ${JSON.stringify(route)} was aborted`, "AbortError");
  }
  if (e.kind === "config") {
    if (e.path?.startsWith("request")) return new InvalidPromptError({ prompt: request, message: withOrigin(e.message, e.path, origins), cause: e });
    return new InvalidArgumentError({ argument: e.path ?? "config", message: e.message, cause: e });
  }
  const data = json({ kind: e.kind, status: e.status, code: e.code, class: e.class, timeout: e.timeout, retryAfterMs: e.retryAfterMs, target: e.target, legs: e.legs, billedUsage: e.billedUsage });
  return new APICallError({
    message: e.message,
    url: `llm-baton:${route}`,
    requestBodyValues: request,
    statusCode: e.status,
    isRetryable: false,
    cause: e,
    data,
  });
}
