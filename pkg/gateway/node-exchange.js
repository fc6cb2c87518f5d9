// The Node gateway's requests without a WHATWG Request or Response: node:http's `req` and `res`
// are read and written as they are, and pkg/gateway.js's `serve` runs the call on them. A Request,
// its Headers and body stream, an AbortSignal per request and a Response with its stream were
// about half of the Node command's CPU for a small answer (bench/gateway.mjs, docs/performance.md);
// the gateway's fetch handler still answers what this does not (`/metrics`), and every other
// server (Deno.serve, workerd) keeps it.
import { CORE, OUTPUT_QUEUE_BYTES, concat, logRefusedPreflight, observers, serve } from "../gateway.js";
import { NodeHeaders } from "./node-fetch.js";

/** Whether `handler` (what serve() was given) is a Gateway that serveNode can serve. */
export function servesNode(handler) {
  return handler?.[CORE] !== undefined;
}

/**
 * Serves `gateway` (createGateway's result) on node's `req` and `res`. Resolves true once the
 * call is under way, or false for a request only its fetch handler answers (`/metrics`), before
 * anything of it is read. `server.closing()`: the server is closing; `server.served(headers)`:
 * the head the response is written with.
 */
export async function serveNode(gateway, req, res, server) {
  const core = gateway[CORE];
  const started = performance.now();
  const path = pathOf(req.url);
  const metricsLink = core.runtime.metrics;
  let metrics = null;
  if (metricsLink) {
    if (path === "/metrics") return false;
    metrics = metricsLink.current ?? (await metricsLink.load());
  }
  const headers = new NodeHeaders(req.headers);
  const step = core.wasm.decide(req.method, path, headers);
  if (step.status !== undefined) {
    if (step.status === 403 && req.method === "OPTIONS") logRefusedPreflight({ headers, url: `http://gateway${path}` }, step);
    metrics?.answered(step.status, started);
    writeReply(req, res, step, server);
    return true;
  }
  const body = await readNodeBody(req, step.limit);
  const [telemetry, meter] = await observers(core, step, body, started, metrics);
  serve(core, step, body, nodeExchange(req, res, headers, server), telemetry, meter);
  return true;
}

/**
 * A call's exchange on node:http's `req` and `res` (serveNode): the client leaving (`res` closed
 * before it finished) cancels the call.
 */
function nodeExchange(req, res, headers, server) {
  return {
    request: { headers },
    server: true,
    listen(abort) {
      if (res.destroyed) {
        abort();
        return () => {};
      }
      const left = () => {
        if (!res.writableFinished) abort();
      };
      res.on("close", left);
      return () => res.off("close", left);
    },
    reply: (reply) => writeReply(req, res, reply, server),
    commit(headers, stop) {
      server.served(headers);
      if (res.destroyed) {
        stop();
        return nodeClientStream(res);
      }
      res.writeHead(200, server.closing() ? { ...headers, connection: "close" } : headers);
      return nodeClientStream(res);
    },
    abandoned() {},
  };
}

/** A whole reply on node's `res`: without a body for HEAD, 204 and 304; the length given. */
function writeReply(req, res, reply, server) {
  server.served(reply.headers);
  if (res.destroyed) return;
  const headers = { ...reply.headers };
  // A body left unread (refused as too large, or never asked for) is not drained: the
  // connection ends with this response. So does every connection once the server is closing.
  if (!req.complete || server.closing()) headers.connection = "close";
  const body = req.method === "HEAD" || NO_BODY_STATUS.has(reply.status) || reply.body == null ? "" : reply.body;
  if (!NO_BODY_STATUS.has(reply.status)) headers["content-length"] = Buffer.byteLength(body);
  res.writeHead(reply.status, headers);
  res.end(body);
}

const NO_BODY_STATUS = new Set([204, 205, 304]);

/**
 * jsClientStream's contract on node's `res`. What one poll of the call writes goes out as one
 * write (corked until the poll's outputs are handed over); `room()` waits while OUTPUT_QUEUE_BYTES
 * wait in `res` for a client that reads nothing.
 */
function nodeClientStream(res) {
  let corked = false;
  let roomWait = null;
  const uncork = () => {
    if (!corked) return;
    corked = false;
    res.uncork();
  };
  return {
    write(bytes) {
      if (bytes.byteLength === 0 || res.destroyed) return;
      if (!corked) {
        corked = true;
        res.cork();
        process.nextTick(uncork);
      }
      res.write(bytes);
    },
    // What this turn wrote goes out before the end: end() alone leaves it corked a tick longer,
    // and a closing server may cut the connection as idle in between (Node 22).
    close() {
      uncork();
      if (!res.destroyed) res.end();
    },
    // The body failed (the gateway ends a stream with an error event first): cut the connection
    // so the client sees a truncated response, never a clean end.
    error: () => res.destroy(),
    room() {
      if (res.writableLength < OUTPUT_QUEUE_BYTES || res.destroyed) return undefined;
      roomWait ??= new Promise((resolve) => {
        const done = () => {
          res.off("drain", done);
          res.off("close", done);
          roomWait = null;
          resolve();
        };
        res.on("drain", done);
        res.on("close", done);
      });
      return roomWait;
    },
  };
}

/** A path a URL parser leaves as it is: no dot segment, escape, backslash or other character it rewrites. */
const PLAIN_PATH = /^(?:\/[\w\-~]+)+\/?$|^\/$/;

/**
 * The path of a request target as the fetch handler sees it (`new URL(...).pathname`):
 * `/v1/models?x` -> `/v1/models`; an origin-form target ("/v1/models", even "//x") is a path on
 * this server; an absolute-form one (what a proxy sends) keeps only its path.
 */
function pathOf(target) {
  if (!target.startsWith("/")) return new URL(new URL(target).pathname, "http://gateway").pathname;
  const query = target.search(/[?#]/);
  const path = query < 0 ? target : target.slice(0, query);
  return PLAIN_PATH.test(path) ? path : new URL(`http://gateway${path}`).pathname;
}

/**
 * `req`'s body as `{bytes}`, at most `limit` bytes plus one (the wasm refuses a body over its
 * cap; then the rest is left unread and the connection closes with the reply), or `{error}`.
 */
function readNodeBody(req, limit) {
  return new Promise((resolve) => {
    const parts = [];
    let size = 0;
    const done = (result) => {
      req.off("data", data);
      req.off("end", end);
      req.off("error", failed);
      req.off("close", end);
      resolve(result);
    };
    const data = (chunk) => {
      parts.push(chunk);
      size += chunk.byteLength;
      if (size > limit) {
        req.pause();
        end();
      }
    };
    const end = () => done({ bytes: concat(parts, size).subarray(0, limit + 1) });
    const failed = (e) => done({ error: e instanceof Error ? e.message : String(e) });
    req.on("data", data);
    req.on("end", end);
    req.on("error", failed);
    // The client left mid-body: what arrived, which the call cancels as the response closes.
    req.on("close", end);
  });
}

