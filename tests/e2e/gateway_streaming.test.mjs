// The gateway's stream to a client that reads slowly or not at all, in Node and in workerd: the gateway must
// not buffer the whole upstream answer for it (pkg/gateway.js's OUTPUT_QUEUE_BYTES holds the
// call's reads of the upstream once that much waits), must deliver every byte in order once the
// client reads, and the call's deadline must still end a held stream on time.
//
// The upstream is a real HTTP server on loopback that writes as fast as its socket takes; the
// global fetch the wasm calls is wrapped to count the body bytes the gateway really read. The Node
// server's gateway, which reaches the upstream over node:http instead, is held to the same with
// what the upstream could write.
//
//   node --test tests/e2e/gateway_streaming.test.mjs      (make test runs it)
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";
import { Miniflare } from "miniflare";
import { connect } from "node:net";
import { createGateway } from "../../pkg/gateway/node.js";
import { serve } from "../../pkg/gateway/node-server.js";
import { OUTPUT_QUEUE_BYTES } from "../../pkg/gateway.js";
import { resolveEntry, WORKERD_CONDITIONS, WORKERD_MODULE_RULES } from "./resolve.mjs";

const repo = fileURLToPath(new URL("../../", import.meta.url));

const PIECE = "x".repeat(1000);
const event = (i) => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: `${i}:${PIECE} ` }, finish_reason: null }] })}\n\n`;
const END = `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`;
/** Events in the long answer: about 4 MB, far past the queue's limit and below the answer cap. */
const EVENTS = 4000;
const shortEvent = (i) => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: `tok${i} ` }, finish_reason: null }] })}\n\n`;
/** Events in the burst answer, as many as the gateway bench's stream. */
const BURST_EVENTS = 60;

let server;
let base;
/** Body bytes the gateway has read from the upstream, by request path. */
const pulled = new Map();
/** When the upstream saw each path's connection close. */
const closedAt = new Map();
/** Bytes the upstream's socket took, by request path. */
const written = new Map();
const realFetch = globalThis.fetch;

before(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.on("close", () => closedAt.set(req.url, performance.now()));
      // /burst/: BURST_EVENTS short events, each written on its own turn, as a provider sends
      // tokens that were ready together.
      if (req.url.startsWith("/burst/")) {
        let i = 0;
        const next = () => (i < BURST_EVENTS ? (res.write(shortEvent(i++)), setImmediate(next)) : res.end(END));
        return next();
      }
      // /long/: EVENTS events, then the end; /endless/: events until the connection closes.
      const total = req.url.startsWith("/long/") ? EVENTS : Infinity;
      let i = 0;
      const write = () => {
        while (i < total && !res.destroyed) {
          const chunk = event(i++);
          written.set(req.url, (written.get(req.url) ?? 0) + chunk.length);
          if (!res.write(chunk)) return res.once("drain", write);
        }
        if (!res.destroyed) res.end(END);
      };
      write();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${server.address().port}`;
  globalThis.fetch = countingFetch;
});
after(() => {
  globalThis.fetch = realFetch;
  server?.close();
  server?.closeAllConnections();
});

/**
 * The global fetch, with the upstream's body through a byte stream that reads it only when the
 * gateway reads, counting its bytes into `pulled`. Self-contained but for `realFetch` and
 * `pulled`, so the workerd Worker below has it as its source.
 */
async function countingFetch(input, init) {
  const res = await realFetch(input, init);
  const path = new URL(typeof input === "string" ? input : input.url).pathname;
  const reader = res.body.getReader();
  pulled.set(path, 0);
  const body = new ReadableStream({
    type: "bytes",
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      pulled.set(path, pulled.get(path) + value.byteLength);
      controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(body, { status: res.status, headers: res.headers });
}

/** The long answer's size in bytes. */
const longTotal = () => Array.from({ length: EVENTS }, (_, i) => event(i).length).reduce((a, b) => a + b, END.length);

/** `text` is the long answer as the gateway's client gets it: every delta in order, then [DONE]. */
function assertWholeLongAnswer(text) {
  const contents = [...text.matchAll(/^data: (\{.*\})$/gm)].map((m) => JSON.parse(m[1]).choices[0].delta.content ?? "");
  assert.equal(contents.join(""), Array.from({ length: EVENTS }, (_, i) => `${i}:${PIECE} `).join(""), "every delta, in order");
  assert.ok(text.endsWith("data: [DONE]\n\n"));
}

function gatewayFor(path, deadlineMs) {
  const quiet = console.warn;
  console.warn = () => {}; // the open-gateway warning
  try {
    return createGateway({ targets: { t: { format: "openai_chat", baseUrl: `${base}${path}`, model: "m", apiKey: "k" } }, deadlineMs, health: false });
  } finally {
    console.warn = quiet;
  }
}

const ask = (model) =>
  new Request("http://gw.example/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, stream: true, messages: [{ role: "user", content: "hi" }] }),
  });

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `read()` has not grown for 200 ms (or 5 s passed); returns its value. Self-contained but for `sleep`. */
async function settled(read) {
  const until = performance.now() + 5000;
  let last = read();
  for (;;) {
    await sleep(200);
    const now = read();
    if (now === last || performance.now() > until) return now;
    last = now;
  }
}

test("a client that reads nothing holds the upstream at the queue's limit, then gets every byte in order", async (t) => {
  const gateway = gatewayFor("/long/v1", 60_000);
  const res = await gateway.fetch(ask("t"));
  assert.equal(res.status, 200);
  const held = await settled(() => pulled.get("/long/v1/chat/completions") ?? 0);
  const total = longTotal();
  t.diagnostic(`the gateway read ${held} of the upstream's ${total} bytes while its client read nothing`);
  // The queue's limit, plus what one read and the byte stream above hold: far below the answer.
  assert.ok(held > 0 && held <= OUTPUT_QUEUE_BYTES + (256 << 10), `the gateway read ${held} bytes for a client that read none`);
  assert.ok(!closedAt.has("/long/v1/chat/completions"), "the upstream call stays open while held");

  assertWholeLongAnswer(await res.text());
  assert.equal(pulled.get("/long/v1/chat/completions"), total);
});

