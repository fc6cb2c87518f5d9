// What only the Node host of the gateway does (the shared gateway suites run against it too):
// the llm-baton-gateway command's flags, config sources and refusals, its SIGTERM drain and
// second-signal exit, and llm-baton/gateway/node-server's serve(): backpressure toward a slow
// reader, a disconnect aborting the Request's signal, keep-alive, the request body cap on a
// streamed upload. Every server is a real process or a real socket on loopback, in front of the
// scripted provider.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { connect } from "node:net";
import { fileURLToPath } from "node:url";
import { createGateway } from "llm-baton/gateway";
import { configFromEnv } from "llm-baton/gateway/env";
import { serve } from "llm-baton/gateway/node-server";
import { chatSseText } from "./calls.mjs";
import { putScenario, startProvider, upstream } from "./provider.mjs";
import { BIN, cleanEnv, start as startCommand } from "./gateway_command.mjs";

const repo = fileURLToPath(new URL("../../", import.meta.url));
const dir = `${repo}tests/e2e/artifacts/gateway-node-only`;
const KEY = "gw-node-key";
const SECRET = `sk-node-secret-${Math.random().toString(36).slice(2, 10)}`;
const ASK = [{ role: "user", content: "Say hello" }];
const SLACK_MS = 500;

mkdirSync(dir, { recursive: true });

function file(name, text) {
  const path = `${dir}/${name}`;
  writeFileSync(path, text);
  return path;
}

