// Cost when nothing fails, in Node: added latency per call vs a raw fetch of the same local
// answer, stream throughput vs reading the raw body, SSE parse+decode of a 10 MB stream in each format
// vs eventsource-parser + JSON.parse on identical bytes, memory per open stream, import /
// wasm instantiation time (coldstart.mjs has the package size). Writes bench/.work/cost.json.
import { mkdirSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Baton } from "llm-baton";
import OpenAI from "openai";
import { generateText } from "ai";
import { createOpenAI } from "@ai-sdk/openai";
import { createParser } from "eventsource-parser";
import { startProvider, script, stats, sleep, loadNow, KEY, MODEL, PROMPT } from "./lib/common.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));
const repo = fileURLToPath(new URL("..", import.meta.url));
const N_LATENCY = Number(process.env.BENCH_LATENCY_N ?? 300);
const out = {};
const loadAtStart = loadNow();
const log = (...a) => console.log(...a);

const provider = await startProvider();
const MESSAGES = [{ role: "user", content: PROMPT }];
const body = (stream) => JSON.stringify({ model: MODEL, messages: MESSAGES, max_tokens: 32, stream, ...(stream ? { stream_options: { include_usage: true } } : {}) });
const headers = { "content-type": "application/json", authorization: `Bearer ${KEY}` };

