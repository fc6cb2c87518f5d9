// The conversation: one llm-baton call per message, streamed into its answer, with the gate's
// retry, failover, resume, reset and skip events as notices inside it, read aloud by a live region.
import { BatonError } from "../pkg/browser.js";
import { $, h } from "./dom.js";
import { state, history } from "./state.js";
import { dataUrl, size } from "./attach.js";
import { arm, faultTarget, scriptProvider } from "./faults.js";
import { ms, renderPanel, renderTargets } from "./panel.js";
import { retryNotice, failoverNotice, hedgeNotice, resumeNotice, resetNotice, skipNotice, failure, wordCount } from "./words.js";

let ticker = 0; // redraws the panel every 100 ms while a call runs
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

export function announce(text) {
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

export async function send(prompt, images) {
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
  } else if (ev.type === "hedge") {
    notice(call, "failover", hedgeNotice(ev));
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
