// A WHATWG fetch handler (createGateway's `{ fetch }`) served over node:http, as Deno.serve and
// workerd serve one. Small, but each part is easy to get subtly wrong: the request body streams
// in (so the handler's maxBodyBytes cap, not this server, bounds what is read), the response is
// written only as fast as the client reads it (write until full, wait for 'drain'), a client that
// disconnects aborts the Request's signal (so the gateway aborts its call upstream at once), and
// close() stops accepting but lets every in-flight call finish, each within its own deadline.
// A Gateway (createGateway's result) is served on `req` and `res` themselves (node-exchange.js);
// any other handler, and the gateway's `/metrics`, through a Request and a Response.
import { createServer } from "node:http";
import { serveNode, servesNode } from "./node-exchange.js";

// Bytes of request body read ahead of the handler before the socket is paused.
const BODY_HIGH_WATER_MARK = 64 * 1024;
const NO_BODY_STATUS = new Set([204, 205, 304]);
/** On a response: the x-baton-target and x-baton-attempts it was written with, for its record. */
const SERVED = Symbol("llm-baton: served by");

/**
 * Serves `handler` (an object with `fetch(request)`, such as createGateway's result, or the
 * fetch function itself) on `host` (default 127.0.0.1) and `port` (default 8787; 0 picks a free
 * one). Resolves once listening with `{ url, server, inFlight, close, closeNow }`. `onExchange`,
 * if given, is called once each exchange has ended, with what an access log records of it
 * (see exchangeRecord): never a header's value, a body or a query string, so never a key.
 */
