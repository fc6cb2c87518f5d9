// Each library, configured for a scenario's policy with its own documented options, the way its
// docs recommend. `run(scn, ctx)` performs one call and resolves to the answer's text (streams
// report text deltas through ctx.onText) or throws the library's own error.
//
// ctx: { base: { primary, backup } (OpenAI-style base URLs ending in /v1), signal (the caller's
//        AbortSignal, when the scenario aborts), onText(text), note(text), variant }
// variant "options": only the library's options. variant "workaround": the library's options
// plus the few lines of the caller's own code that get closest to the goal; each adapter counts
// those lines (`ctx.lines(n, what)`) and WORKAROUNDS below prints their source.
import { Baton } from "llm-baton";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { generateText, streamText } from "ai";
import { createOpenAI } from "@ai-sdk/openai";
import { createRetryableModel, timeout as timedOut, error as errorIs } from "ai-retry/language-model";
import { experimental_retryableStreamText as retryableStreamText } from "ai-retry/stream-text";
import { timeout as streamTimedOut } from "ai-retry/stream-text/conditions";
import { createFallback } from "ai-fallback";
import pRetry, { AbortError } from "p-retry";
import { createParser } from "eventsource-parser";
import { KEY, MODEL, PROMPT } from "./common.mjs";

const MESSAGES = [{ role: "user", content: PROMPT }];
const BACKUP_MODEL = "scripted-backup";

// ---- The caller's own code used by the workarounds (shown verbatim in RESULTS.md) ------------

/** 1 line: one budget for the whole call, retries and body included. */
export const withDeadline = (signal, ms) => AbortSignal.any([signal, AbortSignal.timeout(ms)].filter(Boolean));

/** 4 lines: fall back to the backup when the primary fails before any text (not after text, not on the caller's abort). */
export async function withFallback(primary, backup, state, signal) {
  try { return await primary(); }
  catch (e) { if (state.sawText || signal?.aborted) throw e; }
  return await backup();
}

/** 7 lines: a first-token and idle watchdog around a stream's chunks (the SDK clears its timer at the headers). */
export async function* watchdog(chunks, ac, { firstTokenMs, idleMs }) {
  let timer = setTimeout(() => ac.abort(new Error("first-token timeout")), firstTokenMs ?? 2 ** 31 - 1);
  try {
    for await (const chunk of chunks) { clearTimeout(timer); timer = setTimeout(() => ac.abort(new Error("idle timeout")), idleMs ?? 2 ** 31 - 1); yield chunk; }
  } finally { clearTimeout(timer); }
  if (ac.signal.aborted) throw ac.signal.reason; // some SDK streams end quietly when aborted
}

export const WORKAROUNDS = { withDeadline, withFallback, watchdog };

// ---- llm-baton -----------------------------------------------------------------------------

const baton = {
  name: "llm-baton",
  version: null,
  async run(scn, ctx) {
    const p = scn.policy;
    const targets = {
      primary: { format: "openai_chat", baseUrl: ctx.base.primary, model: MODEL, apiKey: KEY, ...(p.member ? { timeouts: p.member } : {}) },
      backup: { format: "openai_chat", baseUrl: ctx.base.backup, model: BACKUP_MODEL, apiKey: KEY },
    };
    let strategy = "primary";
    if ((p.attempts ?? 1) > 1) {
      strategy = { retry: "primary", attempts: p.attempts, backoff: { initialMs: p.backoff.initialMs, multiplier: p.backoff.multiplier, maxMs: 8000, jitter: "none" } };
    }
    if (p.fallback) strategy = { fallback: [strategy, "backup"] };
    const config = { targets, routes: { main: strategy } };
    ctx.note(`routes.main = ${JSON.stringify(strategy)}${p.member ? `; timeouts ${JSON.stringify(p.member)}` : ""}${p.deadlineMs ? `; deadlineMs ${p.deadlineMs}` : ""}${ctx.signal ? "; signal" : ""}`);
    const b = new Baton(config);
    const opts = { ...(p.deadlineMs ? { deadlineMs: p.deadlineMs } : {}), ...(ctx.signal ? { signal: ctx.signal } : {}) };
    const ask = { messages: MESSAGES, maxTokens: 32 };
    if (!p.stream) return (await b.complete("main", ask, opts)).text;
    let text = "";
    for await (const ev of b.stream("main", ask, opts)) {
      if (ev.type === "text") { text += ev.text; ctx.onText(ev.text); }
    }
    return text;
  },
};