test("the deadline ends a stream held for a client that reads nothing, on time, and closes the upstream", async () => {
  const deadlineMs = 800;
  const gateway = gatewayFor("/endless/v1", deadlineMs);
  const start = performance.now();
  const res = await gateway.fetch(ask("t"));
  assert.equal(res.status, 200);
  while (!closedAt.has("/endless/v1/chat/completions") && performance.now() - start < deadlineMs + 3000) await sleep(20);
  const closed = closedAt.get("/endless/v1/chat/completions");
  assert.ok(closed !== undefined, "the upstream connection was closed");
  const late = closed - start - deadlineMs;
  // Honest margins on a loaded 2-core machine: never early, and not seconds late.
  assert.ok(late > -50 && late < 1500, `the upstream closed ${late.toFixed(0)} ms after the deadline`);
  assert.ok(pulled.get("/endless/v1/chat/completions") <= OUTPUT_QUEUE_BYTES + (256 << 10), "held at the limit until then");
  const text = await res.text();
  assert.match(text, /"error"/, "the stream ends with an error event");
  assert.ok(!text.includes("[DONE]"), "and no success marker");
});

describe("on the Node server", () => {
  // llm-baton/gateway/node-server serves a Gateway on node's own request and response and the
  // gateway reaches the upstream over node:http (pkg/gateway/node-fetch.js), unless globalThis.fetch
  // is replaced: these run with Node's own.
  before(() => {
    globalThis.fetch = realFetch;
  });
  after(() => {
    globalThis.fetch = countingFetch;
  });

  test("a client that reads nothing stops the upstream's writes; when it leaves, the upstream call is closed at once", async (t) => {
    const path = "/node-endless/v1/chat/completions";
    const running = await serve(gatewayFor("/node-endless/v1", 60_000), { port: 0 });
    const socket = connect(Number(new URL(running.url).port), "127.0.0.1");
    try {
      socket.pause();
      const body = JSON.stringify({ model: "t", stream: true, messages: [{ role: "user", content: "hi" }] });
      socket.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
      const held = await settled(() => written.get(path) ?? 0);
      await sleep(500);
      t.diagnostic(`the upstream could write ${(held / 1048576).toFixed(1)} MiB of an endless stream while the client read nothing`);
      assert.ok(held > 0, "the stream started");
      assert.equal(written.get(path), held, "the upstream kept writing while the client read nothing");
      // The queue's limit and the read-ahead, plus what four loopback socket buffers hold.
      assert.ok(held < 80 << 20, `${held} bytes written`);
      assert.ok(!closedAt.has(path), "the upstream call stays open while held");

      const left = performance.now();
      socket.destroy();
      while (!closedAt.has(path) && performance.now() - left < 2000) await sleep(10);
      assert.ok(closedAt.has(path), "the upstream call was closed after its client left");
      t.diagnostic(`closed ${(closedAt.get(path) - left).toFixed(0)} ms after the client left`);
      assert.ok(closedAt.get(path) - left < 1000);
    } finally {
      socket.destroy();
      await running.closeNow();
    }
  });
});

