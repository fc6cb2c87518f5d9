// The edge gateway's HTTP plumbing: a standard fetch handler, so the same object serves a
// Cloudflare Worker (`export default gateway`) and `Deno.serve(gateway.fetch)`; and the same
// plumbing in process as `baton.fetch`, the fetch an official SDK is given.
//
// Everything about a call (parsing the client's body, the engine, the status, the client's wire
// format) is in the wasm (src/driver/gateway.rs). This file only routes by method and path,
// checks the gateway key and that a POST is declared JSON, reads the body under its size cap
// (the deployed gateway only: in process the caller is trusted and its body is in memory),
// links the client's disconnect to the call's AbortSignal, and turns the driver's replies into a
// Response: held until the route commits, then a ReadableStream fed as deltas arrive.

import { remoteParent } from "./telemetry.js";

const ENDPOINTS = {
  "/v1/chat/completions": { method: "POST", format: "openai" },
  "/v1/messages": { method: "POST", format: "anthropic" },
  "/v1/responses": { method: "POST", format: "responses" },
  "/v1/models": { method: "GET", format: "openai" },
  "/v1/health": { method: "GET", format: "openai" },
};
// What `baton.fetch` serves, matched on the path's end: an SDK's baseURL may be anything. Health
// is `baton.health()`.
const IN_PROCESS = Object.entries(ENDPOINTS)
  .filter(([path]) => path !== "/v1/health")
  .map(([path, endpoint]) => [path.slice("/v1".length), endpoint]);