/** The command run to its end with `args` and `env` added: `{ status, stdout, stderr }`. */
function run(args, env = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: dir, env: cleanEnv(env), encoding: "utf8", timeout: 20_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The command started with `args` and `env` added (gateway_command.mjs's `start`, in this suite's directory). */
const start = (args, env = {}) => startCommand(dir, args, env, { timeoutMs: 10_000 });

function post(url, body, headers = {}) {
  return fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A line of stderr that looks like a stack trace frame. */
const STACK_FRAME = /^\s+at .+[:(]/m;

function assertRefusal(r, code, message) {
  assert.equal(r.status, code, `exit status; stderr: ${r.stderr}`);
  assert.equal(r.stdout, "", "nothing on stdout");
  const lines = r.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, `one line on stderr: ${r.stderr}`);
  assert.match(lines[0], /^llm-baton-gateway: /);
  assert.match(lines[0], message);
  assert.doesNotMatch(r.stderr, STACK_FRAME, "no stack trace");
  assert.ok(!r.stderr.includes(SECRET), `the key in the config reached stderr: ${r.stderr}`);
}

let provider;
before(async () => {
  provider = await startProvider();
});
after(() => provider?.stop());

const target = (id, extra = {}) => ({ format: "openai_chat", baseUrl: `${provider.url}/s/${id}/v1`, model: `up-${id}`, apiKey: SECRET, ...extra });

describe("llm-baton-gateway: the command line", () => {
  test("--help prints the usage on stdout and exits 0", () => {
    for (const flag of ["--help", "-h"]) {
      const r = run([flag]);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stderr, "");
      assert.match(r.stdout, /^Usage: llm-baton-gateway \[--config FILE\] \[--host HOST\] \[--port PORT\] \[--log text\|json\|off\] \[--workers N\]\n/);
      for (const word of ["--config FILE", "--host HOST", "--port PORT", "--log FORMAT", "--workers N", "GATEWAY_WORKERS", "GATEWAY_METRICS_KEY", "/healthz", "BATON_CONFIG", "OPENAI_API_KEY", "GATEWAY_URL=http://HOST:PORT", "SIGTERM", "npx"]) {
        assert.ok(r.stdout.includes(word), `the usage mentions ${word}`);
      }
    }
  });

  test("bad flags exit 2 with one line saying what is wrong and what would be right", () => {
    assertRefusal(run(["--prot", "8787"]), 2, /unknown option "--prot" \(did you mean --port\?\); run llm-baton-gateway --help/);
    assertRefusal(run(["baton.json"]), 2, /unexpected argument "baton.json"/);
    assertRefusal(run(["--port", "http"]), 2, /--port must be a port number from 0 to 65535, 0 for any free port \(got "http"\)/);
    assertRefusal(run(["--port", "65536"]), 2, /--port must be a port number/);
    assertRefusal(run(["--config"]), 2, /--config needs a value, e.g. --config baton.json/);
    assertRefusal(run(["--port", "1", "--port=2"]), 2, /--port is given twice/);
  });

  test("a bad config exits 1 naming the file, the place and the fix, never the key in it", () => {
    const syntax = file("syntax.json", `{\n  "targets": {\n    "a": { "apiKey": ${SECRET} }\n  }\n}\n`);
    assertRefusal(run(["--config", syntax]), 1, /the config file .*syntax\.json is not valid JSON: expected a value .* at line 3, column 22$/);
    const trailing = `{ "targets": { "a": { "apiKey": "${SECRET}", } } }`;
    const comma = file("comma.json", trailing);
    const column = trailing.indexOf(", }") + 3;
    assertRefusal(run(["--config", comma]), 1, new RegExp(`a comma before '\\}' \\(trailing commas are not JSON\\) at line 1, column ${column}$`));
    const field = file("field.json", JSON.stringify({ targets: { a: { ...target("x"), timeout: { headersMs: 1 } } } }));
    assertRefusal(run(["--config", field]), 1, /the config in .*field\.json is not valid: targets\.a\.timeout is not a known field; did you mean "timeouts"\?$/);
    assertRefusal(run(["--config", `${dir}/missing.json`]), 1, /cannot read the config file .*missing\.json: no such file/);
    assertRefusal(run([], { BATON_CONFIG: `{"targets": {"a": {"apiKey": "${SECRET}"}},}` }), 1, /^llm-baton-gateway: without --config: BATON_CONFIG is not valid JSON: a comma before '\}'/);
    assertRefusal(run([]), 1, /without --config: set BATON_CONFIG, or at least one of OPENAI_API_KEY and ANTHROPIC_API_KEY/);
    assertRefusal(run([], { OPENAI_API_KEY: SECRET, DEADLINE_MS: "30s" }), 1, /DEADLINE_MS must be a positive number of milliseconds, e.g. 30000 \(got "30s"\)/);
  });

  test("a config without gateway.apiKeys starts, saying once on stderr that anyone can spend its keys", async () => {
    const open = file("open.json", JSON.stringify({ targets: { a: target("open") } }));
    const gw = await start(["--config", open, "--port", "0"]);
    gw.child.kill("SIGTERM");
    const exit = await gw.exited;
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(exit.stderr.match(/no gateway\.apiKeys are configured, so anyone who can reach this gateway can spend/g)?.length, 1, exit.stderr);
    assert.match(exit.stderr, /Set gateway\.apiKeys to a list of keys/);
    // Configured from the environment, the fix is the variable the user sets.
    const fromEnv = await start(["--port", "0"], { OPENAI_API_KEY: SECRET, OPENAI_BASE_URL: `${provider.url}/s/open/v1` });
    fromEnv.child.kill("SIGTERM");
    const envExit = await fromEnv.exited;
    assert.match(envExit.stderr, /no gateway\.apiKeys are configured.*Set GATEWAY_API_KEYS to a comma-separated list of keys/);
    assert.ok(!envExit.stderr.includes(SECRET), "the provider key reached stderr");
  });

  test("a CORS preflight from an origin not in gateway.cors: a 403 naming the origin and the field, logged once", async () => {
    const cors = file("cors.json", JSON.stringify({ targets: { a: target("cors") }, gateway: { apiKeys: [KEY], cors: ["http://localhost:5173"] } }));
    // One process: each worker logs a refused origin once.
    const gw = await start(["--config", cors, "--port", "0", "--workers", "1"]);
    const preflight = (origin) =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: "OPTIONS",
        headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" },
      });
    const allowed = await preflight("http://localhost:5173");
    assert.equal(allowed.status, 204);
    assert.equal(allowed.headers.get("access-control-allow-origin"), "http://localhost:5173");
    // The page opened at 127.0.0.1 instead of localhost: another origin.
    for (let i = 0; i < 2; i++) {
      const res = await preflight("http://127.0.0.1:5173");
      assert.equal(res.status, 403);
      assert.equal(res.headers.get("access-control-allow-origin"), null);
      const { error } = await res.json();
      assert.equal(error.message, 'the origin "http://127.0.0.1:5173" is not in gateway.cors (["http://localhost:5173"]): add it there to let its pages call this gateway');
    }
    gw.child.kill("SIGTERM");
    const exit = await gw.exited;
    const logged = exit.stderr.split("\n").filter((l) => l.includes("refused a CORS preflight"));
    assert.deepEqual(logged, ['llm-baton gateway: refused a CORS preflight for /v1/chat/completions: the origin "http://127.0.0.1:5173" is not in gateway.cors (["http://localhost:5173"]): add it there to let its pages call this gateway']);
  });

  test("an access-log line per request on stdout, as text, as JSON or none; never a key", async () => {
    await putScenario(provider.url, "log", [{ text: "Logged." }]);
    const logged = file("log.json", JSON.stringify({ targets: { a: target("log") }, gateway: { apiKeys: [KEY] }, health: false }));
    const lines = {};
    for (const format of ["text", "json", "off"]) {
      // One process: with several, each line also names its worker (gateway_cluster.test.mjs).
      const gw = await start(["--config", logged, "--port", "0", "--log", format, "--workers", "1"]);
      const ok = await post(`${gw.url}`, { model: "a", messages: ASK });
      assert.equal(ok.status, 200);
      await ok.text();
      const refused = await fetch(`${gw.url}/v1/models?key=${SECRET}`, { headers: { authorization: "Bearer wrong-key" } });
      assert.equal(refused.status, 401);
      await refused.text();
      gw.child.kill("SIGTERM");
      await gw.exited;
      lines[format] = gw.stdout().split("\n").filter((l) => l && !l.startsWith("GATEWAY_URL="));
      for (const line of lines[format]) {
        for (const secret of [SECRET, KEY, "wrong-key"]) assert.ok(!line.includes(secret), `a key in the access log: ${line}`);
      }
    }
    assert.equal(lines.text.length, 2, lines.text.join("\n"));
    assert.match(lines.text[0], /^\d{4}-\d\d-\d\dT[\d:.]+Z POST \/v1\/chat\/completions 200 [\d.]+ms target=a attempts=1$/);
    assert.match(lines.text[1], /^\S+ GET \/v1\/models 401 [\d.]+ms$/);
    const [ok, refused] = lines.json.map((l) => JSON.parse(l));
    assert.deepEqual({ ...ok, time: "t", ms: 0 }, { time: "t", method: "POST", path: "/v1/chat/completions", status: 200, ms: 0, target: "a", attempts: 1, complete: true });
    assert.deepEqual([refused.path, refused.status, refused.target], ["/v1/models", 401, undefined]);
    assert.deepEqual(lines.off, []);
    assertRefusal(run(["--log", "yaml"]), 2, /--log must be text, json or off \(got "yaml"\)/);
  });

  test("a port in use: exit 1 saying to choose another", async () => {
    const config = file("inuse.json", JSON.stringify({ targets: { a: target("inuse") }, gateway: { apiKeys: [KEY] } }));
    const first = await start(["--config", config, "--port", "0"]);
    try {
      const port = new URL(first.url).port;
      assertRefusal(run(["--config", config, "--port", port]), 1, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use; choose another with --port, or --port 0`));
    } finally {
      first.child.kill("SIGTERM");
      await first.exited;
    }
  });

  test("--config from a JSON file and from a .mjs module reading process.env; without --config, from the environment", async () => {
    await putScenario(provider.url, "from-json", [{ text: "from the JSON file" }]);
    await putScenario(provider.url, "from-module", [{ text: "from the module" }]);
    await putScenario(provider.url, "from-env", [{ text: "from the environment" }]);
    const json = file("baton.json", JSON.stringify({ targets: { a: target("from-json") }, gateway: { apiKeys: [KEY] } }));
    const module = file(
      "baton.mjs",
      `export default (env) => ({ targets: { a: ${JSON.stringify(target("from-module"))} }, gateway: { apiKeys: [env.NODE_TEST_GATEWAY_KEY] } });\n`,
    );
    const env = { OPENAI_API_KEY: SECRET, OPENAI_BASE_URL: `${provider.url}/s/from-env/v1`, OPENAI_MODEL: "up-env", GATEWAY_API_KEYS: `other, ${KEY}` };
    const cases = [
      [["--config", json], {}, "a", "from the JSON file"],
      [["--config=baton.mjs"], { NODE_TEST_GATEWAY_KEY: KEY }, "a", "from the module"],
      [[], env, "chat", "from the environment"],
    ];
    for (const [args, extraEnv, model, text] of cases) {
      const gw = await start([...args, "--port", "0"], extraEnv);
      try {
        assert.match(gw.stdout(), /^GATEWAY_URL=http:\/\/127\.0\.0\.1:\d+\n$/, "one line on stdout");
        const refused = await post(gw.url, { model, messages: ASK }, { authorization: "Bearer wrong" });
        assert.equal(refused.status, 401, `${args}: a wrong gateway key`);
        await refused.arrayBuffer();
        const res = await post(gw.url, { model, messages: ASK });
        const answer = await res.json();
        assert.equal(res.status, 200, JSON.stringify(answer));
        assert.equal(answer.choices[0].message.content, text);
      } finally {
        gw.child.kill("SIGTERM");
        assert.equal((await gw.exited).code, 0);
      }
    }
    assert.equal((await upstream(provider.url, "from-env")).log[0].body.model, "up-env", "OPENAI_MODEL reached the upstream");
  });
});

describe("llm-baton/gateway/env: configFromEnv", () => {
  test("a BATON_CONFIG that is not JSON: the line, the column and why, never its text", () => {
    const K = JSON.stringify(SECRET);
    // [document, line, column, why]: the column is where the first wrong character stands.
    const cases = [
      [`{"apiKey": ${SECRET}}`, 1, 12, /^expected a value/],
      [`{"apiKey": ${K},}`, 1, K.length + 13, /^a comma before '\}'/],
      [`{"apiKey": ${K} "model": "m"}`, 1, K.length + 13, /^expected ',' or '\}'/],
      [`{\n  apiKey: ${K}\n}`, 2, 3, /^expected a property name in double quotes/],
      [`{"apiKey" ${K}}`, 1, 11, /^expected ':' after a property name/],
      [`{"apiKey": "${SECRET}`, 1, SECRET.length + 13, /^a string is not closed/],
      [`{"apiKey": "${SECRET}\n"}`, 1, SECRET.length + 13, /^a control character/],
      [`{"apiKey": "\\q${SECRET}"}`, 1, 13, /^an invalid escape/],
      [`{"targets": [1, 2,]}`, 1, 19, /^expected a value/],
      [`{"apiKey": ${K}} trailing`, 1, K.length + 14, /^more text after the end/],
      [`{"apiKey": ${K}, "n": 01}`, 1, K.length + 20, /^expected ',' or '\}'/],
      [`{"apiKey": ${K}`, 1, K.length + 12, /^expected ',' or '\}'/],
      ["   ", 1, 4, /^the text ends where a value should be/],
    ];
    for (const [text, line, column, why] of cases) {
      assert.throws(() => JSON.parse(text), SyntaxError, `JSON.parse accepts ${text}`);
      let message;
      try {
        configFromEnv({ BATON_CONFIG: text });
      } catch (e) {
        message = e.message;
      }
      assert.ok(message?.startsWith("BATON_CONFIG is not valid JSON: "), `${text}: ${message}`);
      const detail = message.slice("BATON_CONFIG is not valid JSON: ".length);
      assert.match(detail, why, text);
      assert.ok(detail.endsWith(` at line ${line}, column ${column}`), `${text}: ${detail}`);
      assert.ok(!message.includes(SECRET.slice(3)), `the document's text reached the message: ${message}`);
    }
  });
});

describe("llm-baton-gateway: signals", { concurrency: 1 }, () => {
  const DEADLINE_MS = 5000;
  let config;
  before(() => {
    config = file(
      "signals.json",
      JSON.stringify({ targets: { slow: target("sig-slow"), stall: target("sig-stall") }, deadlineMs: DEADLINE_MS, gateway: { apiKeys: [KEY] }, health: false }),
    );
  });

  test("SIGTERM: new connections refused, the in-flight stream finishes whole, then exit 0 at once", async () => {
    const words = Array.from({ length: 30 }, (_, i) => `w${i}`).join(" ");
    await putScenario(provider.url, "sig-slow", [{ text: words, chunks: 30, chunkDelayMs: 60 }]);
    const gw = await start(["--config", config, "--port", "0"]);
    const res = await post(gw.url, { model: "slow", messages: ASK, stream: true });
    assert.equal(res.status, 200);
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let raw = decoder.decode((await reader.read()).value, { stream: true });
    const signalled = performance.now();
    gw.child.kill("SIGTERM");
    await sleep(200);
    const refused = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } }).then(
      () => "answered",
      (e) => e.cause?.code ?? String(e),
    );
    assert.equal(refused, "ECONNREFUSED", "a new connection after SIGTERM");
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      raw += decoder.decode(value, { stream: true });
    }
    const ended = performance.now();
    const { text, done } = chatSseText(raw);
    assert.equal(text, words, "the whole answer");
    assert.ok(done, "the stream ended with [DONE]");
    const exit = await gw.exited;
    assert.equal(exit.code, 0, exit.stderr);
    assert.match(exit.stderr, /SIGTERM: no longer accepting connections; finishing 1 request\(s\) in flight/);
    assert.ok(exit.at - ended < 1000, `exited ${(exit.at - ended).toFixed(0)} ms after the stream ended`);
    assert.ok(exit.at - signalled < DEADLINE_MS, `exited ${(exit.at - signalled).toFixed(0)} ms after SIGTERM`);
    const r = await upstream(provider.url, "sig-slow");
    assert.deepEqual([r.requests, r.completed, r.clientClosed], [1, 1, 0], "the upstream stream ran to its end");
  });

  test("SIGTERM during a stalled call: it ends by its own deadline (504), then exit 0", async () => {
    await putScenario(provider.url, "sig-stall", [{ headersDelayMs: 600000 }]);
    const gw = await start(["--config", config, "--port", "0"]);
    const t0 = performance.now();
    const pending = post(gw.url, { model: "stall", messages: ASK }, { "x-baton-deadline-ms": "1500" });
    await sleep(300);
    gw.child.kill("SIGTERM");
    const res = await pending;
    assert.equal(res.status, 504);
    assert.equal((await res.json()).error.code, "upstream_timeout");
    const exit = await gw.exited;
    assert.equal(exit.code, 0, exit.stderr);
    const ms = exit.at - t0;
    assert.ok(ms >= 1450 && ms <= 1500 + SLACK_MS + 500, `exited ${ms.toFixed(0)} ms after the call began, its deadline 1500 ms`);
  });

  test("a second signal exits at once, and the cut call's upstream request is closed", async () => {
    await putScenario(provider.url, "sig-stall", [{ headersDelayMs: 600000 }]);
    const gw = await start(["--config", config, "--port", "0"]);
    const pending = post(gw.url, { model: "stall", messages: ASK }).then((r) => `HTTP ${r.status}`, () => "cut");
    await sleep(300);
    gw.child.kill("SIGTERM");
    await sleep(200);
    const second = performance.now();
    gw.child.kill("SIGINT");
    const exit = await gw.exited;
    assert.equal(exit.code, 130, `exit code after SIGINT (128 + 2); stderr: ${exit.stderr}`);
    assert.ok(exit.at - second < 1000, `exited ${(exit.at - second).toFixed(0)} ms after the second signal`);
    assert.match(exit.stderr, /SIGINT again: exiting now, 1 request\(s\) cut off/);
    assert.equal(await pending, "cut");
    const r = await upstream(provider.url, "sig-stall");
    assert.deepEqual([r.requests, r.open, r.clientClosed], [1, 0, 1], "the upstream request was closed, not left open");
  });
});

