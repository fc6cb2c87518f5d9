// Plain-language wording for llm-baton's events, legs and errors, kept apart from the DOM code so
// every notice the page shows reads the same way.

export const FORMATS = {
  openai_chat: "OpenAI Chat",
  anthropic_messages: "Anthropic Messages",
  openai_responses: "OpenAI Responses",
  gemini: "Gemini",
};

const WAITING_FOR = {
  headers: "no response headers",
  first_token: "no first token",
  idle: "the stream went quiet",
  total: "the attempt's total limit",
  deadline: "the call's deadline",
};

const ENDED_BY = {
  headers: (t) => `no response headers within ${t}`,
  first_token: (t) => `no first token within ${t}`,
  idle: (t) => `the stream went quiet for ${t}`,
  total: (t) => `the attempt did not finish within ${t}`,
  deadline: (t) => `the ${t} deadline ran out`,
};

/** 500 -> "0.5 s", 3000 -> "3 s", 12345 -> "12.3 s". */
export function seconds(ms) {
  const s = ms / 1000;
  return `${s >= 10 ? s.toFixed(1).replace(/\.0$/, "") : String(Number(s.toFixed(s < 1 ? 2 : 1)))} s`;
}

export const title = (name) => name.charAt(0).toUpperCase() + name.slice(1);

/** What went wrong with one attempt, after the target's name: "timed out after 3 s (no response headers)". */
export function why(cause) {
  switch (cause.kind) {
    case "timeout":
      return `timed out after ${seconds(cause.limitMs)} (${WAITING_FOR[cause.timeout] ?? cause.timeout})`;
    case "http":
      return cause.status === 429 ? "is busy (HTTP 429)" : `answered HTTP ${cause.status}`;
    case "transport":
      return "could not be reached";
    case "protocol":
      return "sent an answer that could not be read";
    default:
      return cause.message;
  }
}

/** "Primary is busy (HTTP 429), retrying (2/4) in 1 s, as its Retry-After asked". */
export function retryNotice(ev) {
  const asked = ev.cause.retryAfterMs !== undefined ? ", as its Retry-After asked" : "";
  return `${title(ev.target)} ${why(ev.cause)}, retrying (${ev.attempt + 1}/${ev.of}) in ${seconds(ev.delayMs)}${asked}`;
}

/** "Primary timed out after 3 s (no response headers), switching to backup". */
export function failoverNotice(ev) {
  return `${title(ev.from)} ${why(ev.cause)}, switching to ${ev.to}`;
}

/** "Primary showed nothing for 0.8 s (its usual time to first token): racing backup beside it, …". */
export function hedgeNotice(ev) {
  const threshold = ev.threshold === "learned" ? "its usual time to first token" : "the hedge's threshold";
  return `${title(ev.from)} showed nothing for ${seconds(ev.afterMs)} (${threshold}): racing ${ev.to} beside it, the first to answer wins`;
}

/** How many words `text` holds: "This answer was" -> 3. */
export function wordCount(text) {
  const trimmed = text.trim();
  return trimmed ? trimmed.split(/\s+/).length : 0;
}

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** How a stream that had started broke, for the middle of a sentence: "the connection was cut". */
export function breakCause(cause) {
  switch (cause.kind) {
    case "timeout":
      return (ENDED_BY[cause.timeout] ?? ((t) => `its ${cause.timeout} limit of ${t} passed`))(seconds(cause.limitMs));
    case "transport":
      return "the connection was cut";
    case "http":
      return cause.status ? `an error in the stream, HTTP ${cause.status}` : "an error in the stream";
    case "protocol":
      return "a stream that could not be read";
    default:
      return cause.message;
  }
}

/**
 * A `resume` event, after `words` words were shown: "Primary stalled after 20 words; continued on
 * backup" (an idle timeout), "Primary was cut after 20 words; continued on backup" (any other
 * break), "Primary broke after 20 words; restarting on backup". `failedResume` is the leg that
 * failed when that leg was itself a resume that showed nothing (a refused prefill): "Backup
 * answered HTTP 400 instead of continuing; restarting on backup".
 */
