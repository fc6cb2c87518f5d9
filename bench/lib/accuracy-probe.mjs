// Limit accuracy, the same code in every runtime (Node, Deno, workerd, Chromium): only fetch,
// setTimeout, performance.now() and the llm-baton API. For each limit kind, `calls` calls whose
// provider stalls well past the limit; lateness = when the call settled minus when the limit was
// due (for `idle`, counted from the first text event). Calls run `concurrency` at a time.

const KINDS = {
  headers: { step: { headersDelayMs: 5000 }, timeouts: (l) => ({ headersMs: l }), stream: false },
  total: { step: { dripMs: 5000, text: "a body that drips for five seconds, far past the limit" }, timeouts: (l) => ({ totalMs: l }), stream: false },
  first_token: { step: { firstChunkDelayMs: 5000 }, timeouts: (l) => ({ firstTokenMs: l }), stream: true },
  idle: { step: { text: "one two three", stallAfterEvents: 1, stallMs: 5000 }, timeouts: (l) => ({ idleMs: l }), stream: true },
  deadline: { step: { headersDelayMs: 5000 }, timeouts: () => undefined, stream: false, deadline: true },
};

export async function accuracy({ Baton, providerUrl, runtime, calls = 100, limitMs = 200, concurrency = 4, kinds = Object.keys(KINDS) }) {
  const result = {};
  for (const kind of kinds) {
    const k = KINDS[kind];
    const id = `acc-${runtime}-${kind}-${Date.now().toString(36)}`;
    const put = await fetch(`${providerUrl}/_scenarios/${id}`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ steps: [k.step] }) });
    if (!put.ok) throw new Error(`PUT ${id}: ${put.status}`);
    await put.arrayBuffer();
    const timeouts = k.timeouts(limitMs);
    const baton = new Baton({
      targets: { t: { format: "openai_chat", baseUrl: `${providerUrl}/s/${id}/v1`, model: "scripted-model", apiKey: "sk-bench", ...(timeouts ? { timeouts } : {}) } },
      routes: {},
      // Every call here times out on purpose: with health on, the breaker would open after five
      // and the rest would be refused at once, measuring the breaker instead of the limit.
      health: false,
    });
    const ask = { messages: [{ role: "user", content: "Say hello." }], maxTokens: 32 };
    const late = [];
    const wrong = [];
    const one = async () => {
      const opts = k.deadline ? { deadlineMs: limitMs } : {};
      const t0 = performance.now();
      let from = t0;
      try {
        if (k.stream) {
          for await (const ev of baton.stream("t", ask, opts)) if (ev.type === "text" && from === t0) from = performance.now();
        } else {
          await baton.complete("t", ask, opts);
        }
        wrong.push("succeeded");
      } catch (e) {
        const at = performance.now();
        const want = k.deadline ? "deadline" : kind;
        if (e.kind !== "timeout" || e.timeout !== want) wrong.push(`${e.kind}/${e.timeout}: ${e.message}`);
        late.push(at - from - limitMs);
      }
    };
    for (let i = 0; i < calls; i += concurrency) {
      await Promise.all(Array.from({ length: Math.min(concurrency, calls - i) }, one));
    }
    const report = await (await fetch(`${providerUrl}/_scenarios/${id}`)).json();
    result[kind] = { late, wrong: wrong.slice(0, 3), wrongCount: wrong.length, requests: report.requests, clientClosed: report.clientClosed, open: report.open };
  }
  return result;
}