try {
  // ---- 1. Added latency per call ------------------------------------------------------------
  const id = await script(provider.url, "latency", [{}]);
  const base = `${provider.url}/s/${id}/v1`;
  const baton = new Baton({
    targets: { t: { format: "openai_chat", baseUrl: base, model: MODEL, apiKey: KEY, timeouts: { totalMs: 30000, headersMs: 10000, firstTokenMs: 10000, idleMs: 10000 } } },
    routes: { main: { retry: "t", attempts: 3 } },
    deadlineMs: 60000,
  });
  const oa = new OpenAI({ apiKey: KEY, baseURL: base, maxRetries: 2, timeout: 30000 });
  const aiModel = createOpenAI({ baseURL: base, apiKey: KEY }).chat(MODEL);
  const ask = { messages: MESSAGES, maxTokens: 32 };
  const contenders = {
    "raw fetch": { invoke: async () => (await (await fetch(`${base}/chat/completions`, { method: "POST", headers, body: body(false) })).json()).choices[0].message.content,
      stream: async () => { const r = await fetch(`${base}/chat/completions`, { method: "POST", headers, body: body(true) }); await r.text(); } },
    "llm-baton": { invoke: async () => (await baton.complete("main", ask)).text,
      stream: async () => { for await (const _ of baton.stream("main", ask)); } },
    openai: { invoke: async () => (await oa.chat.completions.create({ model: MODEL, messages: MESSAGES, max_tokens: 32 })).choices[0].message.content,
      stream: async () => { for await (const _ of await oa.chat.completions.create({ model: MODEL, messages: MESSAGES, max_tokens: 32, stream: true })); } },
    ai: { invoke: async () => (await generateText({ model: aiModel, prompt: PROMPT, maxOutputTokens: 32 })).text,
      stream: null },
  };
  out.latency = {};
  for (const mode of ["invoke", "stream"]) {
    const names = Object.keys(contenders).filter((n) => contenders[n][mode]);
    for (const n of names) for (let i = 0; i < 30; i++) await contenders[n][mode](); // warm-up
    const times = Object.fromEntries(names.map((n) => [n, []]));
    for (let i = 0; i < N_LATENCY; i++) {
      for (const n of names) { const t = performance.now(); await contenders[n][mode](); times[n].push(performance.now() - t); }
    }
    out.latency[mode] = Object.fromEntries(names.map((n) => [n, stats(times[n])]));
    log(`latency ${mode}:`, Object.entries(out.latency[mode]).map(([n, s]) => `${n} p50 ${s.p50.toFixed(3)} p99 ${s.p99.toFixed(3)}`).join(" | "));
  }

  // ---- 2. Stream throughput: a long answer through llm-baton vs reading the raw body ----------
  const words = Array.from({ length: 40000 }, (_, i) => `w${i % 1000}`).join(" ");
  const tid = await script(provider.url, "throughput", [{ text: words, chunks: 40000 }]);
  const tbase = `${provider.url}/s/${tid}/v1`;
  const tb = new Baton({ targets: { t: { format: "openai_chat", baseUrl: tbase, model: MODEL, apiKey: KEY, timeouts: { idleMs: 10000 } } }, routes: {} });
  const rawRead = async () => { const r = await fetch(`${tbase}/chat/completions`, { method: "POST", headers, body: body(true) }); let n = 0; for await (const c of r.body) n += c.length; return n; };
  const batonRead = async () => { let n = 0; for await (const ev of tb.stream("t", ask)) if (ev.type === "text") n += ev.text.length; return n; };
  const streamBytes = await rawRead();
  const tput = { raw: [], baton: [] };
  await batonRead();
  for (let i = 0; i < 7; i++) {
    let t = performance.now(); await rawRead(); tput.raw.push(performance.now() - t);
    t = performance.now(); await batonRead(); tput.baton.push(performance.now() - t);
  }
  out.throughput = { bytes: streamBytes, events: 40000, rawMs: stats(tput.raw), batonMs: stats(tput.baton) };
  log(`throughput: ${(streamBytes / 1e6).toFixed(1)} MB, raw p50 ${out.throughput.rawMs.p50.toFixed(1)} ms, baton p50 ${out.throughput.batonMs.p50.toFixed(1)} ms`);

  // ---- 3. SSE parse + decode of a 10 MB stream in each format, identical bytes ---------------
  // Each stream is shaped as its provider sends it (the fields of tests/fixtures/*/text.sse),
  // with short text deltas, the shape that costs a decoder most per byte.
  const frame = (event, data) => `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`;
  const usage = { promptTokenCount: 6, totalTokenCount: 6, promptTokensDetails: [{ modality: "TEXT", tokenCount: 6 }] };
  const DECODE_STREAMS = {
    openai_chat: {
      baseUrl: "http://127.0.0.1:9/v1",
      head: [],
      delta: (text) => frame(null, { id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1700000000, model: MODEL, choices: [{ index: 0, delta: { content: text }, finish_reason: null }] }),
      tail: [frame(null, { id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1700000000, model: MODEL, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }), "data: [DONE]\n\n"],
      text: (d) => d.choices?.[0]?.delta?.content,
    },
    anthropic_messages: {
      baseUrl: "http://127.0.0.1:9",
      head: [
        frame("message_start", { type: "message_start", message: { id: "msg_bench", type: "message", role: "assistant", content: [], model: MODEL, stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } }),
        frame("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
      ],
      delta: (text) => frame("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }),
      tail: [
        frame("content_block_stop", { type: "content_block_stop", index: 0 }),
        frame("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 9 } }),
        frame("message_stop", { type: "message_stop" }),
      ],
      text: (d) => (d.type === "content_block_delta" ? d.delta?.text : undefined),
    },
    openai_responses: {
      baseUrl: "http://127.0.0.1:9/v1",
      head: [
        frame("response.created", { type: "response.created", sequence_number: 0, response: { id: "resp_bench", object: "response", model: MODEL, status: "in_progress", output: [], usage: null } }),
        frame("response.output_item.added", { type: "response.output_item.added", sequence_number: 1, output_index: 0, item: { id: "msg_bench", type: "message", status: "in_progress", content: [], role: "assistant" } }),
      ],
      delta: (text, i) => frame("response.output_text.delta", { type: "response.output_text.delta", sequence_number: i + 2, item_id: "msg_bench", output_index: 0, content_index: 0, delta: text, logprobs: [] }),
      tail: [frame("response.completed", { type: "response.completed", sequence_number: 1e9, response: { id: "resp_bench", object: "response", model: MODEL, status: "completed", output: [], usage: { input_tokens: 9, output_tokens: 8, total_tokens: 17 } } })],
      text: (d) => (d.type === "response.output_text.delta" ? d.delta : undefined),
    },
    gemini: {
      baseUrl: "http://127.0.0.1:9/v1beta",
      head: [],
      delta: (text) => frame(null, { candidates: [{ content: { parts: [{ text }], role: "model" }, index: 0 }], usageMetadata: usage, modelVersion: MODEL, responseId: "bench" }),
      tail: [frame(null, { candidates: [{ content: { parts: [{ text: "" }], role: "model" }, finishReason: "STOP", index: 0 }], usageMetadata: { ...usage, candidatesTokenCount: 10, totalTokenCount: 16 }, modelVersion: MODEL, responseId: "bench" })],
      text: (d) => d.candidates?.[0]?.content?.parts?.[0]?.text,
    },
  };
  const CHUNK = 16 * 1024;
  const realFetch = globalThis.fetch;
  out.sse = {};
  try {
    for (const [format, shape] of Object.entries(DECODE_STREAMS)) {
      const chunks = [...shape.head];
      let size = 0;
      let k = 0;
      while (size < 10 * 1024 * 1024) {
        const ev = shape.delta(` token${k % 977}`, k);
        k++;
        chunks.push(ev); size += ev.length;
      }
      chunks.push(...shape.tail);
      const sse = new TextEncoder().encode(chunks.join(""));
      const pieces = [];
      for (let i = 0; i < sse.length; i += CHUNK) pieces.push(sse.subarray(i, i + CHUNK));
      const memResponse = () => new Response(new ReadableStream({ start(c) { for (const p of pieces) c.enqueue(p); c.close(); } }), { headers: { "content-type": "text/event-stream" } });
      const esp = async () => {
        let text = 0;
        const parser = createParser({ onEvent: (ev) => { if (ev.data === "[DONE]") return; const d = shape.text(JSON.parse(ev.data)); if (d) text += d.length; } });
        const dec = new TextDecoder();
        const reader = memResponse().body.getReader();
        for (;;) { const { done, value } = await reader.read(); if (done) break; parser.feed(dec.decode(value, { stream: true })); }
        return text;
      };
      const sb = new Baton({ targets: { t: { format, baseUrl: shape.baseUrl, model: MODEL, apiKey: KEY } }, routes: {} });
      const batonParse = async () => { let text = 0; for await (const ev of sb.stream("t", ask)) if (ev.type === "text") text += ev.text.length; return text; };
      globalThis.fetch = async () => memResponse(); // llm-baton calls the global fetch: hand it the same bytes
      const a = await esp(); const b = await batonParse();
      if (a !== b) throw new Error(`${format}: decoders disagree: eventsource-parser ${a} chars, llm-baton ${b}`);
      const t = { esp: [], baton: [] };
      for (let i = 0; i < 7; i++) {
        let s = performance.now(); await esp(); t.esp.push(performance.now() - s);
        s = performance.now(); await batonParse(); t.baton.push(performance.now() - s);
      }
      const parse = { bytes: sse.length, events: k, chunkBytes: CHUNK, espMs: stats(t.esp), batonMs: stats(t.baton), textChars: a };
      out.sse[format] = parse;
      log(`sse 10 MB ${format}: eventsource-parser+JSON.parse p50 ${parse.espMs.p50.toFixed(1)} ms, llm-baton p50 ${parse.batonMs.p50.toFixed(1)} ms`);
    }
  } finally {
    globalThis.fetch = realFetch;
  }

  // ---- 4. Memory held per open stream ---------------------------------------------------------
  const N_OPEN = 200;
  const held = async (label, open) => {
    const sid = await script(provider.url, `mem-${label}`, [{ text: "one two three", stallAfterEvents: 1, stallMs: 120000 }]);
    const sbase = `${provider.url}/s/${sid}/v1`;
    globalThis.gc?.(); globalThis.gc?.(); await sleep(200);
    const before = process.memoryUsage();
    const handles = [];
    for (let i = 0; i < N_OPEN; i++) handles.push(await open(sbase));
    globalThis.gc?.(); globalThis.gc?.(); await sleep(200);
    const after = process.memoryUsage();
    for (const h of handles) await h.close();
    await sleep(300);
    const per = (k) => (after[k] - before[k]) / N_OPEN;
    return { n: N_OPEN, rssKB: per("rss") / 1024, heapKB: per("heapUsed") / 1024, externalKB: per("external") / 1024 };
  };
  out.memory = {};
  out.memory["raw fetch"] = await held("raw", async (b) => {
    const ac = new AbortController();
    const r = await fetch(`${b}/chat/completions`, { method: "POST", headers, body: body(true), signal: ac.signal });
    const reader = r.body.getReader(); await reader.read();
    return { close: async () => { ac.abort(); await reader.read().catch(() => {}); } };
  });
  out.memory["llm-baton"] = await held("baton", async (b) => {
    const mb = new Baton({ targets: { t: { format: "openai_chat", baseUrl: b, model: MODEL, apiKey: KEY, timeouts: { idleMs: 600000 } } }, routes: {} });
    const it = mb.stream("t", ask)[Symbol.asyncIterator]();
    for (;;) { const { value } = await it.next(); if (value?.type === "text") break; }
    return { close: async () => { await it.return(); } };
  });
  out.memory.openai = await held("openai", async (b) => {
    const c = new OpenAI({ apiKey: KEY, baseURL: b, maxRetries: 0 });
    const ac = new AbortController();
    const s = await c.chat.completions.create({ model: MODEL, messages: MESSAGES, max_tokens: 32, stream: true }, { signal: ac.signal });
    const it = s[Symbol.asyncIterator](); await it.next();
    return { close: async () => { ac.abort(); await it.next().catch(() => {}); } };
  });
  log("memory per open stream:", JSON.stringify(out.memory));
} finally {
  provider.stop();
}

// ---- 5. Import / wasm instantiation time, each in a fresh process ---------------------------
const probe = (code) => {
  const runs = [];
  for (let i = 0; i < 7; i++) runs.push(Number(execFileSync(process.execPath, ["--input-type=module", "-e", code], { cwd: here }).toString().trim()));
  return stats(runs);
};
const wasmPath = `${repo}pkg/wasm/llm_baton_bg.wasm`;
out.startup = {
  wasmCompile: probe(`import {readFileSync} from "node:fs"; const b=readFileSync(${JSON.stringify(wasmPath)}); const t=performance.now(); new WebAssembly.Module(b); console.log(performance.now()-t)`),
  wasmInstantiate: probe(`import {readFileSync} from "node:fs"; const b=readFileSync(${JSON.stringify(wasmPath)}); const {initSync}=await import(${JSON.stringify(`${repo}pkg/wasm/llm_baton.js`)}); const t=performance.now(); initSync({module:b}); console.log(performance.now()-t)`),
  import: {},
};
for (const [name, spec] of [["llm-baton", "llm-baton"], ["openai", "openai"], ["@anthropic-ai/sdk", "@anthropic-ai/sdk"], ["ai + @ai-sdk/openai", "ai\", \"@ai-sdk/openai"]]) {
  const specs = spec.split('", "');
  out.startup.import[name] = probe(`const t=performance.now(); ${specs.map((s) => `await import(${JSON.stringify(s)});`).join(" ")} console.log(performance.now()-t)`);
}
log("startup:", JSON.stringify(out.startup, (k, v) => (typeof v === "number" ? Math.round(v * 100) / 100 : v)));

mkdirSync(`${here}.work`, { recursive: true });
writeFileSync(`${here}.work/cost.json`, JSON.stringify({ node: process.version, load: [loadAtStart, loadNow()], ...out }, null, 1));
process.exit(0);
