// The Node gateway's way to the providers (pkg/gateway/node-fetch.js) against Node's own fetch as
// the oracle: for the same answers from a real server, the wasm must read the same status,
// headers and bytes, whichever reader it takes; where the two differ on purpose (a cut body is an
// error, not an end), that is asserted on its own. Plus what only a gateway needs: the socket
// pauses for a reader that stops, an abort closes it, a socket is reused, a replaced fetch wins.
//
//   node --test tests/e2e/node_fetch.test.mjs      (make test runs it)
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, test } from "node:test";
import { AttemptController, fetchUpstream } from "../../pkg/gateway/node-fetch.js";

/** What the server saw of each request: `{ method, url, headers, body, port }`. */
const seen = [];
/** Per path: how the server answers. */
const routes = {
  "/json": (req, res) => {
    res.writeHead(200, { "content-type": "application/json", "x-multi": ["a", "b"], "retry-after": "3" });
    res.end(JSON.stringify({ ok: true, text: "é".repeat(100) }));
  },
  "/chunked": (req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    let n = 0;
    const tick = () => {
      if (n === 20) return res.end("data: [DONE]\n\n");
      res.write(`data: {"n":${n++}}\n\n`);
      setImmediate(tick);
    };
    tick();
  },
  "/empty": (req, res) => {
    res.writeHead(204);
    res.end();
  },
  "/status": (req, res) => {
    res.writeHead(429, { "retry-after-ms": "250", "content-type": "application/json" });
    res.end('{"error":{"message":"slow down"}}');
  },
  "/307": (req, res) => {
    res.writeHead(307, { location: "/echo" });
    res.end();
  },
  "/303": (req, res) => {
    res.writeHead(303, { location: "/echo" });
    res.end();
  },
  "/away": (req, res) => {
    res.writeHead(307, { location: `${other}/echo` });
    res.end();
  },
  "/loop": (req, res) => {
    res.writeHead(302, { location: "/loop" });
    res.end();
  },
  "/echo": (req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(seen.at(-1)));
  },
  "/cut": (req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write('data: {"n":0}\n\n');
    setTimeout(() => res.socket.destroy(), 20);
  },
  "/hang": (req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write('data: {"n":0}\n\n');
    hanging.push(res);
  },
  "/reset": (req, res) => {
    // Read, never answered: the connection is reset before any header (docs/errors.md).
    req.socket.resetAndDestroy();
  },
  "/big": (req, res) => {
    // BIG_BYTES offered as fast as the socket takes it; the bytes the socket took are counted.
    res.writeHead(200, { "content-type": "application/octet-stream" });
    big = { written: 0, done: false };
    const chunk = Buffer.alloc(64 << 10, 120);
    const more = () => {
      while (big.written < BIG_BYTES) {
        big.written += chunk.length;
        if (!res.write(chunk)) return res.once("drain", more);
      }
      big.done = true;
      res.end();
    };
    more();
  },
};
const hanging = [];
let big;
/** Far more than loopback's socket buffers can hold (here up to 32 MiB received + 4 MiB sent). */
const BIG_BYTES = 128 << 20;
const SOCKET_BUFFERS_BYTES = 48 << 20;
let server;
let otherServer;
let base;
let other;

function listen(handler) {
  return new Promise((resolve) => {
    const s = createServer(handler);
    s.listen(0, "127.0.0.1", () => resolve(s));
  });
}

before(async () => {
  server = await listen((req, res) => {
    const parts = [];
    req.on("data", (c) => parts.push(c));
    req.on("end", () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(parts).toString(), port: req.socket.remotePort });
      (routes[req.url] ?? ((_, r) => r.writeHead(404).end()))(req, res);
    });
  });
  otherServer = await listen((req, res) => {
    const parts = [];
    req.on("data", (c) => parts.push(c));
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ method: req.method, headers: req.headers, body: Buffer.concat(parts).toString() }));
    });
  });
  base = `http://127.0.0.1:${server.address().port}`;
  other = `http://127.0.0.1:${otherServer.address().port}`;
});
after(() => {
  for (const res of hanging) res.destroy();
  server?.closeAllConnections();
  server?.close();
  otherServer?.closeAllConnections();
  otherServer?.close();
});

