// How often a gateway request calls into the wasm, counted at the wasm's exports: the deployed
// gateway's fetch handler and `baton.fetch` each enter twice per request (`decide` with the
// head, `serve` with the body), a refusal once, whatever headers the request carries; the task
// loop's polls (pollTask, settleSlot) come on top, as for any Baton call. Before the gateway
// was one decision, a request made 4 to 8 such calls (corsOrigin, authorized, maxBodyBytes,
// deadlineMs, call, ...).
//
//   node --test tests/e2e/gateway_crossings.test.mjs      (make test runs it)
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { putScenario, startProvider } from "./provider.mjs";

// Every export the wasm-bindgen glue calls is counted: it instantiates through this.
const counts = new Map();
const RealInstance = WebAssembly.Instance;
WebAssembly.Instance = function CountingInstance(module, imports) {
  const real = new RealInstance(module, imports);
  const exports = {};
  for (const [name, value] of Object.entries(real.exports)) {
    exports[name] = typeof value !== "function" ? value : (...args) => {
      counts.set(name, (counts.get(name) ?? 0) + 1);
      return value(...args);
    };
  }
  return { exports };
};
const { createGateway } = await import("../../pkg/gateway/node.js");
const { Baton } = await import("../../pkg/node.js");
const { UpstreamReader } = await import("../../pkg/gateway/node-fetch.js");

/**
 * The readers the wasm reads an upstream body with: the Node gateway's over node:http, and a
 * fetch body's BYOB reader (Deno, workerd, a Baton, and the Node gateway when an app replaced
 * globalThis.fetch, as `through` does here).
 */
const READERS = [
  { name: "node:http", prototype: UpstreamReader.prototype, through: async (f) => f() },
  { name: "fetch", prototype: ReadableStreamBYOBReader.prototype, through: replacedFetch },
];

/** Runs `f` with globalThis.fetch replaced (by a pass-through), as an app's mock would. */
async function replacedFetch(f) {
  const realFetch = globalThis.fetch;
  globalThis.fetch = (input, init) => realFetch(input, init);
  try {
    return await f();
  } finally {
    globalThis.fetch = realFetch;
  }
}

/** The task loop's entries, the same for a gateway request as for a Baton call. */
const LOOP = new Set(["pollTask", "settleSlot", "cancelTask"]);

let provider;
let gateway;
let keyed;
let baton;
before(async () => {
  provider = await startProvider();
  const config = { targets: { t: { format: "openai_chat", baseUrl: `${provider.url}/s/crossings/v1`, model: "m", apiKey: "k" } } };
  const quiet = console.warn;
  console.warn = () => {}; // the open-gateway warning
  try {
    gateway = createGateway(config);
  } finally {
    console.warn = quiet;
  }
  keyed = createGateway({
    ...config,
    targets: { ...config.targets, long: { ...config.targets.t, baseUrl: `${provider.url}/s/crossings-long/v1` } },
    gateway: { apiKeys: ["gw"], cors: ["https://app.example"] },
  });
  baton = new Baton(config);
});
after(() => provider?.stop());

/**
 * The wasm entries `run` made (the second of two runs, so no one-time setup is counted), apart
 * from the wasm-bindgen glue's own helpers (`__wbindgen_malloc`...): `{ request, loop }`.
 */
async function entries(run) {
  await run();
  counts.clear();
  await run();
  const request = {};
  let loop = 0;
  for (const [name, n] of counts) {
    if (name.startsWith("__")) continue;
    if (LOOP.has(name)) loop += n;
    else request[name] = n;
  }
  return { request, loop };
}