// ---- openai and @anthropic-ai/sdk (same Stainless client core: maxRetries, timeout, signal) ----

function stainless({ name, pkg, make, invoke, stream }) {
  return {
    name,
    pkg,
    async run(scn, ctx) {
      const p = scn.policy;
      const maxRetries = (p.attempts ?? 1) - 1;
      // The one time limit these SDKs have is `timeout` (per attempt, until the response headers).
      const timeout = p.member?.totalMs ?? p.member?.firstTokenMs ?? p.deadlineMs ?? p.member?.idleMs;
      ctx.note(`maxRetries: ${maxRetries}${timeout ? `, timeout: ${timeout}` : ""}${ctx.signal ? ", signal" : ""}${p.fallback ? "; no fallback option" : ""}`);
      const primary = make(ctx.base.primary, { maxRetries, ...(timeout ? { timeout } : {}) });
      const backup = make(ctx.base.backup, { maxRetries: 0 });
      const once = async (client, signal, limits) => {
        if (!p.stream) return invoke(client, signal);
        let text = "";
        if (!limits) {
          for await (const t of stream(client, signal)) { text += t; ctx.onText(t); }
          return text;
        }
        const ac = new AbortController();
        for await (const t of watchdog(stream(client, AbortSignal.any([signal, ac.signal].filter(Boolean))), ac, limits)) { text += t; ctx.onText(t); }
        return text;
      };
      if (ctx.variant === "options") return once(primary, ctx.signal);
      let signal = ctx.signal;
      if (p.deadlineMs) { signal = withDeadline(signal, p.deadlineMs); ctx.lines(1, "withDeadline"); }
      const limits = p.stream && (p.member?.firstTokenMs || p.member?.idleMs) ? p.member : null;
      if (limits) ctx.lines(7, "watchdog");
      if (!p.fallback) return once(primary, signal, limits);
      ctx.lines(4, "withFallback");
      return withFallback(() => once(primary, signal, limits), () => once(backup, signal), ctx.state, signal);
    },
  };
}

const openai = stainless({
  name: "openai",
  pkg: "openai",
  make: (baseURL, o) => new OpenAI({ apiKey: KEY, baseURL, ...o }),
  invoke: async (c, signal) => (await c.chat.completions.create({ model: MODEL, messages: MESSAGES, max_tokens: 32 }, { signal })).choices[0].message.content,
  stream: async function* (c, signal) {
    const s = await c.chat.completions.create({ model: MODEL, messages: MESSAGES, max_tokens: 32, stream: true }, { signal });
    for await (const chunk of s) { const t = chunk.choices?.[0]?.delta?.content; if (t) yield t; }
  },
});

const anthropic = stainless({
  name: "@anthropic-ai/sdk",
  pkg: "@anthropic-ai/sdk",
  // Anthropic's base URL has no /v1 (the SDK appends /v1/messages).
  make: (baseURL, o) => new Anthropic({ apiKey: KEY, baseURL: baseURL.replace(/\/v1$/, ""), ...o }),
  invoke: async (c, signal) => (await c.messages.create({ model: MODEL, messages: MESSAGES, max_tokens: 32 }, { signal })).content[0].text,
  stream: async function* (c, signal) {
    const s = await c.messages.create({ model: MODEL, messages: MESSAGES, max_tokens: 32, stream: true }, { signal });
    for await (const ev of s) { if (ev.type === "content_block_delta" && ev.delta?.type === "text_delta" && ev.delta.text) yield ev.delta.text; }
  },
});

