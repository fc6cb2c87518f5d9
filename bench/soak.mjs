// make soak (issue 41): a soak under load with faults. 32 clients send SOAK_REQUESTS requests
// (default 3,000) through each of llm-baton's gateway in Deno and workerd (Miniflare), a Baton
// in this Node process, Portkey's gateway and LiteLLM proxy, and SOAK_RSS_REQUESTS (default
// 20,000) through llm-baton's Node gateway, whose resident memory is sampled after every 1,000;
// all against the scripted provider injecting faults. The fault mix, the clients (10% of
// streaming clients disconnect mid-answer, 3% send bad input) and what is checked on every
// request are tests/e2e/soak.mjs's, which `make test` runs 300 requests of and asserts
// (tests/e2e/soak.test.mjs); here they are measured, the peers with the same route (a primary
// tried twice, then a backup, with the same limits where the peer has them), and written to
// bench/.work/soak.json and the soak section of bench/RESULTS.md.
// `node soak.mjs deno portkey` runs only those rows (the section keeps the others' last figures;
// `node soak.mjs none` runs none and writes the section again).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Baton, BatonError } from "llm-baton";
import { loadNow, SOAK_CLOSE, SOAK_OPEN } from "./lib/common.mjs";
import { rssMiB } from "./lib/gateway-load.mjs";
import { LITELLM_KEY, litellmDeployment, litellmVersion, portkeyVersion, startLitellm, startPortkey, withWorkerdPid } from "./lib/servers.mjs";
import { startProvider } from "../tests/e2e/provider.mjs";
import { startDenoGateway, startNodeGateway, startWorkerdGateway } from "../tests/e2e/gateway_hosts.mjs";
import { abortStats, batonClient, DEADLINE_MS, FAULTS, HANG_MARGIN_MS, httpClient, runSoak, soakConfig } from "../tests/e2e/soak.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));
const repo = fileURLToPath(new URL("..", import.meta.url));
const REQUESTS = Number(process.env.SOAK_REQUESTS ?? 3000);
const RSS_REQUESTS = Number(process.env.SOAK_RSS_REQUESTS ?? 20_000);
const CLIENTS = 32;
const CHUNK = 1000;
/** How long the provider's requests get to end after each chunk's last client, before the open ones count as leaked: Deno's late closes (issue 41 item 3) take up to 6 s. */
const SETTLE_MS = 10_000;
const KEY = "sk-soak-not-a-secret";
const only = process.argv.slice(2);

/** Portkey's route: the primary retried once on 429 and 5xx, then the backup; 1.5 s per request as llm-baton's headersMs. */
const portkeyConfig = (base) => JSON.stringify({
  strategy: { mode: "fallback" },
  targets: [
    { provider: "openai", api_key: KEY, custom_host: base, request_timeout: 1500, retry: { attempts: 1, on_status_codes: [429, 500, 502, 503, 504] } },
    { provider: "openai", api_key: KEY, custom_host: base, request_timeout: 1500 },
  ],
});

/** LiteLLM's: the model group `chat` retried once, falling back to `b`; 1.5 s timeouts (whole and streamed) as llm-baton's limits. */
const litellmYaml = (base) => {
  const limits = "      timeout: 1.5\n      stream_timeout: 1.5\n";
  return `model_list:\n${litellmDeployment("chat", base, KEY, limits)}${litellmDeployment("b", base, KEY, limits)}` +
    `router_settings:\n  num_retries: 1\n  fallbacks: [{"chat": ["b"]}]\n` +
    `litellm_settings:\n  telemetry: false\n  drop_params: true\n`;
};

const miniflareVersion = () => `miniflare ${JSON.parse(readFileSync(`${repo}node_modules/miniflare/package.json`, "utf8")).version}`;
const denoVersion = () => execFileSync(`${repo}node_modules/.bin/deno`, ["--version"]).toString().split(" ").slice(0, 2).join(" ");

