// `make demo`: one streamed answer through a fallback chain whose primary hangs, with the
// attempts drawn as a timeline; then (scripted only) a stream whose primary stalls mid-answer,
// continued on the backup so the reader gets one whole answer. With no API key it runs against
// the scripted provider on loopback; with OPENAI_API_KEY or ANTHROPIC_API_KEY set it calls that
// provider instead.
import { Baton, BatonError } from "llm-baton";
import { startProvider } from "../tests/e2e/provider.mjs";

const bold = (s) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
const dim = (s) => (process.stdout.isTTY ? `\x1b[2m${s}\x1b[0m` : s);

async function scripted() {
  const provider = await startProvider();
  const put = (id, steps) =>
    fetch(`${provider.url}/_scenarios/${id}`, { method: "PUT", body: JSON.stringify({ steps }) });
  await put("demo-primary", [{ headersDelayMs: 600_000 }]); // hangs before its first byte
  await put("demo-backup", [{ text: "The backup answered: llm-baton failed over at the first-token limit, with one deadline over the whole call.", chunkDelayMs: 40 }]);
  // The second run: the primary stalls after 12 words; the backup continues from what was shown.
  await put("demo-stalls", [{ text: RESUMED_TEXT, chunkDelayMs: 40, stallAfterEvents: 12 }]);
  await put("demo-continues", [{ continueFrom: RESUMED_TEXT, chunkDelayMs: 40 }]);
  const config = {
    targets: {
      primary: { format: "openai_chat", baseUrl: `${provider.url}/s/demo-primary/v1`, model: "gpt-4o-mini", timeouts: { firstTokenMs: 1000 } },
      backup: { format: "anthropic_messages", baseUrl: `${provider.url}/s/demo-backup/v1`, model: "claude-haiku-4-5", timeouts: { idleMs: 2000 } },
      stalling: { format: "openai_chat", baseUrl: `${provider.url}/s/demo-stalls/v1`, model: "gpt-4o-mini", timeouts: { idleMs: 800 } },
      continuing: { format: "anthropic_messages", baseUrl: `${provider.url}/s/demo-continues/v1`, model: "claude-haiku-4-5", prefill: true },
    },
    routes: {
      chat: { fallback: [{ retry: "primary", attempts: 1 }, "backup"] },
      resumed: { fallback: ["stalling", "continuing"], afterStart: { mode: "continue" } },
    },
    deadlineMs: 10_000,
  };
  return { config, provider, label: "scripted provider on loopback: a hung primary, a healthy backup", resume: true };
}

const RESUMED_TEXT =
  "This answer started on the primary, which stalled mid-sentence; llm-baton noticed the silence at the idle limit and the backup continued the same text from where the reader left off.";

function real() {
  const targets = {};
  if (process.env.OPENAI_API_KEY) {
    targets.openai = { format: "openai_chat", baseUrl: "https://api.openai.com/v1", model: "gpt-4o-mini", apiKey: process.env.OPENAI_API_KEY, timeouts: { firstTokenMs: 10_000, idleMs: 10_000 } };
  }
  if (process.env.ANTHROPIC_API_KEY) {
    targets.anthropic = { format: "anthropic_messages", baseUrl: "https://api.anthropic.com/v1", model: "claude-haiku-4-5", apiKey: process.env.ANTHROPIC_API_KEY, timeouts: { firstTokenMs: 10_000, idleMs: 10_000 } };
  }
  const names = Object.keys(targets);
  const config = { targets, routes: { chat: { fallback: names.map((n) => ({ retry: n, attempts: 2 })) } }, deadlineMs: 30_000 };
  return { config, provider: null, label: `real providers: ${names.join(" then ")}` };
}

