// The gateway's added latency per request: the median of N sequential non-streamed requests
// through the gateway (workerd, Deno and the Node command) against the same requests sent straight to the
// scripted provider. A benchmark, not an assertion: it prints the figures.
//
//   node tests/e2e/gateway_latency.mjs [N]      (default 200; make test runs it)
import { startProvider } from "./provider.mjs";
import { startDenoGateway, startNodeGateway, startWorkerdGateway } from "./gateway_hosts.mjs";

const N = Number(process.argv[2] ?? 200);
const WARMUP = 20;
const body = (model) => JSON.stringify({ model, messages: [{ role: "user", content: "Say hello" }] });

async function timeRequests(url, model) {
  const once = async () => {
    const t0 = performance.now();
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: body(model) });
    const answer = await res.json();
    if (res.status !== 200 || !answer.choices) throw new Error(`${url} answered ${res.status}: ${JSON.stringify(answer)}`);
    return performance.now() - t0;
  };
  for (let i = 0; i < WARMUP; i += 1) await once();
  const times = [];
  for (let i = 0; i < N; i += 1) times.push(await once());
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(N / 2)], p90: times[Math.floor(N * 0.9)] };
}

const provider = await startProvider();
try {
  const config = {
    targets: { lat: { format: "openai_chat", baseUrl: `${provider.url}/s/latency/v1`, model: "m", apiKey: "sk-bench" } },
    deadlineMs: 10000,
  };
  const direct = await timeRequests(`${provider.url}/s/latency/v1/chat/completions`, "m");
  const fmt = (t) => `median ${t.median.toFixed(2)} ms, p90 ${t.p90.toFixed(2)} ms`;
  console.log(`gateway latency, ${N} sequential non-streamed requests (after ${WARMUP} warm-up):`);
  console.log(`  direct to the provider: ${fmt(direct)}`);
  for (const [host, start] of [["workerd", startWorkerdGateway], ["deno", startDenoGateway], ["node", startNodeGateway]]) {
    const gw = await start(config);
    try {
      const via = await timeRequests(`${gw.url}/v1/chat/completions`, "lat");
      console.log(`  via the gateway in ${host}: ${fmt(via)}; added median ${(via.median - direct.median).toFixed(2)} ms`);
    } finally {
      await gw.stop();
    }
  }
} finally {
  provider.stop();
}