/** An init as the wasm makes one (src/driver/attempt.rs): headers as an object, a string body. */
const init = (controller, extra = {}) => ({
  method: "POST",
  headers: { "content-type": "application/json", authorization: "Bearer sk-test" },
  body: '{"model":"m"}',
  signal: controller.signal,
  ...extra,
});

/** Everything the wasm reads of a response: status, the headers it asks for, the body's bytes. */
async function read(response, byob) {
  const headers = {};
  for (const name of ["content-type", "retry-after", "retry-after-ms", "x-multi", "x-absent", "Content-Type"]) {
    headers[name] = [response.headers.has(name), response.headers.get(name)];
  }
  const bytes = [];
  if (response.body) {
    const reader = response.body.getReader(byob ? { mode: "byob" } : undefined);
    let buffer = new ArrayBuffer(1024);
    for (;;) {
      const { done, value } = await reader.read(byob ? new Uint8Array(buffer) : undefined);
      if (byob) buffer = value.buffer;
      if (done) break;
      bytes.push(...value);
    }
  }
  return { status: response.status, headers, body: response.body === null ? null : Buffer.from(bytes).toString() };
}

for (const byob of [false, true]) {
  for (const path of ["/json", "/chunked", "/empty", "/status"]) {
    test(`${path} reads as Node's fetch reads it (${byob ? "BYOB" : "default"} reader)`, async () => {
      const ours = await read(await fetchUpstream(`${base}${path}`, init(new AttemptController())), byob);
      const theirs = await read(await fetch(`${base}${path}`, init(new AbortController())), byob);
      assert.deepEqual(ours, theirs);
    });
  }
}

test("arrayBuffer() gives the whole body, as with fetch (a Vertex token's answer is read so)", async () => {
  for (const path of ["/json", "/chunked", "/empty"]) {
    const ours = Buffer.from(await (await fetchUpstream(`${base}${path}`, init(new AttemptController()))).arrayBuffer());
    const theirs = Buffer.from(await (await fetch(`${base}${path}`, init(new AbortController()))).arrayBuffer());
    assert.equal(ours.toString(), theirs.toString(), path);
  }
});

test("HEAD has no body, as with fetch", async () => {
  const ours = await fetchUpstream(`${base}/json`, { method: "HEAD", headers: {}, signal: new AttemptController().signal });
  assert.equal(ours.status, 200);
  assert.equal(ours.body, null);
});

test("redirects are followed as fetch follows them: 307 keeps the method and body, 303 turns them into a GET", async () => {
  for (const path of ["/307", "/303"]) {
    const ours = JSON.parse((await read(await fetchUpstream(`${base}${path}`, init(new AttemptController())))).body);
    const theirs = JSON.parse((await read(await fetch(`${base}${path}`, init(new AbortController())))).body);
    const view = (r) => ({ method: r.method, url: r.url, body: r.body, type: r.headers["content-type"], auth: r.headers.authorization });
    assert.deepEqual(view(ours), view(theirs), path);
  }
});

test("a redirect to another origin carries no Authorization header, as with fetch", async () => {
  const ours = JSON.parse((await read(await fetchUpstream(`${base}/away`, init(new AttemptController())))).body);
  const theirs = JSON.parse((await read(await fetch(`${base}/away`, init(new AbortController())))).body);
  assert.equal(ours.headers.authorization, undefined);
  assert.equal(theirs.headers.authorization, undefined);
  assert.equal(ours.body, theirs.body);
});

test("a redirect loop rejects after 20, as fetch does", async () => {
  await assert.rejects(fetchUpstream(`${base}/loop`, init(new AttemptController())), /more than 20 redirects/);
  await assert.rejects(fetch(`${base}/loop`, init(new AbortController())));
});