const ask = { messages: [{ role: "user", content: "hi" }] };
const post = (url, body, headers = {}) =>
  new Request(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
const TWO = { wasmgateway_decide: 1, wasmgateway_serve: 1 };

test("a whole answer and a stream each enter the gateway's wasm twice, plus the loop a Baton call has", async (t) => {
  for (const stream of [false, true]) {
    const via = await entries(async () => {
      const res = await gateway.fetch(post("http://gw.example/v1/chat/completions", { model: "t", stream, ...ask }));
      assert.equal(res.status, 200);
      await res.text();
    });
    assert.deepEqual(via.request, TWO, `stream: ${stream}`);
    const direct = await entries(async () => {
      if (stream) for await (const _ of baton.stream("t", ask));
      else await baton.complete("t", ask);
    });
    assert.deepEqual(direct.request, { wasmbaton_start: 1 }, `stream: ${stream}`);
    // The loop's entries: each read is one settleSlot and one pollTask (a task woken by its own
    // attempt is polled again within the same pollTask: 8 -> 7 whole, 6 -> 5 streamed).
    assert.ok(via.loop <= (stream ? 5 : 7), `stream: ${stream}: ${via.loop} loop entries`);
    t.diagnostic(`stream ${stream}: gateway ${JSON.stringify(via)}, Baton ${JSON.stringify(direct)}`);
  }
});

test("the headers a request carries (a key, CORS, a deadline, an SDK's timeout) add no entry", async () => {
  const headers = { authorization: "Bearer gw", origin: "https://app.example", "x-baton-deadline-ms": "5000", "x-stainless-timeout": "30" };
  const { request } = await entries(async () => {
    const res = await keyed.fetch(post("http://gw.example/v1/messages", { model: "t", max_tokens: 10, ...ask }, headers));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("access-control-allow-origin"), "https://app.example");
    await res.text();
  });
  assert.deepEqual(request, TWO);
});

test("a refusal, a preflight and a model list are one entry each", async () => {
  const cases = [
    [post("http://gw.example/v1/chat/completions", { model: "t", ...ask }), 401],
    [new Request("http://gw.example/v1/nothing", { headers: { authorization: "Bearer gw" } }), 404],
    [new Request("http://gw.example/v1/chat/completions", { method: "OPTIONS", headers: { origin: "https://app.example" } }), 204],
    [new Request("http://gw.example/v1/models", { headers: { "x-api-key": "gw" } }), 200],
  ];
  for (const [request, status] of cases) {
    const { request: made, loop } = await entries(async () => {
      const res = await keyed.fetch(request.clone());
      assert.equal(res.status, status);
      await res.text();
    });
    assert.deepEqual([made, loop], [{ wasmgateway_decide: 1 }, 0], `${request.method} ${request.url}`);
  }
});

test("baton.fetch enters its gateway twice per request, and takes and gives its Baton's health once each", async () => {
  await baton.fetch("http://sdk.example/v1/models"); // loads the gateway's wasm for this Baton
  const { request } = await entries(async () => {
    const res = await baton.fetch(post("http://sdk.example/v1/chat/completions", { model: "t", ...ask }, { "x-stainless-timeout": "30" }));
    assert.equal(res.status, 200);
    await res.text();
  });
  // The gateway follows the Baton's breakers: it asks which targets to sync (staleTargets), takes
  // the Baton's view of them (view, absorb) and gives the Baton the request's one leg (report).
  const FOLLOW = { wasmgateway_staleTargets: 1, wasmbaton_view: 1, wasmgateway_absorb: 1, wasmbaton_report: 1 };
  assert.deepEqual(request, { ...TWO, ...FOLLOW });
});

