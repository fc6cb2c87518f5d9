// Deadlines under load, the same code in every runtime: `n` calls started together on a provider
// that never sends its headers, each with deadlineMs `deadlineMs`, so all their deadlines expire
// at once. Lateness = when a call settled minus its own start plus the deadline, measured with
// performance.now() in the runtime. Alongside, `n` bare setTimeouts of the same length started
// together: what the runtime's timers give under the same fan-out, without llm-baton.

const ASK = { messages: [{ role: "user", content: "Say hello." }], maxTokens: 32 };
/** Rounds per level: enough samples at 1 call, without running 300 stalls many times. */
const ROUNDS = { 1: 30, 50: 4, 300: 2 };

async function scenario(providerUrl, id, method = "GET", steps) {
  const res = await fetch(`${providerUrl}/_scenarios/${id}`, method === "PUT"
    ? { method, headers: { "content-type": "application/json" }, body: JSON.stringify({ steps }) }
    : {});
  if (!res.ok) throw new Error(`${method} /_scenarios/${id}: ${res.status}`);
  return res.json();
}

/** Waits (at most 3 s) until the provider has seen every request of the scenario end. */
async function drained(providerUrl, id) {
  const until = performance.now() + 3000;
  for (;;) {
    const r = await scenario(providerUrl, id);
    if (r.open === 0 || performance.now() > until) return r;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export async function deadlinesUnderLoad({ Baton, providerUrl, runtime, levels = [1, 50, 300], deadlineMs = 500 }) {
  const result = {};
  for (const n of levels) {
    const id = `load-${runtime}-${n}-${Date.now().toString(36)}`;
    await scenario(providerUrl, id, "PUT", [{ headersDelayMs: 600000 }]);
    const baton = new Baton({ targets: { t: { format: "openai_chat", baseUrl: `${providerUrl}/s/${id}/v1`, model: "scripted-model", apiKey: "sk-bench" } } });
    const late = [];
    const wrong = [];
    const one = async () => {
      const t0 = performance.now();
      try {
        await baton.complete("t", ASK, { deadlineMs });
        wrong.push("succeeded");
      } catch (e) {
        late.push(performance.now() - t0 - deadlineMs);
        if (e.kind !== "timeout" || e.timeout !== "deadline") wrong.push(`${e.kind}/${e.timeout}: ${e.message}`);
      }
    };
    for (let round = 0; round < (ROUNDS[n] ?? 1); round += 1) {
      await Promise.all(Array.from({ length: n }, one));
      await drained(providerUrl, id);
    }
    const timers = [];
    await Promise.all(Array.from({ length: n }, () => new Promise((resolve) => {
      const t0 = performance.now();
      setTimeout(() => {
        timers.push(performance.now() - t0 - deadlineMs);
        resolve();
      }, deadlineMs);
    })));
    const report = await drained(providerUrl, id);
    result[n] = { late, timers, wrong: wrong.slice(0, 3), wrongCount: wrong.length, requests: report.requests, clientClosed: report.clientClosed, open: report.open };
  }
  return result;
}
