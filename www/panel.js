// The reliability panel: the deadline counting down, the timeline of the current answer's attempts,
// each target's circuit breaker and the result. Times come from performance.now(), so a hidden
// tab that wakes its timers late still shows the truth.
import { $, h } from "./dom.js";
import { state } from "./state.js";
import { FORMATS, seconds, breakerLines, outcomeLabel } from "./words.js";

let breakerTicker = 0; // redraws the Targets card every second while a breaker is open

/** A measured time: "18 ms", "2.95 s", "12.3 s". */
export function ms(value) {
  if (value < 1000) return `${Math.round(value)} ms`;
  return `${(value / 1000).toFixed(value < 10_000 ? 2 : 1)} s`;
}

export function renderPanel() {
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
export function renderTargets() {
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