test("a body cut before its end is an error, not an end", async () => {
  const response = await fetchUpstream(`${base}/cut`, init(new AttemptController()));
  const reader = response.body.getReader();
  assert.equal(Buffer.from((await reader.read()).value).toString(), 'data: {"n":0}\n\n');
  await assert.rejects(reader.read(), /terminated/);
});

test("an abort before the answer rejects with an AbortError; after it, the pending read rejects and the socket closes", async () => {
  const early = new AttemptController();
  const pending = fetchUpstream(`${base}/hang`, init(early));
  early.abort();
  await assert.rejects(pending, { name: "AbortError" });

  const controller = new AttemptController();
  const response = await fetchUpstream(`${base}/hang`, init(controller));
  const reader = response.body.getReader();
  await reader.read();
  const read = reader.read();
  const served = hanging.at(-1);
  const closed = new Promise((resolve) => served.on("close", resolve));
  controller.abort();
  await assert.rejects(read, { name: "AbortError" });
  await closed;
});

test("a reader that stops reading stops the socket: the server can write no more than the socket buffers hold", async () => {
  const response = await fetchUpstream(`${base}/big`, init(new AttemptController()));
  const reader = response.body.getReader({ mode: "byob" });
  let buffer = new ArrayBuffer(64 << 10);
  const first = await reader.read(new Uint8Array(buffer));
  buffer = first.value.buffer;
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  await sleep(300);
  const stalled = big.written;
  await sleep(200);
  assert.equal(big.written, stalled, "the server wrote on while nobody read");
  assert.ok(stalled < SOCKET_BUFFERS_BYTES, `the server wrote ${stalled} of ${BIG_BYTES} bytes to a reader that read one chunk`);
  let total = first.value.byteLength;
  for (;;) {
    const { done, value } = await reader.read(new Uint8Array(buffer));
    if (done) break;
    total += value.byteLength;
    buffer = value.buffer;
  }
  assert.equal(total, BIG_BYTES, "every byte once reading resumed");
});

test("requests one after another share one keep-alive socket", async () => {
  const ports = [];
  for (let i = 0; i < 3; i++) {
    await read(await fetchUpstream(`${base}/json`, init(new AttemptController())));
    ports.push(seen.at(-1).port);
  }
  assert.equal(new Set(ports).size, 1, `ports ${ports}`);
});

test("a reused connection reset before the answer's headers fails the attempt, and the request is not sent again", async () => {
  await read(await fetchUpstream(`${base}/json`, init(new AttemptController())));
  const port = seen.at(-1).port;
  const before = seen.length;
  await assert.rejects(fetchUpstream(`${base}/reset`, init(new AttemptController())), /ECONNRESET|socket hang up/);
  const resets = seen.slice(before).filter((r) => r.url === "/reset");
  assert.equal(resets.length, 1, "the provider got the request once");
  assert.equal(resets[0].port, port, "on the kept-alive connection");
});

test("an invalid header value rejects, as fetch rejects, and throws nothing", async () => {
  const bad = { ...init(new AttemptController()), headers: { "x-bad": "a\r\nb" } };
  let promise;
  assert.doesNotThrow(() => {
    promise = fetchUpstream(`${base}/json`, bad);
  });
  await assert.rejects(promise);
});

test("an app's replaced globalThis.fetch sends the attempt, with a real AbortSignal that follows the attempt's", async () => {
  const realFetch = globalThis.fetch;
  let given;
  globalThis.fetch = (url, options) => {
    given = options.signal;
    return realFetch(url, options);
  };
  try {
    const controller = new AttemptController();
    const response = await fetchUpstream(`${base}/json`, init(controller));
    assert.ok(response instanceof Response);
    assert.ok(given instanceof AbortSignal);
    assert.equal(given.aborted, false);
    controller.abort();
    assert.equal(given.aborted, true);
  } finally {
    globalThis.fetch = realFetch;
  }
});
