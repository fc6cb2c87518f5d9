// The chat page: one llm-baton call per message, streamed, with the gate's decisions made visible
// (notices in the conversation, a timeline of attempts, the deadline counting down, each target's
// circuit breaker) and a Stop button that aborts the call upstream. A message may carry images
// (picked, dropped or pasted), sent as image parts and kept in the conversation for later turns.
// All times come from performance.now(), never from counting timer ticks: a hidden tab wakes
// timers late, and the page must still tell the truth when it comes back.
//
// A real app would `import { Baton } from "llm-baton"`; this page imports the package's browser
// entry by path so it runs without a bundler.
import { Baton, BatonError } from "../pkg/browser.js";
import { locate, lineAt } from "./locate.js";
import { ACCEPT, MAX_IMAGES, MAX_IMAGE_BYTES, dataUrl, readImage, size } from "./attach.js";
import {
  FORMATS, seconds, retryNotice, failoverNotice, resumeNotice, resetNotice, skipNotice, breakerLines, outcomeLabel, failure,
  wordCount,
} from "./words.js";

const $ = (id) => document.getElementById(id);
const KEYS_ITEM = "llm-baton.keys";
const LINE_PX = 20; // the config editor's line height (style.css)

/** Builds an element; `props` are properties (not attributes), so no markup is ever parsed. */
function h(tag, props = {}, ...children) {
  const el = Object.assign(document.createElement(tag), props);
  el.append(...children.filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

// ---- State ------------------------------------------------------------------------------------

/**
 * What the page holds between events. One object, so each module reads and sets the same values
 * (an imported `let` cannot be assigned).
 */
const state = {
  providerUrl: null, // the scripted provider, from /config.json (served by www/serve.mjs)
  configText: "", // the applied config, as typed (never holds keys)
  config: null, // configText parsed
  baton: null,
  route: null,
  staged: [], // images attached to the next message: { name, size, mediaType, data }
  current: null, // the call in flight, or the last one
  armed: null, // the demo fault for the next message
};
const keys = new Map(); // target name -> API key, in memory (sessionStorage only on request)
const history = []; // the conversation sent with each message, images included
let ticker = 0;
let breakerTicker = 0; // redraws the Targets card every second while a breaker is open

// ---- The scripted provider and its demo faults ------------------------------------------------

// `steps(ok, target)` scripts the faulty target (`ok`: its healthy step); `others(ok, broken)`,
// when given, scripts the other targets (`broken`: the faulty target's healthy step). The text is
// one content event per word, so `stallAfterEvents: 20` breaks the answer after its 20th word (and
// `stallMs: 100` cuts the connection there; a cut right after the last write can lose that word on
// the way), and a `continueFrom` of the same text makes a continue end in exactly that text. Where the format has it, the broken stream reports usage as it goes (as
// vLLM does), so the answer's tokens and the billed ones can be told apart.
const continues = (ok, broken) => [{ continueFrom: broken.text, chunkDelayMs: ok.chunkDelayMs }];
const usageAsItGoes = (target) => (["openai_chat", "gemini"].includes(target.format) ? { usagePerEvent: true } : {});
const breakAfter20 = (stall) => (ok, target) => [{ ...ok, ...usageAsItGoes(target), stallAfterEvents: 20, ...stall }];
const FAULTS = [
  { id: "stall-headers", label: "Stall before headers", steps: () => [{ headersDelayMs: 600_000 }] },
  { id: "stall-mid", label: "Stall after 20 words", steps: breakAfter20({}), others: continues },
  { id: "cut-mid", label: "Cut mid-answer", steps: breakAfter20({ stallMs: 100 }), others: continues },
  {
    id: "cut-no-prefill", label: "Cut, backup refuses prefill", steps: breakAfter20({ stallMs: 100 }),
    others: (ok) => [{ ...ok, refusePrefill: true }],
  },
  { id: "429", label: "429 + Retry-After", steps: (ok) => [{ status: 429, headers: { "retry-after": "1" } }, ok] },
  { id: "503x2", label: "503 twice", steps: (ok) => [{ status: 503 }, { status: 503 }, ok] },
  // A wait longer than the deadline: the retry is dropped at once and the backup answers, and the
  // Retry-After opens the primary's circuit breaker for 30 s, so the next messages skip it.
  { id: "503-retry-after", label: "503 + Retry-After 30 s", steps: (ok) => [{ status: 503, headers: { "retry-after": "30" } }, ok] },
  { id: "400", label: "400 Bad Request", steps: () => [{ status: 400, message: "the request was rejected (scripted)" }] },
];

function defaultConfig() {
  if (!state.providerUrl) {
    return gatewayConfig("http://127.0.0.1:8787/v1", "chat");
  }
  return {
    targets: {
      primary: {
        format: "openai_chat", baseUrl: `${state.providerUrl}/s/primary/v1`, model: "gpt-4o-mini",
        timeouts: { headersMs: 3000, firstTokenMs: 5000, idleMs: 2000 },
      },
      // The scripted provider continues a prefill as Anthropic's older models do; a real model
      // gets `prefill: true` only if it takes one (README, "Resume").
      backup: {
        format: "anthropic_messages", baseUrl: `${state.providerUrl}/s/backup/v1`, model: "claude-haiku-4-5",
        prefill: true, timeouts: { firstTokenMs: 5000, idleMs: 3000 },
      },
    },
    routes: {
      chat: {
        fallback: [
          { retry: "primary", attempts: 4, backoff: { initialMs: 500 } },
          "backup",
        ],
        afterStart: { mode: "continue" },
      },
    },
    deadlineMs: 20_000,
  };
}

/** One OpenAI-compatible target at a gateway, which holds the provider keys and its own rules. */
function gatewayConfig(baseUrl, model) {
  return {
    targets: { gateway: { format: "openai_chat", baseUrl, model, timeouts: { firstTokenMs: 30_000, idleMs: 15_000 } } },
    routes: { chat: "gateway" },
    deadlineMs: 60_000,
  };
}

/** The provider's scenario id for a target on the scripted provider, or null. */
function scenarioOf(target) {
  if (!state.providerUrl || typeof target?.baseUrl !== "string") return null;
  const m = /^\/s\/([A-Za-z0-9_.-]+)\//.exec(target.baseUrl.slice(state.providerUrl.length));
  return target.baseUrl.startsWith(state.providerUrl) && m ? m[1] : null;
}

/** The target demo faults apply to: the first one on the scripted provider. */
function faultTarget() {
  return Object.keys(state.config?.targets ?? {}).find((name) => scenarioOf(state.config.targets[name])) ?? null;
}

/** What the user sent, for the scripted answer: "You wrote: “Hi” with 1 image (cat.png)". */
function echo(prompt, images) {
  const asked = prompt.length > 80 ? `${prompt.slice(0, 77)}…` : prompt;
  const count = `${images.length} image${images.length === 1 ? "" : "s"} (${images.map((i) => i.name).join(", ")})`;
  if (images.length === 0) return `You wrote: “${asked}”.`;
  return prompt ? `You wrote: “${asked}” with ${count}.` : `You sent ${count} and no text.`;
}

function scriptedAnswer(name, target, prompt, images) {
  return `This answer was streamed by the ${name} target (${FORMATS[target.format] ?? target.format}, ` +
    `model ${target.model}), played by the scripted provider. ${echo(prompt, images)} ` +
    "llm-baton delivered it token by token under one deadline for the whole call. Pick a demo fault " +
    "to watch a retry, a failover or a timeout, or press Stop while an answer is still arriving to " +
    "abort it upstream.";
}

/** Scripts every target on the scripted provider for the next message: healthy, or the fault. */
async function scriptProvider(prompt, images, fault) {
  const faulty = faultTarget();
  const healthy = (name) => ({ text: scriptedAnswer(name, state.config.targets[name], prompt, images), chunkDelayMs: 40 });
  await Promise.all(Object.entries(state.config.targets).map(async ([name, target]) => {
    const id = scenarioOf(target);
    if (!id) return;
    const ok = healthy(name);
    let steps = [ok];
    if (fault && name === faulty) steps = fault.steps(ok, target);
    else if (fault?.others) steps = fault.others(ok, healthy(faulty));
    const res = await fetch(`${state.providerUrl}/_scenarios/${id}`, { method: "PUT", body: JSON.stringify({ steps }) });
    if (!res.ok) throw new Error(`the scripted provider refused scenario ${id}: HTTP ${res.status}`);
  }));
}

// ---- Conversation -----------------------------------------------------------------------------

const log = $("log");

function atBottom() {
  return log.scrollHeight - log.scrollTop - log.clientHeight < 80;
}

function addToLog(item) {
  const stick = atBottom();
  $("intro")?.remove();
  log.append(item);
  if (stick) log.scrollTop = log.scrollHeight;
  return item;
}

function announce(text) {
  $("announcer").textContent = text;
}

/**
 * A notice inside the answer it belongs to, stamped with the time since the call started: above
 * the text while the call runs, below it when it ends the answer.
 */
function notice(call, kind, text, list = call.view.notices, when = performance.now()) {
  const at = call.start ? ms(when - call.start) : "";
  const stick = atBottom();
  list.append(h("li", { className: `notice ${kind}` },
    h("span", { className: "notice-icon", ariaHidden: "true" }),
    h("span", { className: "notice-text", textContent: text }),
    at && h("time", { className: "mono", textContent: at })));
  if (stick) log.scrollTop = log.scrollHeight;
  announce(text);
}

function answerView() {
  const notices = h("ul", { className: "notices" });
  const text = h("div", { className: "text streaming" });
  const ending = h("ul", { className: "notices" });
  const meta = h("p", { className: "meta" });
  addToLog(h("li", { className: "msg assistant" }, h("div", { className: "content" }, notices, text, ending, meta)));
  return { notices, text, ending, meta };
}

/**
 * A user message as the request carries it: the text alone as a string, as before images; with
 * images, image parts first (as Anthropic advises) and the text part last.
 */
function userMessage(prompt, images) {
  if (images.length === 0) return { role: "user", content: prompt };
  const parts = images.map((image) => ({ type: "image", data: image.data, mediaType: image.mediaType }));
  if (prompt) parts.push({ type: "text", text: prompt });
  return { role: "user", content: parts };
}

function userBubble(prompt, images) {
  const thumbs = images.length > 0 && h("div", { className: "thumbs" },
    ...images.map((image) => h("img", { className: "thumb", src: dataUrl(image), alt: image.name, title: `${image.name} · ${size(image.size)}` })));
  return h("li", { className: "msg user" },
    h("div", { className: "bubble" }, thumbs, prompt && h("div", { className: "bubble-text", textContent: prompt })));
}

async function send(prompt, images) {
  addToLog(userBubble(prompt, images));
  history.push(userMessage(prompt, images));
  const fault = state.armed;
  arm(null);
  const call = {
    controller: new AbortController(), view: answerView(), rows: [], start: 0, end: 0,
    deadlineMs: state.config.deadlineMs, formats: Object.fromEntries(Object.entries(state.config.targets).map(([n, t]) => [n, t.format])),
    text: "", done: null, error: null, resumed: false,
  };
  state.current = call;
  setBusy(true);
  renderPanel();
  try {
    if (fault) notice(call, "fault", `Demo fault on ${faultTarget()}: ${fault.label}`);
    await scriptProvider(prompt, images, fault);
    call.start = performance.now();
    ticker = setInterval(renderPanel, 100);
    const request = { messages: [...history], maxTokens: 512 };
    for await (const ev of state.baton.stream(state.route, request, { signal: call.controller.signal, onEvent: (ev) => onEvent(call, ev) })) {
      if (ev.type === "text") onText(call, ev.text);
      else if (ev.type === "reset") onReset(call, ev);
      else if (ev.type === "done") call.done = ev;
    }
    call.end = performance.now();
    call.rows = call.done.legs;
    const stick = atBottom();
    history.push({ role: "assistant", content: call.done.text });
    const u = call.done.usage;
    const by = call.done.contributors.join(" + ");
    call.view.meta.textContent = `${by} · ${call.done.model} · ${ms(call.end - call.start)} · ` +
      `${u.inputTokens ?? "?"} in / ${u.outputTokens ?? "?"} out tokens`;
    if (stick) log.scrollTop = log.scrollHeight;
    announce(`Answer complete, served by ${call.done.contributors.join(" and ")}.`);
  } catch (e) {
    call.end = performance.now();
    call.error = e instanceof BatonError ? e : new BatonError({ kind: "internal", message: String(e?.message ?? e) });
    if (call.error.legs) call.rows = call.error.legs;
    if (call.text) history.push({ role: "assistant", content: call.text });
    else history.pop();
    notice(call, call.error.kind === "cancelled" ? "stopped" : "error", failure(call.error, call.resumed), call.view.ending);
  } finally {
    clearInterval(ticker);
    call.view.text.classList.remove("streaming");
    if (!call.text) call.view.text.remove();
    setBusy(false);
    renderPanel();
    renderTargets();
  }
}

function onText(call, text) {
  const live = call.rows.at(-1);
  if (live?.live && live.ttftMs === undefined) {
    live.ttftMs = performance.now() - call.start - live.startMs;
    renderPanel();
  }
  call.text += text;
  const stick = atBottom();
  call.view.text.textContent = call.text;
  if (stick) log.scrollTop = log.scrollHeight;
}

/** A restarted stream: what was shown goes, and the notice says why; the new answer follows. */
function onReset(call, item) {
  call.text = "";
  call.view.text.textContent = "";
  notice(call, "reset", resetNotice(item));
}

/**
 * A broken stream goes on at another attempt. The notice counts the words the reader saw, so it
 * waits one task: the stream's items queue while events arrive at once, and text that came
 * before the break may still be on its way to `onText`.
 */
function onResume(call, ev) {
  const when = performance.now();
  call.resumed = true;
  const broken = call.rows.find((row) => row.attempt === ev.attempt - 1);
  const failedResume = broken?.resumedFrom && broken.ttftMs === undefined ? broken.resumedFrom : null;
  setTimeout(() => notice(call, "resume", resumeNotice(ev, wordCount(call.text), failedResume), call.view.notices, when));
}

function onEvent(call, ev) {
  const now = performance.now() - call.start;
  if (ev.type === "attempt") {
    call.rows.push({ target: ev.target, attempt: ev.attempt, startMs: now, live: true });
  } else if (ev.type === "leg") {
    const i = call.rows.findIndex((row) => row.attempt === ev.leg.attempt);
    if (i >= 0) call.rows[i] = ev.leg;
    else call.rows.push(ev.leg);
    renderTargets();
  } else if (ev.type === "retry") {
    notice(call, "retry", retryNotice(ev));
  } else if (ev.type === "failover") {
    notice(call, "failover", failoverNotice(ev));
  } else if (ev.type === "resume") {
    onResume(call, ev);
  } else if (ev.type === "skip") {
    notice(call, "skip", skipNotice(ev));
    renderTargets();
  } else if (ev.type === "warning") {
    notice(call, "warning", `${ev.target} (attempt ${ev.attempt}): ${ev.message}`);
  }
  renderPanel();
}

function setBusy(busy) {
  document.body.classList.toggle("busy", busy);
  $("send").hidden = busy;
  $("stop").hidden = !busy;
  if (busy) $("stop").focus();
  else $("prompt").focus();
}

// ---- Reliability panel ------------------------------------------------------------------------

/** A measured time: "18 ms", "2.95 s", "12.3 s". */
function ms(value) {
  if (value < 1000) return `${Math.round(value)} ms`;
  return `${(value / 1000).toFixed(value < 10_000 ? 2 : 1)} s`;
}

function renderPanel() {
  renderDeadline();
  renderTimeline();
  renderResult();
}

function elapsed(call) {
  if (!call.start) return 0;
  return (call.end || performance.now()) - call.start;
}

function renderDeadline() {
  const text = $("deadline-text");
  const fill = $("deadline-fill");
  const call = state.current;
  const budget = call?.deadlineMs ?? state.config?.deadlineMs;
  if (!call) {
    text.textContent = budget ? `${seconds(budget)} per answer` : "none set";
    fill.style.width = "100%";
    fill.className = "meter-fill";
    return;
  }
  const spent = elapsed(call);
  const left = budget ? Math.max(0, budget - spent) : 0;
  fill.style.width = budget ? `${(100 * left) / budget}%` : "0%";
  fill.className = `meter-fill${budget && left < budget / 4 ? " low" : ""}${call.end ? " ended" : ""}`;
  if (!budget) text.textContent = `${ms(spent)} elapsed, no deadline`;
  else if (!call.end) text.textContent = `${(left / 1000).toFixed(1)} s left of ${seconds(budget)}`;
  else if (spent > budget) text.textContent = `ended ${ms(spent - budget)} past the deadline`;
  else text.textContent = `${(spent / 1000).toFixed(1)} s used, ${(left / 1000).toFixed(1)} s to spare`;
}

function renderTimeline() {
  const list = $("timeline");
  const call = state.current;
  if (!call || call.rows.length === 0) {
    list.replaceChildren(h("li", { className: "empty", textContent: call ? "Waiting for the first attempt…" : "Attempts of the current answer appear here." }));
    $("timeline-scale").textContent = "";
    return;
  }
  const now = elapsed(call);
  const scale = Math.max(now, ...call.rows.map((row) => row.endMs ?? 0), 1000);
  $("timeline-scale").textContent = `0 – ${seconds(scale)}`;
  const pct = (value) => `${Math.min(100, (100 * value) / scale)}%`;
  list.replaceChildren(...call.rows.map((row) => {
    const end = row.live ? now : row.endMs;
    const kind = row.live ? (call.error ? "cancelled" : "live") : row.outcome;
    const bar = h("div", { className: "bar" });
    bar.style.left = pct(row.startMs);
    bar.style.width = `max(3px, ${pct(end - row.startMs)})`;
    if (row.ttftMs !== undefined) {
      const mark = h("i", { className: "ttft", title: "first token" });
      mark.style.left = `${(100 * row.ttftMs) / Math.max(1, end - row.startMs)}%`;
      bar.append(mark);
    }
    const times = [`${ms(row.startMs)} → ${row.live ? "…" : ms(row.endMs)}`];
    if (row.ttftMs !== undefined) times.push(`first token +${ms(row.ttftMs)}`);
    if (row.resumedFrom) times.push(`${row.resumedFrom.mode === "continue" ? "continues" : "restarts"} attempt ${row.resumedFrom.attempt}`);
    const label = row.live ? (call.error ? call.error.kind : "running") : outcomeLabel(row);
    return h("li", { className: `row ${kind}` },
      h("div", { className: "row-head" },
        h("span", { className: "row-target", textContent: `${row.attempt}. ${row.target}` }),
        h("span", { className: "row-format", textContent: FORMATS[call.formats[row.target]] ?? "" }),
        h("span", { className: "row-outcome", textContent: label })),
      h("div", { className: "track" }, bar),
      h("p", { className: "row-times mono", textContent: times.join(" · ") }));
  }));
}

/**
 * Each target's circuit breaker, from `baton.health()`: redrawn after each attempt and each call,
 * and every second while one is open or half-open, so its countdown stays true.
 */
function renderTargets() {
  if (!state.baton) return;
  const health = state.baton.health();
  const budget = health.retryBudget;
  $("budget-text").textContent = budget ? `retry budget ${Math.floor(budget.balance)} left` : "";
  const items = health.enabled
    ? health.targets.map((t) => {
      const { state, detail } = breakerLines(t);
      return h("li", { className: `breaker ${t.state}` },
        h("div", { className: "breaker-head" },
          h("span", { className: "breaker-target", textContent: t.target }),
          h("span", { className: "breaker-state", textContent: state })),
        detail && h("p", { className: "breaker-detail mono", textContent: detail }));
    })
    : [h("li", { className: "empty", textContent: "Circuit breakers are off (health: false)." })];
  $("targets").replaceChildren(...items);
  const open = health.targets.some((t) => t.state !== "closed");
  if (open && !breakerTicker) breakerTicker = setInterval(renderTargets, 1000);
  else if (!open && breakerTicker) {
    clearInterval(breakerTicker);
    breakerTicker = 0;
  }
}

/** "12 in · 40 out", "?" for a count the provider did not report. */
function tokens(usage) {
  return `${usage.inputTokens ?? "?"} in · ${usage.outputTokens ?? "?"} out`;
}

function renderResult() {
  const call = state.current;
  const rows = [];
  const add = (term, value, className = "") => rows.push(h("div", { className }, h("dt", { textContent: term }), h("dd", { textContent: value })));
  if (!call) add("Status", "No answer yet");
  else if (!call.end) {
    const live = call.rows.find((r) => r.live);
    add("Status", !live ? "Starting…" : `${live.ttftMs === undefined ? "Waiting on" : "Streaming from"} ${live.target}…`);
  }
  else {
    const spent = elapsed(call);
    if (call.done) {
      const d = call.done;
      const late = call.deadlineMs && spent > call.deadlineMs;
      add("Outcome", late ? `ok, but ${ms(spent - call.deadlineMs)} past the deadline` : `ok, finish ${d.finishReason}`, late ? "bad" : "good");
      add("Served by", `${d.contributors.join(", then ")} (${d.model})`);
      add("Tokens", tokens(d.usage));
      if (tokens(d.billedUsage) !== tokens(d.usage)) add("Billed", tokens(d.billedUsage));
    } else {
      const e = call.error;
      add("Outcome", e.kind === "cancelled" ? "stopped by you" : `failed: ${e.kind}${e.timeout ? ` ${e.timeout}` : ""}${e.status ? ` ${e.status}` : ""}`, e.kind === "cancelled" ? "" : "bad");
      if (e.target) add("Last target", e.target);
      if (e.billedUsage && (e.billedUsage.inputTokens !== undefined || e.billedUsage.outputTokens !== undefined)) {
        add("Billed", tokens(e.billedUsage));
      }
    }
    add("Time", `${ms(spent)}${call.deadlineMs ? ` of ${seconds(call.deadlineMs)}` : ""}`);
    add("Attempts", String(call.rows.length));
  }
  $("result").replaceChildren(...rows);
}

// ---- Demo fault buttons ---------------------------------------------------------------------

function arm(fault) {
  state.armed = fault;
  for (const button of $("faults").children) button.ariaPressed = String(button.dataset.fault === fault?.id);
  $("faults-hint").textContent = fault ? `armed for the next message` : "next message only";
  $("faults-card").classList.toggle("armed", Boolean(fault));
}

function renderFaults() {
  const target = faultTarget();
  $("faults").replaceChildren(...FAULTS.map((fault) => {
    const button = h("button", { type: "button", className: "fault", textContent: fault.label, disabled: !target });
    button.dataset.fault = fault.id;
    button.ariaPressed = "false";
    button.addEventListener("click", () => arm(state.armed === fault ? null : fault));
    return button;
  }));
  if (!target) $("faults-hint").textContent = "need a target on the scripted provider";
  else arm(null);
}

// ---- Config and keys --------------------------------------------------------------------------

/** Checks `text` and builds a Baton from it plus the keys; returns an error `{message, path?, at?}` or null. */
function applyConfig(text, newKeys) {
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    const pos = /position (\d+)/.exec(e.message);
    return { message: `Not valid JSON: ${e.message}`, at: pos ? Number(pos[1]) : text.length };
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return { message: "The config must be a JSON object." };
  for (const [name, target] of Object.entries(parsed.targets ?? {})) {
    if (target && typeof target === "object" && "apiKey" in target) {
      return { path: `targets.${name}.apiKey`, message: `targets.${name}.apiKey: keep keys out of the config text; type them in the key fields below, which stay in memory` };
    }
  }
  const withKeys = structuredClone(parsed);
  for (const [name, key] of newKeys) {
    if (key && withKeys.targets?.[name] && typeof withKeys.targets[name] === "object") withKeys.targets[name].apiKey = key;
  }
  let next;
  try {
    next = new Baton(withKeys);
  } catch (e) {
    if (e instanceof BatonError && e.kind === "config") return { message: e.message, path: e.path };
    throw e;
  }
  const routes = next.routes();
  if (routes.length === 0) return { path: "routes", message: "routes is empty: name at least one route or target to answer" };
  state.configText = text;
  state.config = parsed;
  state.baton = next;
  state.route = routes[0];
  keys.clear();
  for (const [name, key] of newKeys) if (key) keys.set(name, key);
  renderWhere();
  renderFaults();
  state.current = null;
  renderPanel();
  renderTargets();
  return null;
}

function renderWhere() {
  const hosts = [...new Set(Object.values(state.config.targets).map((t) => {
    if (scenarioOf(t)) return "scripted provider";
    try {
      return new URL(t.baseUrl).host;
    } catch {
      return t.baseUrl;
    }
  }))];
  $("where").textContent = `route ${state.route} · ${Object.keys(state.config.targets).join(", ")} · ${hosts.join(", ")}`;
}

function rememberKeys(remember) {
  if (remember && keys.size > 0) sessionStorage.setItem(KEYS_ITEM, JSON.stringify(Object.fromEntries(keys)));
  else sessionStorage.removeItem(KEYS_ITEM);
}

// ---- Settings dialog --------------------------------------------------------------------------

const dialog = $("settings");
const editor = $("config-text");
let draftKeys = new Map();

function openSettings() {
  editor.value = state.configText;
  draftKeys = new Map(keys);
  showConfigError(null);
  renderGutter();
  renderKeyFields();
  dialog.showModal();
  editor.focus();
  editor.setSelectionRange(0, 0);
  editor.scrollTop = 0;
}

function renderGutter() {
  const count = editor.value.split("\n").length;
  const lines = $("gutter-lines");
  if (lines.childElementCount !== count) {
    lines.replaceChildren(...Array.from({ length: count }, (_, i) => h("div", { textContent: String(i + 1) })));
  }
  syncScroll();
}

function syncScroll() {
  $("gutter-lines").style.transform = `translateY(${-editor.scrollTop}px)`;
  const mark = $("line-mark");
  if (!mark.hidden) mark.style.transform = `translateY(${(Number(mark.dataset.line) - 1) * LINE_PX - editor.scrollTop}px)`;
}

/** Shows an error on the line of the field it names (or at a JSON syntax error's position). */
function showConfigError(error) {
  const box = $("config-error");
  const mark = $("line-mark");
  for (const el of $("gutter-lines").querySelectorAll(".bad")) el.classList.remove("bad");
  editor.ariaInvalid = String(Boolean(error));
  if (!error) {
    box.hidden = true;
    mark.hidden = true;
    return;
  }
  const text = editor.value;
  const span = error.path ? locate(text, error.path) : { start: error.at ?? 0, end: (error.at ?? 0) + 1, line: lineAt(text, error.at ?? 0) };
  box.replaceChildren(h("span", { className: "where-line mono", textContent: `Line ${span.line}` }), document.createTextNode(error.message));
  box.dataset.line = String(span.line);
  box.dataset.path = error.path ?? "";
  box.hidden = false;
  mark.dataset.line = String(span.line);
  mark.hidden = false;
  $("gutter-lines").children[span.line - 1]?.classList.add("bad");
  editor.focus();
  editor.setSelectionRange(span.start, span.end);
  editor.scrollTop = Math.max(0, (span.line - 4) * LINE_PX);
  syncScroll();
}

function renderKeyFields() {
  let names;
  try {
    names = Object.keys(JSON.parse(editor.value).targets ?? {});
  } catch {
    return; // keep the fields of the last valid text while the user types
  }
  const fields = names.map((name) => {
    const input = h("input", { type: "password", id: `key-${name}`, autocomplete: "off", spellcheck: false, placeholder: "no key", value: draftKeys.get(name) ?? "" });
    input.addEventListener("input", () => draftKeys.set(name, input.value));
    return h("div", { className: "key" }, h("label", { htmlFor: input.id, textContent: name }), input);
  });
  $("keys").replaceChildren(...(fields.length ? fields : [h("p", { className: "hint", textContent: "No targets in the config." })]));
}

function setupSettings() {
  $("open-settings").addEventListener("click", openSettings);
  $("close-settings").addEventListener("click", () => dialog.close());
  $("cancel-settings").addEventListener("click", () => dialog.close());
  editor.addEventListener("scroll", syncScroll);
  editor.addEventListener("input", () => {
    renderGutter();
    showConfigError(null);
    renderKeyFields();
  });
  $("reset-config").addEventListener("click", () => {
    editor.value = JSON.stringify(defaultConfig(), null, 2);
    editor.dispatchEvent(new Event("input"));
  });
  $("use-gateway").addEventListener("click", () => {
    const url = $("gateway-url").value.trim() || $("gateway-url").placeholder;
    editor.value = JSON.stringify(gatewayConfig(url, $("gateway-model").value.trim() || "chat"), null, 2);
    editor.dispatchEvent(new Event("input"));
    editor.focus();
  });
  $("settings-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const error = applyConfig(editor.value, draftKeys);
    showConfigError(error);
    if (error) return;
    rememberKeys($("remember-keys").checked);
    dialog.close();
  });
}

// ---- Composer ---------------------------------------------------------------------------------

/** Shows why a file was not attached (an alert, so a screen reader says it), or clears it. */
function showAttachError(message) {
  const box = $("attach-error");
  box.textContent = message ?? "";
  box.hidden = !message;
}

/** The previews of the images staged for the next message, each with its remove button. */
function renderStaged() {
  const list = $("attachments");
  list.replaceChildren(...state.staged.map((image) => {
    const remove = h("button", { type: "button", className: "btn ghost icon remove", textContent: "✕", ariaLabel: `Remove ${image.name}` });
    remove.addEventListener("click", () => unstage(image));
    return h("li", { className: "attachment" },
      h("img", { src: dataUrl(image), alt: image.name }),
      h("span", { className: "attachment-name", textContent: image.name, title: image.name, ariaHidden: "true" }), // the alt says it
      h("span", { className: "attachment-size mono", textContent: size(image.size) }),
      remove);
  }));
  list.hidden = state.staged.length === 0;
}

function unstage(image) {
  const at = state.staged.indexOf(image);
  state.staged = state.staged.filter((other) => other !== image);
  renderStaged();
  showAttachError(null);
  announce(`Removed ${image.name}.`);
  const buttons = $("attachments").querySelectorAll(".remove");
  (buttons[Math.min(at, buttons.length - 1)] ?? $("prompt")).focus();
}

let attaching = Promise.resolve(); // one batch at a time, so the count per message holds

/**
 * Stages the image files among `files` for the next message; a file that cannot be sent (not an
 * image the providers read, too large, one image too many) is refused with the reason shown.
 */
function attach(files) {
  attaching = attaching.then(() => stage(files));
  return attaching;
}

async function stage(files) {
  const refused = [];
  const added = [];
  for (const file of files) {
    if (state.staged.length >= MAX_IMAGES) {
      refused.push(`“${file.name}” was not attached: a message takes at most ${MAX_IMAGES} images.`);
      continue;
    }
    const { image, error } = await readImage(file);
    if (error) refused.push(error);
    else {
      state.staged.push(image);
      added.push(image);
    }
  }
  renderStaged();
  showAttachError(refused.length ? refused.join(" ") : null);
  if (added.length > 0) {
    const names = added.map((image) => `${image.name} (${size(image.size)})`).join(", ");
    announce(`Attached ${names}. ${state.staged.length} image${state.staged.length === 1 ? "" : "s"} will go with the next message.`);
  }
}

/** Whether a drag carries files (and not text or a link from the page). */
const carriesFiles = (event) => Array.from(event.dataTransfer?.types ?? []).includes("Files");

function setupAttachments() {
  const input = $("attach-input");
  const composer = $("composer");
  input.accept = ACCEPT;
  $("attach").title = `Attach an image (PNG, JPEG or WebP, up to ${size(MAX_IMAGE_BYTES)})`;
  $("attach").addEventListener("click", () => input.click());
  input.addEventListener("change", async () => {
    const files = [...input.files];
    input.value = ""; // picking the same file again fires change again
    await attach(files);
    $("prompt").focus();
  });
  // A file dropped anywhere else would make the browser open it in place of the conversation.
  for (const type of ["dragover", "drop"]) {
    window.addEventListener(type, (event) => {
      if (carriesFiles(event) && !composer.contains(event.target)) {
        event.preventDefault();
        event.dataTransfer.dropEffect = "none";
      }
    });
  }
  let depth = 0; // dragenter/dragleave fire for each child the drag crosses
  composer.addEventListener("dragenter", (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    depth += 1;
    composer.classList.add("dropping");
  });
  composer.addEventListener("dragover", (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "copy";
  });
  composer.addEventListener("dragleave", () => {
    depth = Math.max(0, depth - 1);
    if (depth === 0) composer.classList.remove("dropping");
  });
  composer.addEventListener("drop", (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    depth = 0;
    composer.classList.remove("dropping");
    attach([...event.dataTransfer.files]).then(() => $("prompt").focus());
  });
  $("prompt").addEventListener("paste", (event) => {
    const files = [...(event.clipboardData?.files ?? [])];
    if (files.length === 0) return; // plain text pastes as usual
    event.preventDefault();
    attach(files);
  });
}

function setupComposer() {
  const prompt = $("prompt");
  const grow = () => {
    prompt.style.height = "auto";
    prompt.style.height = `${Math.min(prompt.scrollHeight, 200)}px`;
  };
  prompt.addEventListener("input", grow);
  prompt.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      $("composer").requestSubmit();
    }
  });
  $("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = prompt.value.trim();
    if ((!text && state.staged.length === 0) || document.body.classList.contains("busy")) return;
    const images = state.staged;
    state.staged = [];
    renderStaged();
    showAttachError(null);
    prompt.value = "";
    grow();
    send(text, images);
  });
  $("stop").addEventListener("click", () => state.current?.controller.abort());
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && document.body.classList.contains("busy") && !dialog.open) state.current?.controller.abort();
  });
  // Hidden tabs wake the ticker late; redraw from the real clock the moment the tab is back.
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) renderPanel();
  });
}

// ---- Start ------------------------------------------------------------------------------------

async function start() {
  state.providerUrl = await fetch("config.json").then((r) => (r.ok ? r.json() : {})).then((j) => j.providerUrl ?? null, () => null);
  const saved = sessionStorage.getItem(KEYS_ITEM);
  const savedKeys = new Map(saved ? Object.entries(JSON.parse(saved)) : []);
  $("remember-keys").checked = Boolean(saved);
  const error = applyConfig(JSON.stringify(defaultConfig(), null, 2), savedKeys);
  if (error) throw new Error(`the default config was refused: ${error.message}`);
  setupSettings();
  setupComposer();
  setupAttachments();
  $("attach").disabled = false;
  $("prompt").disabled = false;
  $("send").disabled = false;
  $("prompt").focus();
  document.body.dataset.ready = "true";
}

start();