// ---- Vercel ai + @ai-sdk/openai, and ai-retry / ai-fallback on top --------------------------

// ai-retry tracks attempts per provider/modelId, so the backup has a model id of its own.
const chatModel = (baseURL, id = MODEL) => createOpenAI({ baseURL, apiKey: KEY }).chat(id);

/**
 * ai's own `timeout` option for a policy: a number (the whole call) for whole answers and
 * deadlines; for stream limits ai 7's `firstChunkMs` (until the first content) and `chunkMs`
 * (between content chunks, armed by the first one).
 */
function aiTimeout(p) {
  if (p.stream && (p.member?.firstTokenMs || p.member?.idleMs)) {
    return { ...(p.member.firstTokenMs ? { firstChunkMs: p.member.firstTokenMs } : {}), ...(p.member.idleMs ? { chunkMs: p.member.idleMs } : {}) };
  }
  return p.deadlineMs ?? p.member?.totalMs;
}

/**
 * One call through ai; `stream` is streamText or a wrapper taking its arguments (ai-retry's call
 * level); `limits` puts the workaround's watchdog around the stream's text.
 */
async function aiCall(model, p, ctx, { maxRetries, abortSignal, timeout, limits, stream = streamText, extra = {} }) {
  const ac = limits ? new AbortController() : null;
  if (ac) abortSignal = AbortSignal.any([abortSignal, ac.signal].filter(Boolean));
  const args = { model, prompt: PROMPT, maxOutputTokens: 32, maxRetries, ...(abortSignal ? { abortSignal } : {}), ...(timeout ? { timeout } : {}), ...extra };
  if (!p.stream) return (await generateText(args)).text;
  const r = await stream({ ...args, onError: () => {} });
  async function* texts() {
    for await (const part of r.stream) {
      if (part.type === "text-delta" && part.text) yield part.text;
      if (part.type === "error") throw part.error;
      if (part.type === "abort") throw abortSignal?.aborted ? abortSignal.reason : new Error(`aborted${part.reason ? `: ${part.reason}` : ""}`);
    }
  }
  let text = "";
  for await (const t of ac ? watchdog(texts(), ac, limits) : texts()) { text += t; ctx.onText(t); }
  return text;
}

const ai = {
  name: "ai",
  pkg: "ai",
  async run(scn, ctx) {
    const p = scn.policy;
    const maxRetries = (p.attempts ?? 1) - 1;
    const timeout = aiTimeout(p);
    ctx.note(`maxRetries: ${maxRetries}${timeout ? `, timeout: ${JSON.stringify(timeout)}` : ""}${ctx.signal ? ", abortSignal" : ""}${p.fallback ? "; no fallback option" : ""}`);
    const once = (base, signal, opts = {}) => aiCall(chatModel(base), p, ctx, { maxRetries, abortSignal: signal, timeout, ...opts });
    if (ctx.variant === "options") return once(ctx.base.primary, ctx.signal);
    // firstChunkMs is armed only once @ai-sdk/openai's doStream resolves, and that waits for the
    // first output chunk (its check for an error event before output), so a stall before the
    // first token still needs the watchdog.
    const limits = p.stream && (p.member?.firstTokenMs || p.member?.idleMs) ? p.member : undefined;
    if (limits) ctx.lines(7, "watchdog");
    if (!p.fallback) return once(ctx.base.primary, ctx.signal, { limits });
    ctx.lines(4, "withFallback");
    return withFallback(() => once(ctx.base.primary, ctx.signal, { limits }), () => once(ctx.base.backup, ctx.signal, { maxRetries: 0, timeout: undefined }), ctx.state, ctx.signal);
  },
};