/** Each row: how to start it on the provider's scenario at `base`, and its client. */
const ROWS = {
  node: { label: "llm-baton gateway (Node)", requests: RSS_REQUESTS, start: (base) => startNodeGateway(soakConfig(base)), client: (gw) => httpClient({ url: gw.url }), version: () => `Node ${process.version}` },
  deno: { label: "llm-baton gateway (Deno)", start: (base) => startDenoGateway(soakConfig(base)), client: (gw) => httpClient({ url: gw.url }), version: denoVersion },
  workerd: { label: "llm-baton gateway (workerd, Miniflare)", start: (base) => withWorkerdPid(() => startWorkerdGateway(soakConfig(base))), client: (gw) => httpClient({ url: gw.url }), version: miniflareVersion },
  baton: { label: "Baton in Node (in the bench's process: its RSS counts the clients too)", start: async (base) => ({ pid: process.pid, baton: new Baton(soakConfig(base)), stop: () => {} }), client: (gw) => batonClient({ baton: gw.baton, BatonError }), version: () => `Node ${process.version}` },
  portkey: { label: "Portkey gateway", peer: true, start: () => startPortkey(), client: (gw, base) => httpClient({ url: gw.url, model: "soak-model", headers: { "x-portkey-config": portkeyConfig(base) } }), version: portkeyVersion },
  litellm: { label: "LiteLLM proxy", peer: true, start: (base) => startLitellm(litellmYaml(base), "litellm-soak.yaml"), client: (gw) => httpClient({ url: gw.url, model: "chat", headers: { authorization: `Bearer ${LITELLM_KEY}` } }), version: litellmVersion },
};

const mib = (x) => Math.round(x * 10) / 10;
const outPath = `${here}.work/soak.json`;
const out = existsSync(outPath) ? JSON.parse(readFileSync(outPath, "utf8")) : { rows: {} };
Object.assign(out, { node: process.version, clients: CLIENTS, deadlineMs: DEADLINE_MS, hangAfterMs: DEADLINE_MS + HANG_MARGIN_MS, faults: FAULTS.map(([name, weight]) => [name, weight]) });
const provider = await startProvider();
try {
  for (const [key, row] of Object.entries(ROWS)) {
    if (only.length > 0 && !only.includes(key)) continue;
    const scenario = `soak-${key}`;
    const base = `${provider.url}/s/${scenario}/v1`;
    const requests = row.requests ?? REQUESTS;
    const result = { label: row.label, peer: Boolean(row.peer), load: [loadNow()] };
    out.rows[key] = result;
    let gw;
    try {
      gw = await row.start(base);
    } catch (e) {
      result.skip = `did not start: ${String(e.message).slice(0, 300)}`;
    }
    if (gw?.skip) result.skip = gw.skip;
    if (result.skip) {
      console.log(`${key}: skipped: ${result.skip}`);
      continue;
    }
    try {
      result.version = row.version();
      const rss = [];
      const t0 = performance.now();
      const t = await runSoak({
        providerUrl: provider.url, scenario, client: row.client(gw, base), requests, clients: CLIENTS, chunk: CHUNK, seed: 41, settleMs: SETTLE_MS,
        onChunk: (sofar, done) => {
          if (gw.pid != null) rss.push([done, mib(rssMiB(gw.pid))]);
          console.log(`${key}: ${done} requests, ${sofar.exact} exact, ${sofar.error} errors, ${sofar.truncated} truncated, ${sofar.hang} hangs, ${sofar.leaked} leaked${rss.length ? `, RSS ${rss[rss.length - 1][1]} MiB` : ""}`);
        },
      });
      Object.assign(result, t, { abortMs: abortStats(t.abortMs), rss, seconds: Math.round((performance.now() - t0) / 1000) });
    } finally {
      await gw.stop();
    }
    result.load.push(loadNow());
  }
} finally {
  provider.stop();
}
mkdirSync(`${here}.work`, { recursive: true });
writeFileSync(outPath, JSON.stringify(out, null, 1));

// ---- The section in RESULTS.md ----------------------------------------------------------------
const ms = (x) => (x === null || x === undefined ? "–" : `${Math.round(x)}`);
const lines = [SOAK_OPEN, `## 8. A soak under load with faults (issue 41, Node ${out.node})`, ``,
  `Written by \`make soak\` (bench/soak.mjs) on ${new Date().toISOString().replace(/\.\d+Z$/, "Z")}; \`make bench\` keeps it. ` +
  `${out.clients} clients at once per row, each request a nonce the provider echoes (its text is a function of the request), through each gateway to the scripted provider, whose answers are drawn from this fault mix (weights, per provider request): ` +
  `${out.faults.map(([name, weight]) => `${name} ${weight}`).join(", ")}. Mid-answer faults come after 3 content events of a stream or 3 of a whole answer's 10 pieces. ` +
  `10% of streaming clients disconnect after their first text, 3% of requests are bad input. llm-baton's route: a primary tried twice, then a backup, deadline ${out.deadlineMs} ms, headersMs and firstTokenMs 1,500, idleMs 1,000; Portkey's and LiteLLM's the same route with their own retry, fallback and 1.5 s timeouts. ` +
  `A request with no end ${out.hangAfterMs / 1000} s after it was sent is a hang. The invariants are asserted on 300 requests per runtime by \`make test\` (tests/e2e/soak.test.mjs); here they are measured, the peers too.`, ``,
  `| runtime / peer | requests | exact 200s | explicit errors | truncated successes | hangs | duplicate or interleaved text | cut without an error | leaked upstreams | disconnects: their open upstream requests ended after p50 / p99 / max (ms) | bad input refused with a JSON 4xx / sent upstream | provider requests vs counted attempts: mismatches (checked) | RSS after warm-up -> end (MiB) |`,
  `|---|---|---|---|---|---|---|---|---|---|---|---|---|`];
