// The edge gateway's HTTP plumbing: a standard fetch handler, so the same object serves a
// Cloudflare Worker (`export default gateway`) and `Deno.serve(gateway.fetch)`; and the same
// plumbing in process as `baton.fetch`, the fetch an official SDK is given.
//
// This file decides nothing. A request enters the wasm twice (src/driver/gateway.rs):
// `decide(method, path, headers)` answers a complete reply `{status, headers, body}` (a refusal,
// a CORS preflight, a GET's answer) or a plan; for a plan, this file reads the body as far as
// the plan allows and hands it to `serve`, whose task (pkg/host.js runs it) ends in a reply, or
// commits to a stream first.
// Endpoints, CORS, the gateway key, the content type, the body cap and the deadline are all
// decided in the wasm (src/gateway/decision.rs). Here: reading the body, linking the client's
// disconnect to the call's AbortSignal, and turning the replies into a Response, held until the
// route commits, then a stream fed as deltas arrive: in a deployed workerd gateway, workerd's own
// byte stream, which the runtime writes to the socket without a JavaScript stream's read per
// chunk (about a tenth less CPU per stream in bench/gateway.mjs).

const utf8 = new TextEncoder();

/** The key of a Gateway's core (gatewayCore), for pkg/gateway/node-exchange.js. */
export const CORE = Symbol.for("llm-baton.gateway.core");

/** The key of a Gateway's metrics link, for pkg/gateway/cluster.js. */
export const METRICS = Symbol.for("llm-baton.gateway.metrics");

/**
 * How many bytes of a stream may wait for a client that reads nothing. Past it the call reads
 * no more of the upstream (pkg/host.js's `room`) until the client takes some, so a slow client
 * holds a bounded buffer, never the whole upstream answer. The call's deadline still runs.
 */
export const OUTPUT_QUEUE_BYTES = 64 << 10;

export class Gateway {
  #core;

  /**
   * `instance()` returns the current validated WasmGateway; `runtime` is host.js's loop (see
   * createGateway in core.js): every call into the wasm goes through it.
   */
  constructor(instance, runtime) {
    this.#core = gatewayCore(instance, runtime);
  }

  /** Test only: the wasm traps at its next poll, as a bug would. */
  [Symbol.for("llm-baton.test.trap")]() {
    this.#core.runtime.armTrap();
  }

  /**
   * pkg/gateway/cluster.js: this gateway's metrics (core.js's lazyMetrics), null without
   * `gateway.metrics`; a worker makes its `gather` ask the primary for every worker's counts.
   */
  get [METRICS]() {
    return this.#core.runtime.metrics ?? null;
  }