// In process, llm-baton has already retried and failed over: an SDK retrying an error reply
// would run the whole route again (both official SDKs obey this header before their own rules).
const NO_RETRY = { "x-should-retry": "false" };
const DEADLINE_HEADER = "x-baton-deadline-ms";
// The largest deadline the wasm takes (a JavaScript timer's limit, src/value.rs MAX_MS).
const MAX_MS = 2_147_483_647;
const EXPOSED_HEADERS = "x-baton-target, x-baton-attempts, retry-after";
// What a browser may send, answered to every preflight whatever it asks for: the gateway's own
// headers and those the official SDKs (openai, @anthropic-ai/sdk) send from a browser. Anything
// else is refused by the browser before the request leaves.
const ALLOWED_HEADERS = [
  "accept",
  "authorization",
  "content-type",
  "x-api-key",
  "x-baton-deadline-ms",
  "traceparent",
  "tracestate",
  "anthropic-version",
  "anthropic-beta",
  "anthropic-dangerous-direct-browser-access",
  "openai-organization",
  "openai-project",
  "x-stainless-arch",
  "x-stainless-helper",
  "x-stainless-helper-method",
  "x-stainless-lang",
  "x-stainless-os",
  "x-stainless-package-version",
  "x-stainless-retry-count",
  "x-stainless-runtime",
  "x-stainless-runtime-version",
  "x-stainless-timeout",
].join(", ");
const utf8 = new TextEncoder();

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

  /** The handler. An arrow property, so `Deno.serve(gateway.fetch)` works unbound. */
  fetch = (request) => serveHttp(this.#core, request);
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

/** What both handlers serve with: the wasm object's methods, each entered through the loop. */
function gatewayCore(instance, runtime) {
  const wasm = {
    corsOrigin: (origin) => runtime.enter(() => instance().corsOrigin(origin)),
    refuse: (format, status, message) => runtime.enter(() => instance().refuse(format, status, message)),
    authorized: (a, k) => runtime.enter(() => instance().authorized(a, k)),
    models: () => runtime.enter(() => instance().models()),
    health: () => runtime.enter(() => instance().health()),
    maxBodyBytes: () => runtime.enter(() => instance().maxBodyBytes()),
    deadlineMs: () => runtime.enter(() => instance().deadlineMs()),
  };
  return { wasm, runtime, instance };
}

/** The deployed gateway: CORS, the gateway key, a JSON content-type and a capped body. */
async function serveHttp(core, request) {
  const { wasm } = core;
  const url = new URL(request.url);
  const origin = wasm.corsOrigin(request.headers.get("origin") ?? undefined);
  const cors = origin ? { "access-control-allow-origin": origin, "access-control-expose-headers": EXPOSED_HEADERS, vary: "origin" } : {};
  const path = url.pathname.replace(/\/+$/, "");
  const endpoint = ENDPOINTS[path];
  const format = endpoint?.format ?? (path.endsWith("/messages") ? "anthropic" : "openai");

  if (request.method === "OPTIONS" && origin) {
    return new Response(null, {
      status: 204,
      headers: {
        ...cors,
        "access-control-allow-methods": "GET, POST, OPTIONS",
        "access-control-allow-headers": ALLOWED_HEADERS,
        "access-control-max-age": "86400",
      },
    });
  }
  if (!endpoint) {
    const served = Object.entries(ENDPOINTS).map(([end, e]) => `${e.method} ${end}`).join(", ");
    const message = `no endpoint ${request.method} ${url.pathname}; the gateway serves ${served}`;
    return respond(wasm.refuse(format, 404, message), cors);
  }
  if (request.method !== endpoint.method) {
    const reply = wasm.refuse(format, 405, `${url.pathname} takes ${endpoint.method}, not ${request.method}`);
    return respond(reply, { ...cors, allow: endpoint.method });
  }
  const authorization = request.headers.get("authorization") ?? undefined;
  if (!wasm.authorized(authorization, request.headers.get("x-api-key") ?? undefined)) {
    const message = authorization || request.headers.has("x-api-key")
      ? "the gateway key is not valid"
      : "a gateway key is required: send Authorization: Bearer <key> or x-api-key: <key>";
    return respond(wasm.refuse(format, 401, message), cors);
  }
  if (endpoint.method === "GET") return respond(path === "/v1/health" ? wasm.health() : wasm.models(), cors);
  const notJson = contentTypeProblem(request.headers.get("content-type"));
  if (notJson) return respond(wasm.refuse(format, 415, `${request.method} ${path} ${notJson}`), cors);

  const body = await readBody(request, wasm.maxBodyBytes());
  if (body.refused) return respond(wasm.refuse(format, body.refused, body.message), cors);
  return serve(core, format, body.text, request, { headers: () => cors, inProcess: false });
}

/**
 * `baton.fetch`: no gateway key, no CORS, no size cap (the caller already holds the body).
 * Every error reply says `x-should-retry: false`; the request's signal aborting rejects (before
 * the answer's headers) or errors the body (after), as a network fetch does, so the SDK reports
 * its own timeout or the user's cancel.
 */
async function serveInProcess(core, request) {
  const { wasm } = core;
  const signal = request.signal;
  if (signal?.aborted) throw abortReason(signal);
  const url = new URL(request.url);
  const path = url.pathname.replace(/\/+$/, "");
  const [, endpoint] = IN_PROCESS.find(([end]) => path.endsWith(end)) ?? [];
  const format = endpoint?.format ?? (path.endsWith("/messages") ? "anthropic" : "openai");
  const errorHeaders = (status) => (status >= 400 ? NO_RETRY : {});
  const reply = (r, extra = {}) => respond(r, { ...errorHeaders(r.status), ...extra });
  if (!endpoint) {
    const served = IN_PROCESS.map(([end, e]) => `${e.method} …${end}`).join(", ");
    return reply(wasm.refuse(format, 404, `baton.fetch has no endpoint ${request.method} ${url.pathname}; it serves ${served} (matched on the path's end, any host)`));
  }
  if (request.method !== endpoint.method) {
    return reply(wasm.refuse(format, 405, `${url.pathname} takes ${endpoint.method}, not ${request.method}`), { allow: endpoint.method });
  }
  if (endpoint.method === "GET") return reply(wasm.models());
  let text;
  try {
    text = await request.text();
  } catch (e) {
    if (signal?.aborted) throw abortReason(signal);
    return reply(wasm.refuse(format, 400, `could not read the request body: ${e instanceof Error ? e.message : String(e)}`));
  }
  return serve(core, format, text, request, { headers: errorHeaders, inProcess: true });
}

/** What a standard fetch rejects with when its signal aborts: the signal's reason. */
function abortReason(signal) {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

/**
 * Runs the call and resolves with the Response: an error or a whole answer when the driver
 * settles before committing, else a 200 stream as soon as the first delta is delivered.
 * `mode.headers(status)`: headers added to every response; `mode.inProcess`: the caller's abort
 * rejects or errors the body (baton.fetch) instead of ending a response nobody reads.
 */
function serve({ wasm, runtime, instance }, format, text, request, mode) {
  return new Promise((resolve, reject) => {
    let controller;
    let committed = false;
    let task = null;
    const respondWith = (reply) => resolve(respond(reply, mode.headers(reply.status)));
    // The client's disconnect (request.signal) and a reader that stops reading (cancel below)
    // both cancel the call, which aborts the upstream attempt at once.
    const stop = () => {
      if (task !== null) runtime.cancel(task);
    };
    const signal = request.signal;
    // In process, settle as a network fetch would before the cancelled call's own reply can.
    const abort = () => {
      if (mode.inProcess && committed) controller.error(abortReason(signal));
      else if (mode.inProcess) reject(abortReason(signal));
      stop();
    };
    const stream = new ReadableStream({
      start(c) {
        controller = c;
      },
      cancel: stop,
    });
    const write = (chunk) => {
      if (!chunk) return;
      try {
        controller.enqueue(utf8.encode(chunk));
      } catch {
        // The reader is gone (cancelled): the call is being aborted; nothing to deliver.
      }
    };
    const finish = (reply) => {
      signal?.removeEventListener("abort", abort);
      if (!committed) return respondWith(reply);
      write(reply.body);
      try {
        controller.close();
      } catch {
        // Already cancelled by the client.
      }
    };
    const trace = runtime.telemetry && startTrace(runtime.telemetry, text, request, !mode.inProcess);
    const broken = (e) => {
      trace?.trapped(e);
      signal?.removeEventListener("abort", abort);
      if (committed) controller.error(e);
      else respondWith(wasm.refuse(format, 500, e.message));
    };
    const handler = {
      output(out) {
        if (out.type === "event") {
          if (out.event.type === "leg") runtime.health?.report(out.event);
          trace?.event(out.event);
        } else if (out.type === "done") trace.done(out.summary);
        else if (out.type === "failed") trace.failed(out.error);
        else if (out.type === "request") trace?.request(out.request);
        else if (out.type === "commit") {
          committed = true;
          resolve(new Response(stream, { status: 200, headers: { ...out.headers, ...mode.headers(200) } }));
        } else if (out.type === "chunk") write(out.text);
        else if (out.type === "reply") {
          // A request refused before its call started (a bad body, an unknown model).
          trace?.failed({ kind: "config", message: `the gateway refused the request (HTTP ${out.reply.status})`, status: out.reply.status });
          finish(out.reply);
        }
      },
      trapped: (cause) => broken(runtime.internalError(cause)),
      attemptHeaders: trace && ((target, attempt) => trace.attemptHeaders(target, attempt)),
    };
    const begin = (waitedMs) => {
      try {
        const deadline = deadlineOf(request.headers, wasm.deadlineMs);
        const reports = Boolean(runtime.health);
        const traced = trace !== undefined && trace !== null;
        task = runtime.spawn(
          () => instance().call(format, text, deadline, waitedMs, reports, traced, traced && runtime.telemetry.recordContent),
          handler,
          runtime.internalError,
        );
      } catch (e) {
        return broken(e);
      }
      if (signal?.aborted) abort();
      else signal?.addEventListener("abort", abort, { once: true });
    };
    // With a health store, the request starts once the store answered (or the wait ran out).
    if (runtime.health) runtime.health.admit().catch(() => 0).then(begin);
    else begin(0);
  });
}

/**
 * The call's deadline header for the wasm: `x-baton-deadline-ms` (else the config's
 * `deadlineMs`), shortened to the client's own timeout when the official SDKs send it
 * (`x-stainless-timeout`, whole seconds): the SDK gives up then anyway, so the route plans its
 * attempts in the time the caller really has, and a timeout is llm-baton's, with its legs.
 * An invalid `x-baton-deadline-ms` is passed on as it is, for the wasm to refuse by name.
 */
function deadlineOf(headers, configured) {
  const own = headers.get(DEADLINE_HEADER) ?? undefined;
  const sdkMs = Number(headers.get("x-stainless-timeout") ?? NaN) * 1000;
  if (!(sdkMs > 0 && sdkMs <= MAX_MS)) return own;
  const ownMs = own === undefined ? configured() : Number(own);
  if (own !== undefined && !(ownMs > 0)) return own;
  return ownMs !== undefined && ownMs <= sdkMs ? own : String(sdkMs);
}

/**
 * The trace of one request: a span named for the client's `model` (SERVER at the deployed
 * gateway; CLIENT for baton.fetch, whose caller is in this process), continuing the client's
 * trace when it sent a valid `traceparent`, else under the tracer's active context. The body is
 * read again here only for its name (the wasm parses it for real, and refuses what it cannot read).
 */
function startTrace(telemetry, text, request, server) {
  let model;
  let stream = false;
  try {
    const body = JSON.parse(text);
    if (typeof body?.model === "string") model = body.model;
    stream = body?.stream === true;
  } catch {
    // The wasm answers a 400 for it; the span says the request was refused.
  }
  const parent = remoteParent(request.headers.get("traceparent") ?? undefined, request.headers.get("tracestate") ?? undefined);
  return telemetry.call({ route: model ?? "unknown", stream, parent, server });
}

/**
 * Why a POST's content-type is refused, or undefined when it is JSON. Requiring
 * `application/json` makes every cross-site browser POST a CORS preflight, which the gateway
 * answers only for configured origins: a web page can no longer send a `text/plain` "simple
 * request" to a gateway on localhost and spend its keys.
 */
function contentTypeProblem(value) {
  const type = value?.split(";")[0].trim().toLowerCase();
  if (type === "application/json") return undefined;
  const got = value ? JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value) : "none";
  return `needs the header content-type: application/json (got ${got}); send the body as JSON with that header`;
}

/**
 * The warning to print once when a gateway is created without `gateway.apiKeys` (WasmGateway's
 * `open()`): such a gateway serves anyone who can reach it, with the provider keys it holds.
 */
export function openGatewayWarning() {
  return (
    "llm-baton gateway: no gateway.apiKeys are configured, so anyone who can reach this gateway can spend " +
    "its provider keys. Set gateway.apiKeys to a list of keys (clients send one as `Authorization: Bearer <key>` " +
    "or `x-api-key: <key>`), e.g. { gateway: { apiKeys: [process.env.GATEWAY_KEY] } }, or keep the gateway " +
    "on a network only you can reach."
  );
}

function respond(reply, extraHeaders) {
  return new Response(reply.body, { status: reply.status, headers: { ...reply.headers, ...extraHeaders } });
}

/** The body as text, or `{refused: status, message}`: 413 over `limit` bytes, 400 unreadable. */
async function readBody(request, limit) {
  const tooLarge = { refused: 413, message: `the request body is larger than the gateway's limit of ${limit} bytes (gateway.maxBodyBytes)` };
  const declared = Number(request.headers.get("content-length"));
  if (declared > limit) return tooLarge;
  if (!request.body) return { text: "" };
  const reader = request.body.getReader();
  const parts = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        reader.cancel().catch(() => {});
        return tooLarge;
      }
      parts.push(value);
    }
  } catch (e) {
    return { refused: 400, message: `could not read the request body: ${e instanceof Error ? e.message : String(e)}` };
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.byteLength;
  }
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
  } catch {
    return { refused: 400, message: "the request body is not valid UTF-8 JSON" };
  }
}