// Labels from ROWS, so a change of wording shows on a re-render (`node soak.mjs none` runs no row).
for (const [key, r] of Object.entries(out.rows)) r.label = ROWS[key]?.label ?? r.label;
for (const r of Object.values(out.rows)) {
  if (r.skip) { lines.push(`| ${r.label} | skipped: ${r.skip} | | | | | | | | | | | |`); continue; }
  // After warm-up: the sample at a quarter of the run (the wasm's memory and V8's heap grow to
  // their working size over the first few thousand requests), then the last.
  const warm = r.rss.find(([done]) => done >= r.requests / 4);
  const rss = warm ? `${warm[1]} (at ${warm[0]}) -> ${r.rss[r.rss.length - 1][1]}` : "–";
  const attempts = r.attemptChecks ? `${r.attemptMismatches} (${r.attemptChecks})` : "no attempt count";
  lines.push(`| ${r.label} (${r.version}) | ${r.requests} | ${r.exact} | ${r.error} | ${r.truncated} | ${r.hang} | ${r.garbled} | ${r.cut} | ${r.leaked} | ${r.disconnected} disconnects: ${ms(r.abortMs.p50)} / ${ms(r.abortMs.p99)} / ${ms(r.abortMs.max)}${r.abortMs.open ? `, and ${r.abortMs.open} never ended` : ""}; ${r.ranOn} not closed by the gateway (ended by the provider's script first) | ${r.badRefused}/${r.bad} / ${r.sentAfterBadInput} | ${attempts} | ${rss} |`);
}
lines.push(``, `Each row's time and load (the 1-minute load average at its start -> end): ${Object.values(out.rows).filter((r) => !r.skip).map((r) => `${r.label} ${r.seconds} s, ${r.load.join(" -> ")}`).join("; ")}.`, ``);
const rssRow = out.rows.node;
if (rssRow?.rss?.length) lines.push(`RSS of the Node gateway after every 1,000 requests (MiB): ${rssRow.rss.map(([, m]) => m).join(", ")}.`, ``);
const slow = Object.values(out.rows).filter((r) => r.slowAborts?.length);
if (slow.length) lines.push(`Disconnects whose upstream took longer than 250 ms to end, with the faults of their provider requests (at most 10 a row): ${slow.map((r) => `${r.label}: ${r.slowAborts.map((a) => `${a.ms} ms (${a.faults.join(", ")})`).join("; ")}`).join(". ")}.`, ``);
const leaky = Object.values(out.rows).filter((r) => r.leaks?.length);
if (leaky.length) lines.push(`Provider requests still open ${SETTLE_MS / 1000} s after their chunk's last client was done, with their fault and what their client saw (at most 10 a row): ${leaky.map((r) => `${r.label}: ${r.leaks.map((l) => `${l.fault} (${l.client ?? "no nonce"})`).join("; ")}`).join(". ")}.`, ``);
lines.push(SOAK_CLOSE);
const resultsPath = `${here}RESULTS.md`;
const previous = existsSync(resultsPath) ? readFileSync(resultsPath, "utf8") : "";
const [before, after] = [previous.indexOf(SOAK_OPEN), previous.indexOf(SOAK_CLOSE)];
const next = before >= 0 && after > before
  ? previous.slice(0, before) + lines.join("\n") + previous.slice(after + SOAK_CLOSE.length)
  : `${previous.replace(/\n*$/, "\n\n")}${lines.join("\n")}\n`;
writeFileSync(resultsPath, next);
console.log(`wrote ${outPath} and the soak section of ${resultsPath}`);
process.exit(0);
