// `make demo`: one streamed answer through a fallback chain whose primary hangs, with the
// attempts drawn as a timeline. With no API key it runs against the scripted provider on
// loopback; with OPENAI_API_KEY or ANTHROPIC_API_KEY set it calls that provider instead.
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
  const config = {
    targets: {
      primary: { format: "openai_chat", baseUrl: `${provider.url}/s/demo-primary/v1`, model: "gpt-4o-mini", timeouts: { firstTokenMs: 1000 } },
      backup: { format: "anthropic_messages", baseUrl: `${provider.url}/s/demo-backup/v1`, model: "claude-haiku-4-5", timeouts: { idleMs: 2000 } },
    },
    routes: { chat: { fallback: [{ retry: "primary", attempts: 1 }, "backup"] } },
    deadlineMs: 10_000,
  };
  return { config, provider, label: "scripted provider on loopback: a hung primary, a healthy backup" };
}

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

const useReal = Boolean(process.env.OPENAI_API_KEY || process.env.ANTHROPIC_API_KEY);
const { config, provider, label } = useReal ? real() : await scripted();
console.log(bold("llm-baton demo") + dim(` (${label})`));
const baton = new Baton(config);
const started = performance.now();
const onEvent = (ev) => {
  const t = `${Math.round(performance.now() - started)} ms`.padStart(8);
  if (ev.type === "attempt") console.log(dim(`${t}  → attempt ${ev.attempt} to ${ev.target}`));
  if (ev.type === "retry") console.log(dim(`${t}  ↻ ${ev.target} failed (${ev.cause.message}); retrying (${ev.attempt + 1}/${ev.of}) in ${ev.delayMs} ms`));
  if (ev.type === "failover") console.log(dim(`${t}  ⇢ ${ev.from} failed (${ev.cause.message}); switching to ${ev.to}`));
  if (ev.type === "warning") console.log(dim(`${t}  ! ${ev.target}: ${ev.message}`));
};
try {
  process.stdout.write("\n");
  let done;
  for await (const ev of baton.stream("chat", { messages: [{ role: "user", content: "Say hello in one sentence." }], maxTokens: 64 }, { onEvent })) {
    if (ev.type === "text") process.stdout.write(ev.text);
    if (ev.type === "done") done = ev;
  }
  const total = Math.round(performance.now() - started);
  process.stdout.write("\n");
  timeline(done.legs, total);
  console.log(`\nServed by ${bold(done.target)} (${done.model}) in ${total} ms; finish ${done.finishReason}; tokens in ${done.usage.inputTokens ?? "unknown"}, out ${done.usage.outputTokens ?? "unknown"}.`);
} catch (e) {
  if (!(e instanceof BatonError)) throw e;
  console.log(`\n${bold("Failed")}: ${e.kind}: ${e.message}`);
  if (e.legs) timeline(e.legs, Math.round(performance.now() - started));
  process.exitCode = 1;
} finally {
  provider?.stop();
}