const aiRetry = {
  name: "ai + ai-retry",
  pkg: "ai-retry",
  async run(scn, ctx) {
    const p = scn.policy;
    const backup = chatModel(ctx.base.backup, BACKUP_MODEL);
    if (p.stream && p.fallback && p.member?.firstTokenMs) {
      // ai-retry 2's README: a streamText deadline cannot fail over below the model (the
      // fallback's output is discarded), so a first-chunk limit with a fallback uses its
      // call-level experimental_retryableStreamText, which re-runs streamText with the backup.
      const timeout = aiTimeout(p);
      ctx.note(`experimental_retryableStreamText({ timeout: ${JSON.stringify(timeout)}, retry: [timeout().switch({ model: backup })], maxRetries: 0 })${ctx.signal ? "; abortSignal" : ""}`);
      return aiCall(chatModel(ctx.base.primary), p, ctx, { maxRetries: 0, abortSignal: ctx.signal, timeout, stream: retryableStreamText, extra: { retry: [streamTimedOut().switch({ model: backup })] } });
    }
    const retries = [];
    const memberMs = p.member?.totalMs ?? p.member?.firstTokenMs;
    const backoff = p.backoff ? { delay: p.backoff.initialMs, backoffFactor: p.backoff.multiplier } : {};
    const notes = [];
    if (p.fallback && memberMs) { retries.push(timedOut().switch({ model: backup, timeout: 30_000 }), backup); notes.push("timeout().switch({ model: backup, timeout: 30000 }), backup"); }
    else if (p.fallback) { retries.push(backup); notes.push("backup"); }
    if ((p.attempts ?? 1) > 1 && memberMs) { retries.push(timedOut().retry({ ...backoff, maxAttempts: p.attempts, timeout: memberMs })); notes.push(`timeout().retry({ delay, backoffFactor, maxAttempts: ${p.attempts}, timeout: ${memberMs} })`); }
    if ((p.attempts ?? 1) > 1) { retries.push(errorIs.isRetryable(true).retry({ ...backoff, maxAttempts: p.attempts })); notes.push(`error.isRetryable(true).retry({ delay: ${backoff.delay}, backoffFactor: ${backoff.backoffFactor}, maxAttempts: ${p.attempts} })`); }
    const model = createRetryableModel({ model: chatModel(ctx.base.primary), retries });
    // ai-retry's docs: a member limit is an AbortSignal.timeout() on the call; a fresh one per retry.
    const abortSignal = memberMs ? AbortSignal.any([ctx.signal, AbortSignal.timeout(memberMs)].filter(Boolean)) : ctx.signal;
    const timeout = memberMs ? undefined : aiTimeout(p);
    ctx.note(`retries: [${notes.join(", ")}]; maxRetries: 0${memberMs ? `; abortSignal: AbortSignal.timeout(${memberMs})` : ""}${timeout ? `; timeout: ${JSON.stringify(timeout)}` : ""}${ctx.signal ? "; abortSignal" : ""}`);
    return aiCall(model, p, ctx, { maxRetries: 0, abortSignal, timeout });
  },
};

const aiFallback = {
  name: "ai + ai-fallback",
  pkg: "ai-fallback",
  async run(scn, ctx) {
    const p = scn.policy;
    const maxRetries = (p.attempts ?? 1) - 1;
    const model = p.fallback ? createFallback({ models: [chatModel(ctx.base.primary), chatModel(ctx.base.backup, BACKUP_MODEL)], onError: () => {} }) : chatModel(ctx.base.primary);
    const timeout = aiTimeout(p);
    ctx.note(`${p.fallback ? "createFallback({ models: [primary, backup] }); " : ""}maxRetries: ${maxRetries}${timeout ? `, timeout: ${JSON.stringify(timeout)}` : ""}${ctx.signal ? ", abortSignal" : ""}`);
    return aiCall(model, p, ctx, { maxRetries, abortSignal: ctx.signal, timeout });
  },
};

// ---- p-retry around fetch -------------------------------------------------------------------