export function resumeNotice(ev, words, failedResume) {
  const next = ev.mode === "continue" ? "continuing" : "restarting";
  if (failedResume) {
    const instead = failedResume.mode === "continue" ? "continuing" : "answering";
    return `${title(ev.from)} ${why(ev.cause)} instead of ${instead}; ${next} on ${ev.to}`;
  }
  const shown = plural(words, "word");
  if (ev.mode === "restart") return `${title(ev.from)} broke after ${shown}; restarting on ${ev.to}`;
  const how = ev.cause.kind === "timeout" && ev.cause.timeout === "idle" ? "stalled" : "was cut";
  return `${title(ev.from)} ${how} after ${shown}; continued on ${ev.to}`;
}

/** A `reset` stream item: "Discarded 312 characters from primary (the connection was cut); backup answers afresh". */
export function resetNotice(item) {
  return `Discarded ${plural(item.discardedChars, "character")} from ${item.from} (${breakCause(item.cause)}); ` +
    `${item.to} answers afresh`;
}

/** A failure for after "after": "HTTP 503", "a headers timeout", "a connection failure". */
export function failureShort(cause) {
  switch (cause.kind) {
    case "http":
      return `HTTP ${cause.status}`;
    case "timeout":
      return `a ${cause.timeout} timeout`;
    case "transport":
      return "a connection failure";
    case "protocol":
      return "an unreadable answer";
    default:
      return cause.message;
  }
}

/**
 * A `skip` event: "Skipped primary: its circuit breaker is open after HTTP 503; it reopens in 4.2 s",
 * or, for a member a hedging fallback knows slow (no reopensInMs), the engine's reason.
 */
export function skipNotice(ev) {
  if (ev.reopensInMs === undefined) return `Skipped ${ev.target}: ${ev.reason}`;
  const after = ev.cause ? ` after ${failureShort(ev.cause)}` : "";
  return `Skipped ${ev.target}: its circuit breaker is open${after}; it reopens in ${seconds(ev.reopensInMs)}`;
}

const STATES = { closed: "closed", open: "open", half_open: "half-open" };

/**
 * One target's breaker from `baton.health()`, in words: its state, and a detail such as "reopens
 * in 27.5 s · last failure HTTP 503 · 1 of 1 failed in the window".
 */
export function breakerLines(t) {
  const parts = [];
  if (t.state === "open") parts.push(t.reopensInMs > 0 ? `reopens in ${seconds(t.reopensInMs)}` : "the next message probes it");
  if (t.state === "half_open") parts.push("one probe on its way");
  if (t.lastFailure && t.state !== "closed") parts.push(`last failure ${failureShort(t.lastFailure)}`);
  if (t.window.outcomes > 0) parts.push(`${t.window.failures} of ${plural(t.window.outcomes, "outcome")} failed`);
  return { state: STATES[t.state] ?? t.state, detail: parts.join(" · ") };
}

/** A leg's outcome in a few words: "ok", "http 503", "timeout first_token", "cancelled". */
export function outcomeLabel(leg) {
  if (leg.outcome === "timeout") return `timeout ${leg.timeout}`;
  if (leg.outcome === "http") return `http ${leg.status}`;
  if (leg.outcome === "lost") return "lost the race";
  return leg.outcome;
}

/** The sentence that closes a failed answer; `resumed` when a resume of the broken stream was tried. */
export function failure(e, resumed = false) {
  const tried = resumed ? ". Resuming the answer did not work either." : "";
  switch (e.kind) {
    case "cancelled":
      return "Stopped. The request was aborted upstream.";
    case "timeout": {
      const limit = (ENDED_BY[e.timeout] ?? ((t) => `${e.timeout} limit of ${t}`))(seconds(e.limitMs));
      const started = e.legs?.some((leg) => leg.ttftMs !== undefined);
      if (resumed) return `Failed: ${limit}. Resuming the answer did not work either, so it ends here.`;
      return started
        ? `Failed: ${limit}. The answer had already started, so it was not retried: a second answer could contradict the first.`
        : `Failed: ${limit}, and nothing was left to try.`;
    }
    case "http":
      return `Failed: ${e.target ?? "the provider"} answered HTTP ${e.status}. ${e.message}${tried}`;
    case "config":
      return `The request was not sent: ${e.message}`;
    default:
      return `Failed (${e.kind}): ${e.message}${tried}`;
  }
}