function timeline(legs, totalMs) {
  const width = 50;
  const scale = (ms) => Math.round((ms / Math.max(totalMs, 1)) * width);
  console.log(bold("\nAttempts"));
  for (const leg of legs) {
    const start = scale(leg.startMs);
    const len = Math.max(1, scale(leg.endMs) - start);
    const bar = " ".repeat(start) + (leg.outcome === "ok" ? "█" : "░").repeat(len);
    const outcome = leg.outcome === "ok" ? "ok" : leg.outcome === "timeout" ? `timeout ${leg.timeout}` : leg.status ? `http ${leg.status}` : leg.outcome;
    const ttft = leg.ttftMs !== undefined ? `, first token ${leg.ttftMs} ms` : "";
    console.log(`  ${leg.target.padEnd(8)} │${bar.padEnd(width)}│ ${leg.startMs}–${leg.endMs} ms  ${outcome}${ttft}`);
  }
}

/** Streams one answer from `route`, printing it as it arrives, then its timeline. */
async function show(baton, route, title) {
  console.log("\n" + bold(title));
  const started = performance.now();
  let shown = "";
  const onEvent = (ev) => {
    const t = `${Math.round(performance.now() - started)} ms`.padStart(8);
    const line = (s) => console.log(`${shown ? "\n" : ""}${dim(`${t}  ${s}`)}`);
    if (ev.type === "attempt") line(`→ attempt ${ev.attempt} to ${ev.target}`);
    if (ev.type === "retry") line(`↻ ${ev.target} failed (${ev.cause.message}); retrying (${ev.attempt + 1}/${ev.of}) in ${ev.delayMs} ms`);
    if (ev.type === "failover") line(`⇢ ${ev.from} failed (${ev.cause.message}); switching to ${ev.to}`);
    if (ev.type === "resume") {
      const words = shown.split(/\s+/).filter(Boolean).length;
      line(`⤳ ${ev.from} ${ev.cause.timeout === "idle" ? "stalled" : "broke"} after ${words} words (${ev.cause.message}); ${ev.mode === "continue" ? "continuing" : "restarting"} on ${ev.to}`);
    }
    if (ev.type === "warning") line(`! ${ev.target}: ${ev.message}`);
  };
  try {
    let done;
    for await (const ev of baton.stream(route, { messages: [{ role: "user", content: "Say hello in one sentence." }], maxTokens: 64 }, { onEvent })) {
      if (ev.type === "text") {
        process.stdout.write(ev.text);
        shown += ev.text;
      }
      if (ev.type === "reset") shown = "";
      if (ev.type === "done") done = ev;
    }
    const total = Math.round(performance.now() - started);
    process.stdout.write("\n");
    if (done.contributors.length > 1) console.log(`\n${bold("The answer, whole")}: ${done.text}`);
    timeline(done.legs, total);
    const by = done.contributors.length > 1 ? `${done.contributors.join(" then ")}, finished by ${bold(done.target)}` : bold(done.target);
    console.log(`\nServed by ${by} (${done.model}) in ${total} ms; finish ${done.finishReason}; answer tokens in ${done.usage.inputTokens ?? "unknown"}, out ${done.usage.outputTokens ?? "unknown"}; billed in ${done.billedUsage.inputTokens ?? "unknown"}, out ${done.billedUsage.outputTokens ?? "unknown"}.`);
  } catch (e) {
    if (!(e instanceof BatonError)) throw e;
    console.log(`\n${bold("Failed")}: ${e.kind}: ${e.message}`);
    if (e.legs) timeline(e.legs, Math.round(performance.now() - started));
    process.exitCode = 1;
  }
}

const useReal = Boolean(process.env.OPENAI_API_KEY || process.env.ANTHROPIC_API_KEY);
const { config, provider, label, resume } = useReal ? real() : await scripted();
console.log(bold("llm-baton demo") + dim(` (${label})`));
const baton = new Baton(config);
try {
  await show(baton, "chat", "1. The primary hangs before its first token: failover at the first-token limit");
  if (resume) await show(baton, "resumed", "2. The primary stalls mid-answer: the backup continues the same text (afterStart)");
} finally {
  provider?.stop();
}