describe("llm-baton/gateway/node-server: serve()", { concurrency: 1 }, () => {
  test("a reader that stops reading pauses the writes: the response is pulled no further than the socket buffers", async () => {
    const CHUNK = 64 * 1024;
    const TOTAL = 64 * 1024 * 1024;
    let pulled = 0;
    const body = () =>
      new ReadableStream({
        pull(controller) {
          if (pulled >= TOTAL) return controller.close();
          pulled += CHUNK;
          controller.enqueue(new Uint8Array(CHUNK).fill(pulled / CHUNK));
        },
      }, { highWaterMark: 0 });
    const server = await serve({ fetch: () => new Response(body(), { headers: { "content-type": "application/octet-stream" } }) }, { port: 0 });
    try {
      const { port } = new URL(server.url);
      const socket = connect(Number(port), "127.0.0.1");
      socket.pause();
      socket.write("GET /big HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
      await sleep(800);
      const early = pulled;
      await sleep(700);
      const later = pulled;
      console.log(`# backpressure: ${(later / 1048576).toFixed(1)} MiB of ${TOTAL / 1048576} MiB pulled while the client read nothing`);
      assert.equal(later, early, "the server kept pulling while the client read nothing");
      assert.ok(later < TOTAL / 4, `${later} bytes pulled of ${TOTAL}: the server buffered the stream`);
      let received = 0;
      let head = "";
      socket.on("data", (chunk) => {
        received += chunk.length;
        if (head.length < 200) head += chunk.toString("latin1", 0, 200);
      });
      socket.resume();
      await new Promise((resolve) => socket.on("close", resolve));
      assert.match(head, /^HTTP\/1\.1 200 OK\r\n/);
      assert.ok(received > TOTAL, `the client received ${received} bytes of ${TOTAL} (plus framing)`);
      assert.equal(pulled, TOTAL);
    } finally {
      await server.closeNow();
    }
  });

  test("a client that disconnects aborts the Request's signal at once, before and after the status", async () => {
    const aborted = [];
    const server = await serve(
      {
        fetch: (request) =>
          new Promise((resolve) => {
            const t0 = performance.now();
            request.signal.addEventListener("abort", () => aborted.push({ path: new URL(request.url).pathname, ms: performance.now() - t0 }));
            if (request.url.endsWith("/started")) resolve(new Response(new ReadableStream({ start: (c) => c.enqueue(new Uint8Array([65])) })));
          }),
      },
      { port: 0 },
    );
    try {
      for (const path of ["/held", "/started"]) {
        const stop = new AbortController();
        const res = fetch(`${server.url}${path}`, { signal: stop.signal });
        if (path === "/started") await (await res).body.getReader().read();
        else await sleep(200);
        stop.abort();
        await res.catch(() => {});
        const until = performance.now() + 1000;
        while (!aborted.some((a) => a.path === path) && performance.now() < until) await sleep(10);
        assert.ok(aborted.some((a) => a.path === path), `${path}: request.signal never aborted`);
      }
      assert.equal(server.inFlight, 0);
    } finally {
      await server.closeNow();
    }
  });

  test("keep-alive: requests share a connection; HEAD gets no body; a streamed body over maxBodyBytes is a 413 that closes the connection", async () => {
    await putScenario(provider.url, "ka", [{ text: "one" }, { text: "two" }]);
    const gateway = createGateway({ targets: { a: target("ka") }, gateway: { apiKeys: [KEY], maxBodyBytes: 4096 }, health: false });
    const server = await serve(gateway, { port: 0 });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const call = (method, path, { headers = {}, body } = {}) =>
      new Promise((resolve, reject) => {
        const req = httpRequest(`${server.url}${path}`, { method, agent, headers: { authorization: `Bearer ${KEY}`, ...headers } }, (res) => {
          let text = "";
          res.setEncoding("utf8").on("data", (c) => (text += c));
          res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, text, reused: req.reusedSocket }));
        });
        req.on("error", reject);
        if (typeof body === "function") body(req);
        else req.end(body);
      });
    try {
      const json = { "content-type": "application/json" };
      const first = await call("POST", "/v1/chat/completions", { headers: json, body: JSON.stringify({ model: "a", messages: ASK }) });
      const second = await call("POST", "/v1/chat/completions", { headers: json, body: JSON.stringify({ model: "a", messages: ASK }) });
      assert.deepEqual([first.status, JSON.parse(first.text).choices[0].message.content, first.reused], [200, "one", false]);
      assert.deepEqual([second.status, JSON.parse(second.text).choices[0].message.content, second.reused], [200, "two", true]);
      const models = await call("GET", "/v1/models");
      assert.equal(models.status, 200);
      assert.ok(models.reused, "the third request reused the connection");
      const head = await call("HEAD", "/v1/models");
      assert.equal(head.text, "", "HEAD has no body");
      assert.equal(head.status, 405, "the gateway serves GET /v1/models, not HEAD");
      assert.equal(head.headers.allow, "GET");
      // A chunked upload with no content-length, 64 KiB in 1 KiB writes: refused as it streams in.
      const big = await call("POST", "/v1/chat/completions", {
        headers: json,
        body: async (req) => {
          req.write(`{"model":"a","messages":[{"role":"user","content":"`);
          for (let i = 0; i < 64 && !req.destroyed; i += 1) {
            if (!req.write("x".repeat(1024))) await new Promise((resolve) => req.once("drain", resolve));
          }
          if (!req.destroyed) req.end(`"}]}`);
        },
      }).catch((e) => ({ error: e.code }));
      assert.equal(big.status, 413, JSON.stringify(big));
      assert.match(JSON.parse(big.text).error.message, /larger than the gateway's limit of 4096 bytes/);
      assert.equal(big.headers.connection, "close", "an unread body ends its connection");
      assert.equal((await upstream(provider.url, "ka")).requests, 2, "the refused body never reached the upstream");
    } finally {
      agent.destroy();
      await server.closeNow();
    }
  });

  test("a body declared larger than maxBodyBytes is refused at once, without waiting for it", async () => {
    const gateway = createGateway({ targets: { a: target("declared") }, gateway: { apiKeys: [KEY], maxBodyBytes: 4096 }, health: false });
    const server = await serve(gateway, { port: 0 });
    try {
      const socket = connect(Number(new URL(server.url).port), "127.0.0.1");
      let reply = "";
      socket.setEncoding("latin1").on("data", (c) => (reply += c));
      const closed = new Promise((resolve) => socket.on("close", resolve));
      const t0 = performance.now();
      socket.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${KEY}\r\ncontent-type: application/json\r\ncontent-length: 10000000\r\n\r\n{"model":`);
      await closed;
      assert.match(reply, /^HTTP\/1\.1 413 /);
      assert.match(reply, /\r\nconnection: close\r\n/i);
      assert.ok(performance.now() - t0 < 1000, `refused after ${(performance.now() - t0).toFixed(0)} ms`);
    } finally {
      await server.closeNow();
    }
  });

  test("bad arguments are a TypeError saying what is expected", async () => {
    await assert.rejects(() => serve({}), { name: "TypeError", message: /handler must have a fetch\(request\) method, such as createGateway\(config\)'s result \(got an object\)/ });
    await assert.rejects(() => serve(() => new Response(), { port: 70000 }), { name: "TypeError", message: /port must be an integer from 0 to 65535.*\(got number 70000\)/ });
    await assert.rejects(() => serve(() => new Response(), { host: "" }), { name: "TypeError", message: /host must be a host name or IP address/ });
  });
});
