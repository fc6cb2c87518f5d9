// The scripted provider's side of the page: the default configs (the scripted targets, or one
// gateway), the script each target plays for the next message, and the demo faults that make the
// primary misbehave, with their buttons.
import { $, h } from "./dom.js";
import { state } from "./state.js";
import { FORMATS } from "./words.js";

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

export function defaultConfig() {
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
      // gets `prefill: true` only if it takes one (docs/resume.md).
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
export function gatewayConfig(baseUrl, model) {
  return {
    targets: { gateway: { format: "openai_chat", baseUrl, model, timeouts: { firstTokenMs: 30_000, idleMs: 15_000 } } },
    routes: { chat: "gateway" },
    deadlineMs: 60_000,
  };
}

/** The provider's scenario id for a target on the scripted provider, or null. */
export function scenarioOf(target) {
  if (!state.providerUrl || typeof target?.baseUrl !== "string") return null;
  const m = /^\/s\/([A-Za-z0-9_.-]+)\//.exec(target.baseUrl.slice(state.providerUrl.length));
  return target.baseUrl.startsWith(state.providerUrl) && m ? m[1] : null;
}

/** The target demo faults apply to: the first one on the scripted provider. */
export function faultTarget() {
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
export async function scriptProvider(prompt, images, fault) {
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

export function arm(fault) {
  state.armed = fault;
  for (const button of $("faults").children) button.ariaPressed = String(button.dataset.fault === fault?.id);
  $("faults-hint").textContent = fault ? `armed for the next message` : "next message only";
  $("faults-card").classList.toggle("armed", Boolean(fault));
}

export function renderFaults() {
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