for (const reader of READERS) test(`a stream's events that arrive together cross into the wasm together, and go out in order as one write (${reader.name})`, async (t) => {
  // 300 content events with no pause between them: the upstream's writes reach the gateway in
  // a few network reads, and each read is one settleSlot and one pollTask (a read used to cost
  // a second pollTask, its own wake-up, and a chunk output per read).
  const words = Array.from({ length: 300 }, (_, i) => `w${i}`);
  await putScenario(provider.url, "crossings-long", [{ text: words.join(" "), chunks: words.length }]);
  // The wasm reads an upstream body with a BYOB reader: its reads of the upstream's body are
  // counted here. The client's writes are no measure of them, since the gateway joins what
  // arrives while the client is busy into one write.
  const byobRead = reader.prototype.read;
  let reads = 0;
  reader.prototype.read = function countedRead(...args) {
    reads += 1;
    return byobRead.apply(this, args);
  };
  let writes = 0;
  let text = "";
  let measured;
  try {
    measured = await reader.through(() => entries(async () => {
      const res = await keyed.fetch(post("http://gw.example/v1/chat/completions", { model: "long", stream: true, ...ask }, { authorization: "Bearer gw" }));
      assert.equal(res.status, 200);
      reads = 0;
      writes = 0;
      text = "";
      const decoder = new TextDecoder();
      for await (const chunk of res.body) {
        writes += 1;
        text += decoder.decode(chunk, { stream: true });
      }
    }));
  } finally {
    reader.prototype.read = byobRead;
  }
  const { request, loop } = measured;
  assert.deepEqual(request, TWO);
  const content = [...text.matchAll(/^data: (\{.*\})$/gm)].map((m) => JSON.parse(m[1]).choices?.[0]?.delta?.content ?? "").join("");
  assert.equal(content, words.join(" "), "every delta, in the upstream's order");
  assert.ok(text.endsWith("data: [DONE]\n\n"));
  assert.ok(reads >= 1 && reads < words.length / 3, `${reads} reads of the upstream's body for ${words.length} events`);
  // Two per read the body took, and seven for the call (its start, the head, the end): a third
  // entry per read would break this at any number of reads above two.
  assert.ok(loop <= 2 * reads + 9, `loop entries ${loop} for ${reads} reads of the upstream's body`);
  // At most one write per read, and the stream's end, which goes out as the call settles (over
  // node:http all 300 events may arrive in one read: two writes).
  assert.ok(writes <= reads + 1, `${writes} writes to the client for ${reads} reads`);
  t.diagnostic(`300 events: ${reads} reads, ${loop} loop entries, ${writes} writes to the client`);
});

test("calls one after another read their bodies into the buffer an earlier one left, not a fresh 64 KiB each", async (t) => {
  // A read takes its buffer over and hands it back in its result's view; a buffer that no read
  // handed back is one the wasm allocated (and the runtime zeroed). The gateway reads over
  // node:http, the Baton a fetch body: both readers are watched.
  const handedBack = new WeakSet();
  let reads = 0;
  let fresh = 0;
  const reads0 = READERS.map(({ prototype }) => [prototype, prototype.read]);
  for (const [prototype, byobRead] of reads0) {
    prototype.read = function watchedRead(view, ...rest) {
      reads += 1;
      if (!handedBack.has(view.buffer)) fresh += 1;
      return byobRead.call(this, view, ...rest).then((result) => {
        if (result.value) handedBack.add(result.value.buffer);
        return result;
      });
    };
  }
  const run = async (stream) => {
    const res = await gateway.fetch(post("http://gw.example/v1/chat/completions", { model: "t", stream, ...ask }));
    assert.equal(res.status, 200);
    await res.text();
    if (stream) for await (const _ of baton.stream("t", ask));
    else await baton.complete("t", ask);
  };
  try {
    // Each wasm (the gateway's, the Baton's) keeps its own spares: the first call of each may
    // allocate one.
    await run(false);
    reads = 0;
    fresh = 0;
    for (const stream of [false, true, false, true]) await run(stream);
  } finally {
    for (const [prototype, byobRead] of reads0) prototype.read = byobRead;
  }
  assert.ok(reads >= 8, `${reads} reads`);
  assert.equal(fresh, 0, `${fresh} of ${reads} reads were given a fresh buffer`);
  t.diagnostic(`8 calls: ${reads} reads, ${fresh} into a fresh buffer`);
});