// The same two holds in workerd, where the client's stream is workerd's own byte stream
// (IdentityTransformStream): the Worker below runs each scenario inside one request (a stream
// belongs to the request that made it), with the same counting fetch, and answers what it saw.
describe("in workerd", () => {
  let mf;
  before(async () => {
    const dir = `${repo}tests/e2e/artifacts/gateway-streaming`;
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      `${dir}/worker.mjs`,
      `// Generated by tests/e2e/gateway_streaming.test.mjs.
import { createGateway } from "../../../../pkg/${resolveEntry(WORKERD_CONDITIONS, "./gateway").slice(2)}";
const pulled = new Map();
const realFetch = globalThis.fetch;
globalThis.fetch = ${countingFetch.toString()};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export default {
  async fetch(request) {
    const url = new URL(request.url);
    const upstream = url.searchParams.get("upstream");
    const gateway = createGateway({
      targets: { t: { format: "openai_chat", baseUrl: upstream, model: "m", apiKey: "k" } },
      deadlineMs: Number(url.searchParams.get("deadlineMs")),
      health: false,
      gateway: { apiKeys: ["gk"] },
    });
    const path = new URL(upstream).pathname + "/chat/completions";
    const start = performance.now();
    const res = await gateway.fetch(new Request("http://gw.example/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer gk" },
      body: JSON.stringify({ model: "t", stream: true, messages: [{ role: "user", content: "hi" }] }),
    }));
    const held = await (${settled.toString()})(() => pulled.get(path) ?? 0);
    // The client starts reading no sooner than readAfterMs after the request.
    await sleep(start + Number(url.searchParams.get("readAfterMs")) - performance.now());
    const text = await res.text();
    return Response.json({ status: res.status, held, text, pulled: pulled.get(path) });
  },
};
`,
    );
    mf = new Miniflare({ modules: true, modulesRoot: repo, scriptPath: `${dir}/worker.mjs`, modulesRules: WORKERD_MODULE_RULES, compatibilityDate: "2025-06-01" });
    await mf.ready;
  });
  after(async () => {
    await mf?.dispose();
  });
  const hold = async (path, deadlineMs, readAfterMs) =>
    (await mf.dispatchFetch(`http://worker.test/?upstream=${encodeURIComponent(`${base}${path}`)}&deadlineMs=${deadlineMs}&readAfterMs=${readAfterMs}`)).json();

  test("a client that reads nothing holds the upstream at the queue's limit, then gets every byte in order", async (t) => {
    const seen = await hold("/long/workerd/v1", 60_000, 0);
    assert.equal(seen.status, 200);
    t.diagnostic(`the gateway read ${seen.held} of the upstream's ${longTotal()} bytes while its client read nothing`);
    assert.ok(seen.held > 0 && seen.held <= OUTPUT_QUEUE_BYTES + (256 << 10), `the gateway read ${seen.held} bytes for a client that read none`);
    assertWholeLongAnswer(seen.text);
    assert.equal(seen.pulled, longTotal());
  });

  test("the deadline ends a stream held for a client that reads nothing, on time, and closes the upstream", async () => {
    const deadlineMs = 800;
    const start = performance.now();
    // The client reads only once the deadline has passed.
    const seen = await hold("/endless/workerd/v1", deadlineMs, deadlineMs + 1000);
    const closed = closedAt.get("/endless/workerd/v1/chat/completions");
    assert.ok(closed !== undefined, "the upstream connection was closed");
    const late = closed - start - deadlineMs;
    assert.ok(late > -50 && late < 1500, `the upstream closed ${late.toFixed(0)} ms after the deadline`);
    assert.ok(seen.pulled <= OUTPUT_QUEUE_BYTES + (256 << 10), "held at the limit until then");
    assert.match(seen.text, /"error"/, "the stream ends with an error event");
    assert.ok(!seen.text.includes("[DONE]"), "and no success marker");
  });
});

test("a burst of upstream events reaches a reading client in a few chunks, every delta in order", async (t) => {
  const gateway = gatewayFor("/burst/v1", 60_000);
  const res = await gateway.fetch(ask("t"));
  assert.equal(res.status, 200);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let chunks = 0;
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks += 1;
    text += decoder.decode(value, { stream: true });
  }
  t.diagnostic(`${BURST_EVENTS} upstream events reached the client in ${chunks} chunks`);
  const contents = [...text.matchAll(/^data: (\{.*\})$/gm)].map((m) => JSON.parse(m[1]).choices[0].delta.content ?? "");
  assert.equal(contents.join(""), Array.from({ length: BURST_EVENTS }, (_, i) => `tok${i} `).join(""), "every delta, in order");
  assert.ok(text.endsWith("data: [DONE]\n\n"));
  // What arrives within a timer turn of the last chunk goes out with the next, where one chunk
  // per read of the upstream (one per event here) would be a write to the client's socket each.
  // Node's timer turn is 1 ms, about two events apart here on a loaded 2-core machine (16 to 34
  // chunks seen under load; one chunk per read gives 60).
  assert.ok(chunks <= (BURST_EVENTS * 9) / 10, `${chunks} chunks for ${BURST_EVENTS} events`);
});