/** p-retry retries a function; the request, status check and parsing are the caller's code. */
async function fetchChat(base, { stream, signal, onText }) {
  const res = await fetch(`${base}/chat/completions`, { method: "POST", signal, headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` },
    body: JSON.stringify({ model: MODEL, messages: MESSAGES, max_tokens: 32, stream }) });
  if (!res.ok) { const e = Object.assign(new Error(`HTTP ${res.status}`), { status: res.status, retryAfter: res.headers.get("retry-after") }); throw e.status === 429 || e.status >= 500 ? e : new AbortError(e); }
  if (!stream) return (await res.json()).choices[0].message.content;
  let text = "";
  const parser = createParser({ onEvent: (ev) => { if (ev.data !== "[DONE]") { const t = JSON.parse(ev.data).choices?.[0]?.delta?.content; if (t) { text += t; onText(t); } } } });
  for await (const bytes of res.body.pipeThrough(new TextDecoderStream())) parser.feed(bytes);
  return text;
}
const FETCH_CHAT_LINES = { invoke: 5, stream: 9 };

const pretry = {
  name: "p-retry + fetch",
  pkg: "p-retry",
  async run(scn, ctx) {
    const p = scn.policy;
    const memberMs = p.member?.totalMs ?? p.member?.firstTokenMs;
    ctx.lines(p.stream ? FETCH_CHAT_LINES.stream : FETCH_CHAT_LINES.invoke, "fetchChat");
    const opts = { retries: (p.attempts ?? 1) - 1, ...(p.backoff ? { minTimeout: p.backoff.initialMs, factor: p.backoff.multiplier } : {}), ...(ctx.signal ? { signal: ctx.signal } : {}), ...(p.deadlineMs ? { maxRetryTime: p.deadlineMs } : {}) };
    ctx.note(`pRetry(fetchChat, ${JSON.stringify(opts).replace(/"signal":\{\}/, '"signal":signal')}); fetch signal: AbortSignal.timeout(member limit)${p.fallback ? "; no fallback option" : ""}`);
    let signal = ctx.signal;
    if (ctx.variant === "workaround" && p.deadlineMs) { signal = withDeadline(signal, p.deadlineMs); ctx.lines(1, "withDeadline"); }
    if (ctx.variant === "workaround" && scn.key.startsWith("429")) {
      ctx.lines(2, "Retry-After in onFailedAttempt");
      opts.onFailedAttempt = async ({ error: e }) => { const ms = Number(e.retryAfter) * 1000; if (ms > (p.deadlineMs ?? Infinity)) throw e; if (ms) await new Promise((r) => setTimeout(r, ms)); };
      opts.minTimeout = 0;
    }
    const attempt = (base, limits) => async () => {
      const perAttempt = AbortSignal.any([signal, memberMs ? AbortSignal.timeout(memberMs) : null].filter(Boolean));
      if (!limits) return fetchChat(base, { stream: p.stream, signal: perAttempt, onText: ctx.onText });
      const ac = new AbortController();
      let text = "";
      const chunks = { async *[Symbol.asyncIterator]() { const q = []; let wake; let done = false; let err;
        fetchChat(base, { stream: true, signal: AbortSignal.any([perAttempt, ac.signal]), onText: (t) => { q.push(t); wake?.(); } }).then(() => { done = true; wake?.(); }, (e) => { err = e; done = true; wake?.(); });
        for (;;) { if (q.length) { yield q.shift(); continue; } if (err) throw err; if (done) return; await new Promise((r) => (wake = r)); wake = null; } } };
      for await (const t of watchdog(chunks, ac, limits)) { text += t; ctx.onText(t); }
      return text;
    };
    const limits = ctx.variant === "workaround" && p.stream && (p.member?.firstTokenMs || p.member?.idleMs) ? p.member : null;
    if (limits) ctx.lines(7, "watchdog");
    const primary = () => pRetry(attempt(ctx.base.primary, limits), opts);
    if (ctx.variant === "options" || !p.fallback) return primary();
    ctx.lines(4, "withFallback");
    return withFallback(primary, attempt(ctx.base.backup, null), ctx.state, signal);
  },
};

export const LIBRARIES = [baton, openai, anthropic, ai, aiRetry, aiFallback, pretry];