export async function serve(handler, { host = "127.0.0.1", port = 8787, onExchange } = {}) {
  const fetchHandler = typeof handler === "function" ? handler : handler?.fetch;
  if (typeof fetchHandler !== "function") {
    throw new TypeError(`serve(handler): handler must have a fetch(request) method, such as createGateway(config)'s result (got ${describe(handler)})`);
  }
  if (!(Number.isInteger(port) && port >= 0 && port <= 65535)) {
    throw new TypeError(`serve(handler, { port }): port must be an integer from 0 to 65535, 0 for any free port (got ${describe(port)})`);
  }
  if (onExchange !== undefined && typeof onExchange !== "function") {
    throw new TypeError(`serve(handler, { onExchange }): onExchange must be a function of one exchange's record (got ${describe(onExchange)})`);
  }
  if (typeof host !== "string" || host === "") {
    throw new TypeError(`serve(handler, { host }): host must be a host name or IP address such as "127.0.0.1" (got ${describe(host)})`);
  }

  // Node loads its fetch implementation (Request, Response, fetch) on first use, 20 to 200 ms:
  // pay that now, not within the first request's deadline. A Gateway's requests need none of it
  // (only its /metrics, which has no deadline).
  const native = servesNode(handler);
  if (!native) new Request("http://127.0.0.1/");

  const inFlight = new Set();
  let closing = false;
  let closed;
  const server = createServer();
  server.on("request", (req, res) => {
    inFlight.add(res);
    const started = performance.now();
    res.on("close", () => {
      inFlight.delete(res);
      if (onExchange) onExchange(exchangeRecord(req, res, started));
      // A keep-alive connection whose last response just ended is idle now: let it go.
      if (closing) setImmediate(() => server.closeIdleConnections());
    });
    const exchange = {
      closing: () => closing,
      served: (headers) => {
        res[SERVED] = { target: headers["x-baton-target"], attempts: headers["x-baton-attempts"] };
      },
    };
    const handled = native ? serveNode(handler, req, res, exchange) : Promise.resolve(false);
    handled.then((done) => done || respond(fetchHandler, req, res, exchange.closing)).catch((e) => {
      console.error(`llm-baton gateway server: a response failed: ${e instanceof Error ? e.message : String(e)}`);
      // Nothing written yet (the gateway failed before its reply): a 500, as for a handler that throws.
      if (res.headersSent || res.destroyed) return res.destroy();
      res.writeHead(500, { "content-type": "text/plain; charset=utf-8", connection: "close" });
      res.end("internal server error\n");
    });
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  const hostPart = address.family === "IPv6" ? `[${address.address}]` : address.address;

  return {
    /** Where the server listens, e.g. `http://127.0.0.1:8787`. */
    url: `http://${hostPart}:${address.port}`,
    /** The node:http Server. */
    server,
    /** How many requests have not finished their response yet. */
    get inFlight() {
      return inFlight.size;
    },
    /**
     * Stops accepting connections, closes idle keep-alive ones, and resolves once every
     * in-flight response has ended (each call still runs to its own end or deadline).
     */
    close() {
      if (!closed) {
        closing = true;
        closed = new Promise((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
      }
      return closed;
    },
    /** Closes every connection at once: in-flight calls see their client leave and abort upstream. */
    closeNow() {
      const done = this.close();
      server.closeAllConnections();
      return done;
    },
  };
}

/** One exchange: `req` as a Request to the handler, its Response written back to `res`. */
async function respond(fetchHandler, req, res, closing) {
  const disconnected = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) disconnected.abort();
  });
  let request;
  try {
    request = toRequest(req, disconnected.signal);
  } catch (e) {
    res.writeHead(400, { "content-type": "text/plain; charset=utf-8", connection: "close" });
    res.end(`bad request: ${e instanceof Error ? e.message : String(e)}\n`);
    return;
  }
  let response;
  try {
    response = await fetchHandler(request);
    if (!(response instanceof Response)) throw new TypeError(`the handler resolved with ${describe(response)}, not a Response`);
  } catch (e) {
    console.error(`llm-baton gateway server: the handler failed: ${e instanceof Error ? e.message : String(e)}`);
    if (res.destroyed) return;
    res.writeHead(500, { "content-type": "text/plain; charset=utf-8", connection: "close" });
    res.end("internal server error\n");
    return;
  }
  if (res.destroyed) {
    await response.body?.cancel().catch(() => {});
    return;
  }

  const headers = {};
  for (const [name, value] of response.headers) if (name !== "set-cookie") headers[name] = value;
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  // A body left unread (refused as too large, or never asked for) is not drained: the
  // connection ends with this response. So does every connection once the server is closing.
  if (!req.complete || closing()) headers.connection = "close";
  res[SERVED] = { target: headers["x-baton-target"], attempts: headers["x-baton-attempts"] };
  res.writeHead(response.status, headers);

  if (!response.body || req.method === "HEAD" || NO_BODY_STATUS.has(response.status)) {
    await response.body?.cancel().catch(() => {});
    res.end();
    return;
  }
  const reader = response.body.getReader();
  res.on("close", () => {
    if (!res.writableFinished) reader.cancel().catch(() => {});
  });
  for (;;) {
    let chunk;
    try {
      chunk = await reader.read();
    } catch {
      // The body failed (the gateway ends a stream with an error event first): cut the
      // connection so the client sees a truncated response, never a clean end.
      res.destroy();
      return;
    }
    if (chunk.done) break;
    if (res.destroyed) return;
    if (!res.write(chunk.value)) await drained(res);
  }
  if (!res.destroyed) res.end();
}

/**
 * What an access log records of one ended exchange: `{ time, method, path, status, ms, target?,
 * attempts?, complete }`. `path` is without its query string (a client may put a key there);
 * `target` and `attempts` are the gateway's x-baton-target and x-baton-attempts; `complete` is
 * false when the connection closed before the response ended (the client left, or it was cut).
 */
function exchangeRecord(req, res, started) {
  const record = {
    time: new Date().toISOString(),
    method: req.method,
    path: (req.url ?? "").split("?")[0],
    status: res.statusCode,
    ms: Math.round((performance.now() - started) * 10) / 10,
  };
  const { target, attempts } = res[SERVED] ?? {};
  if (target) record.target = target;
  if (attempts !== undefined) record.attempts = Number(attempts);
  record.complete = res.writableFinished;
  return record;
}

/** Resolves once `res` can take more ('drain') or its connection is gone ('close'). */
function drained(res) {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

/** A WHATWG Request for node's `req`, its body streamed with backpressure, aborted by `signal`. */
function toRequest(req, signal) {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
  const local = req.socket.localAddress?.includes(":") ? `[${req.socket.localAddress}]` : req.socket.localAddress;
  const origin = `http://${local}:${req.socket.localPort}`;
  // An origin-form target ("/v1/models", even "//x") is a path on this server; an absolute-form
  // one (what a proxy sends) keeps only its path.
  const url = req.url.startsWith("/") ? new URL(`${origin}${req.url}`) : new URL(new URL(req.url).pathname, origin);
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(url, {
    method: req.method,
    headers,
    signal,
    ...(hasBody ? { body: bodyStream(req), duplex: "half" } : {}),
  });
}

/** `req`'s body as a byte stream that pauses the socket while the reader is behind. */
function bodyStream(req) {
  let cancelled = false;
  return new ReadableStream(
    {
      start(controller) {
        req.on("data", (chunk) => {
          if (cancelled) return;
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if (controller.desiredSize <= 0) req.pause();
        });
        req.on("end", () => cancelled || controller.close());
        req.on("error", (e) => cancelled || controller.error(e));
      },
      pull() {
        req.resume();
      },
      cancel() {
        // Refused (too large): read no more of it; the response closes the connection.
        cancelled = true;
        req.pause();
      },
    },
    { highWaterMark: BODY_HIGH_WATER_MARK, size: (chunk) => chunk.byteLength },
  );
}

function describe(value) {
  if (value === null || value === undefined) return String(value);
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return value.constructor?.name && value.constructor !== Object ? `a ${value.constructor.name}` : "an object";
  return `${typeof value} ${String(value)}`;
}