  /** The handler. An arrow property, so `Deno.serve(gateway.fetch)` works unbound. */
  fetch = (request) => serveHttp(this.#core, request);

  /** pkg/gateway/node-exchange.js: what this gateway serves with. */
  get [CORE]() {
    return this.#core;
  }
}

/**
 * `baton.fetch`: the gateway's endpoints in process, for an SDK's `fetch` option. `instance()`
 * returns a WasmGateway sharing the Baton's engine; `runtime` as for `Gateway`. Takes what a
 * standard fetch takes (a URL or Request, and init).
 */
export function inProcessFetch(instance, runtime) {
  const core = gatewayCore(instance, runtime);
  return (input, init) => serveInProcess(core, new Request(input, init));
}

/** What both handlers serve with: the wasm object's two entries, each through the loop. */
function gatewayCore(instance, runtime) {
  const wasm = {
    decide: (method, path, headers) => runtime.enter(() => instance().decide(method, path, headers)),
    refuse: (plan, status, message) => runtime.enter(() => instance().refuse(plan.format, plan.origin, status, message)),
  };
  return { wasm, runtime, instance };
}

/** The deployed gateway: the wasm decides; an admitted body is read up to the plan's cap. */
async function serveHttp(core, request) {
  const started = performance.now();
  // With gateway.metrics: `/metrics` is answered here, and every other request counted.
  const metricsLink = core.runtime.metrics;
  let metrics = null;
  if (metricsLink) {
    if (new URL(request.url).pathname === "/metrics") return metricsLink.scrape(request);
    // The first request waits while metrics.js is imported (core.js's lazyMetrics).
    metrics = metricsLink.current ?? (await metricsLink.load());
  }
  const step = core.wasm.decide(request.method, new URL(request.url).pathname, request.headers);
  if (step.status !== undefined) {
    if (step.status === 403 && request.method === "OPTIONS") logRefusedPreflight(request, step);
    metrics?.answered(step.status, started);
    return respond(step);
  }
  const body = await readBody(request, step.limit);
  const [telemetry, meter] = await observers(core, step, body, started, metrics);
  return new Promise((resolve, reject) => serve(core, step, body, responseExchange(request, false, resolve, reject), telemetry, meter));
}

/**
 * The request's trace (core.js's lazyTelemetry: the first traced request waits while
 * telemetry.js is imported) and its meter for `/metrics`, each undefined when off.
 */
export async function observers(core, step, body, started, metrics) {
  const telemetry = core.runtime.telemetry;
  const meter = metrics?.request(step.format, body, started);
  return [telemetry && (telemetry.current ?? (await telemetry.load())), meter];
}

/** Origins whose refused preflight was logged: a page that retries logs once (up to 100 origins). */
const loggedOrigins = new Set();

/**
 * Logs a CORS preflight the gateway refused, with its reason (which names the origin and the
 * gateway.cors that would let it in): the page itself only sees "Failed to fetch".
 */
export function logRefusedPreflight(request, reply) {
  const origin = request.headers.get("origin") ?? "";
  if (loggedOrigins.has(origin) || loggedOrigins.size >= 100) return;
  loggedOrigins.add(origin);
  let reason;
  try {
    reason = JSON.parse(reply.body).error.message;
  } catch {
    reason = `HTTP ${reply.status}`;
  }
  console.warn(`llm-baton gateway: refused a CORS preflight for ${new URL(request.url).pathname}: ${reason}`);
}

/**
 * `baton.fetch`: the wasm decides as for the deployed gateway, without a gateway key, CORS or a
 * size cap (the caller already holds the body), and every error reply says `x-should-retry:
 * false`. The request's signal aborting rejects (before the answer's headers) or errors the body
 * (after), as a network fetch does, so the SDK reports its own timeout or the user's cancel.
 */
async function serveInProcess(core, request) {
  const signal = request.signal;
  if (signal?.aborted) throw abortReason(signal);
  const step = core.wasm.decide(request.method, new URL(request.url).pathname, request.headers);
  if (step.status !== undefined) return respond(step);
  let body;
  try {
    body = { bytes: new Uint8Array(await request.arrayBuffer()) };
  } catch (e) {
    if (signal?.aborted) throw abortReason(signal);
    body = { error: e instanceof Error ? e.message : String(e) };
  }
  const [telemetry] = await observers(core, step, body, 0, null);
  return new Promise((resolve, reject) => serve(core, step, body, responseExchange(request, true, resolve, reject), telemetry, undefined));
}

/** What a standard fetch rejects with when its signal aborts: the signal's reason. */
function abortReason(signal) {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

/**
 * Runs the plan's call on `body` (`{bytes}` as read, or `{error}`: why reading failed) and hands
 * its reply to `exchange` (responseExchange, nodeExchange): an error or a whole answer when the
 * driver settles before committing, else a 200 stream as soon as the first delta is delivered.
 * `telemetry`: the owner's Telemetry (telemetry.js), or null. `meter`: the request's RequestMeter
 * (gateway/metrics.js), or undefined.
 */
export function serve({ wasm, runtime, instance }, plan, body, exchange, telemetry, meter) {
  let committed = false;
  let task = null;
  // The client's disconnect and a reader that stops reading both cancel the call, which aborts
  // the upstream attempt at once.
  const stop = () => {
    if (task !== null) runtime.cancel(task);
  };
  // The client's stream, made when the call commits to one (a whole answer needs none).
  let client = null;
  let unlisten = () => {};
  const abort = () => {
    exchange.abandoned(client);
    stop();
  };
  const finish = (reply) => {
    unlisten();
    meter?.end(committed ? 200 : reply.status);
    if (!committed) return exchange.reply(reply);
    client.write(utf8.encode(reply.body));
    client.close();
  };
  const trace = telemetry?.gatewayCall(body, exchange.request, exchange.server);
  const broken = (e) => {
    trace?.trapped(e);
    meter?.end(committed ? 200 : 500);
    unlisten();
    if (committed) client.error(e);
    else exchange.reply(wasm.refuse(plan, 500, e.message));
  };
  const handler = {
    output(out) {
      if (out instanceof Uint8Array) client.write(out);
      else if (out.type === "event") {
        if (out.event.type === "leg") runtime.health?.report(out.event);
        trace?.event(out.event);
        meter?.event(out.event);
      } else if (out.type === "done") {
        trace?.done(out.summary);
        meter?.done(out.summary);
      } else if (out.type === "failed") trace?.failed(out.error);
      else if (out.type === "request") trace?.request(out.request);
      else if (out.type === "commit") {
        committed = true;
        client = exchange.commit(out.headers, stop);
      } else if (out.type === "reply") {
        // A request refused before its call started (a bad body, an unknown model).
        trace?.failed({ kind: "config", message: `the gateway refused the request (HTTP ${out.reply.status})`, status: out.reply.status });
        finish(out.reply);
      }
    },
    trapped: (cause) => broken(runtime.internalError(cause)),
    attemptHeaders: trace && ((target, attempt) => trace.attemptHeaders(target, attempt)),
    room: () => client?.room(),
  };
  const begin = (waitedMs) => {
    try {
      const reports = Boolean(runtime.health);
      // A meter reads the same events and end as a trace.
      const traced = trace !== undefined || meter !== undefined;
      const content = trace !== undefined && telemetry.recordContent;
      task = runtime.spawn(
        () => instance().serve(plan.format, plan.deadlineMs, plan.origin, body.bytes, body.error, waitedMs, reports, traced, content),
        handler,
        runtime.internalError,
      );
    } catch (e) {
      return broken(e);
    }
    unlisten = exchange.listen(abort);
  };
  // With a health store, the request starts once the store answered (or the wait ran out).
  if (runtime.health) runtime.health.admit(body.bytes).catch(() => 0).then(begin);
  else begin(0);
}

/**
 * A call's exchange as a WHATWG Response settling `resolve` (Deno.serve, workerd, baton.fetch).
 * `inProcess` (baton.fetch): the caller's abort rejects (before the answer's headers) or errors
 * the body (after) with its reason, as a network fetch does, instead of ending a response nobody
 * reads.
 */
function responseExchange(request, inProcess, resolve, reject) {
  const signal = request.signal;
  return {
    request,
    server: !inProcess,
    listen(abort) {
      if (!signal) return () => {};
      if (signal.aborted) {
        abort();
        return () => {};
      }
      signal.addEventListener("abort", abort, { once: true });
      return () => signal.removeEventListener("abort", abort);
    },
    reply: (reply) => resolve(respond(reply)),
    commit(headers, stop) {
      // A deployed workerd gateway hands the socket a native stream; in process the caller's
      // code reads it, and may see it errored with its own abort reason.
      const client = !inProcess && typeof IdentityTransformStream === "function" ? nativeClientStream(stop) : jsClientStream(stop);
      resolve(new Response(client.body, { status: 200, headers }));
      return client;
    },
    abandoned(client) {
      if (!inProcess) return;
      if (client) client.error(abortReason(signal));
      else reject(abortReason(signal));
    },
  };
}

/**
 * The client's side of a committed stream, holding at most OUTPUT_QUEUE_BYTES the client has not
 * taken: `body` for the Response; `write(bytes)`, `close()` and `error(e)`, which do nothing
 * once the client is gone; and `room()`, undefined while the queue has room, else a promise
 * settled once the client took some. `cancelled()` runs when the client stops reading.
 *
 * Output goes to the client as one chunk per short window: what arrives while the client is busy,
 * or within a timer turn of the last chunk handed over, waits in `pending` and goes out with the
 * next. A burst of upstream reads (Deno's fetch hands over one upstream event per read) then costs
 * the runtime a few writes to the client, not one each, while output after a quiet spell, the
 * first byte among it, goes out at once.
 */
function jsClientStream(cancelled) {
  let controller;
  let roomWait = null;
  let makeRoom = () => {};
  let pending = [];
  let pendingBytes = 0;
  // The client waits for a chunk.
  let reading = false;
  // The timer of the window after the last hand-over, or null.
  let windowTimer = null;
  const takePending = () => {
    const bytes = pending.length === 1 ? pending[0] : concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    try {
      controller.enqueue(bytes);
    } catch {
      // The reader is gone (cancelled): the call is being aborted; nothing to deliver.
    }
  };
  const handOver = () => {
    reading = false;
    takePending();
    makeRoom();
    windowTimer = setTimeout(windowEnds, 0);
  };
  const windowEnds = () => {
    windowTimer = null;
    if (reading && pendingBytes > 0) handOver();
  };
  const body = new ReadableStream(
    {
      start(c) {
        controller = c;
      },
      // With no high-water mark, called only when the client waits for a chunk.
      pull: () => {
        reading = true;
        if (windowTimer === null && pendingBytes > 0) handOver();
      },
      // The call is cancelled, and its wait for room with it.
      cancel: cancelled,
    },
    { highWaterMark: 0 },
  );
  return {
    body,
    write(bytes) {
      if (bytes.byteLength === 0) return;
      pending.push(bytes);
      pendingBytes += bytes.byteLength;
      if (reading && windowTimer === null) handOver();
    },
    close() {
      clearTimeout(windowTimer);
      if (pendingBytes > 0) takePending();
      try {
        controller.close();
      } catch {
        // Already cancelled by the client.
      }
    },
    error(e) {
      clearTimeout(windowTimer);
      controller.error(e);
    },
    room() {
      if (pendingBytes < OUTPUT_QUEUE_BYTES) return undefined;
      roomWait ??= new Promise((resolve) => {
        makeRoom = () => {
          roomWait = null;
          resolve();
        };
      });
      return roomWait;
    },
  };
}

/**
 * jsClientStream's contract over workerd's IdentityTransformStream, a native byte stream: the
 * runtime writes each chunk to the socket itself, where a JavaScript ReadableStream costs a
 * read of the stream per chunk on top. Its queue counts bytes, like jsClientStream's.
 */
function nativeClientStream(cancelled) {
  const { readable, writable } = new IdentityTransformStream({ highWaterMark: OUTPUT_QUEUE_BYTES });
  const writer = writable.getWriter();
  // Rejects when the client cancels the body (or we error it); a close resolves it.
  writer.closed.catch(cancelled);
  // A write or close after the client left rejects: nobody is reading, nothing to deliver.
  const ignore = () => {};
  return {
    body: readable,
    write(bytes) {
      if (bytes.byteLength > 0) writer.write(bytes).catch(ignore);
    },
    close: () => writer.close().catch(ignore),
    error: (e) => writer.abort(e).catch(ignore),
    room: () => (writer.desiredSize <= 0 ? writer.ready : undefined),
  };
}

/** Marks a config configFromEnv assembled from provider variables: its warning names GATEWAY_API_KEYS. */
export const FROM_ENVIRONMENT = Symbol("llm-baton: a config from the environment's variables");

/**
 * The warning to print once when a gateway is created from `config` without `gateway.apiKeys`
 * (WasmGateway's `open()`): such a gateway serves anyone who can reach it, with the provider keys
 * it holds. It names the setting the user wrote the config with.
 */
export function openGatewayWarning(config) {
  const send = "(clients send one as `Authorization: Bearer <key>` or `x-api-key: <key>`)";
  const fix = config?.[FROM_ENVIRONMENT]
    ? `Set GATEWAY_API_KEYS to a comma-separated list of keys ${send}`
    : `Set gateway.apiKeys to a list of keys ${send}, e.g. { gateway: { apiKeys: [process.env.GATEWAY_KEY] } }`;
  return (
    "llm-baton gateway: no gateway.apiKeys are configured, so anyone who can reach this gateway can spend " +
    `its provider keys. ${fix}, or keep the gateway on a network only you can reach.`
  );
}

/** `parts` (byte arrays of `size` bytes in all) as one array. */
export function concat(parts, size) {
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.byteLength;
  }
  return bytes;
}

function respond(reply) {
  return new Response(reply.body, { status: reply.status, headers: reply.headers });
}

/**
 * The body as `{bytes}`, at most `limit` bytes plus one (the wasm refuses a body over its cap),
 * or `{error}`: why it could not be read.
 */
async function readBody(request, limit) {
  if (!request.body) return { bytes: new Uint8Array(0) };
  const reader = request.body.getReader();
  const parts = [];
  let size = 0;
  try {
    while (size <= limit) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      size += value.byteLength;
    }
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
  if (size > limit) reader.cancel().catch(() => {});
  return { bytes: concat(parts, size).subarray(0, limit + 1) };
}
