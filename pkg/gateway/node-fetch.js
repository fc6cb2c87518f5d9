// The Node gateway's way to the providers: node:http and node:https on keep-alive agents, in place
// of Node's fetch. Node's fetch (undici) builds a WHATWG Request, Response, Headers, AbortSignal
// chain and a web stream for every exchange, with its own checks and promise hops per body chunk;
// for a gateway, which does nothing else, that was most of the CPU of a request (bench/gateway.mjs,
// docs/performance.md). This is the part of fetch the wasm uses (src/driver/attempt.rs reads
// `status`, `headers.has/get` and `body.getReader`, src/driver/vertex.rs `arrayBuffer()`), over
// the plain objects Node already makes.
//
// Where it differs from fetch, on purpose: it asks for no compression and sends no `accept`,
// `accept-language`, `sec-fetch-mode` or `user-agent: node` of its own; a redirect is followed as
// fetch follows one (20 at most; 301/302 turn a POST into a GET, 303 anything but HEAD), dropping
// `authorization` when it leaves the origin. An app that replaced globalThis.fetch (a mock, a
// proxy's dispatcher) keeps it: then every attempt goes through that fetch.
import * as http from "node:http";
import * as https from "node:https";

/** Node's own fetch, as this module found it. */
const nodeFetch = globalThis.fetch;
const agents = {
  "http:": new http.Agent({ keepAlive: true }),
  "https:": new https.Agent({ keepAlive: true }),
};
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 20;
/** Bytes of a body read ahead of the wasm before the socket is paused. */
const READ_AHEAD_BYTES = 64 << 10;

/**
 * What pkg/host.js calls for each attempt: `fetch(url, init)`'s contract, for the wasm, whose
 * `init.signal` is an AttemptController's.
 */
export function fetchUpstream(url, init) {
  if (globalThis.fetch !== nodeFetch) return globalThis.fetch(url, { ...init, signal: init.signal?.linked() });
  return new Promise((resolve, reject) => send(new URL(url), init, 0, resolve, reject));
}

/**
 * An attempt's abort controller for pkg/host.js, without AbortController's EventTarget: an attempt
 * that ended is aborted too (its socket may still be open), and an AbortSignal's dispatch and the
 * DOMException every abort() makes cost more than the rest of a small answer's JavaScript.
 */
export class AttemptController {
  signal = new AttemptSignal();
  abort() {
    this.signal.abort();
  }
}

/** AbortSignal's `aborted`, `reason` and "abort" listeners, as send() and a replaced fetch use them. */
class AttemptSignal {
  aborted = false;
  reason = undefined;
  #listeners = [];
  addEventListener(type, listener) {
    if (type === "abort" && !this.aborted) this.#listeners.push(listener);
  }
  removeEventListener(type, listener) {
    const at = this.#listeners.indexOf(listener);
    if (at >= 0) this.#listeners.splice(at, 1);
  }
  abort() {
    if (this.aborted) return;
    this.aborted = true;
    const listeners = this.#listeners;
    this.#listeners = [];
    if (listeners.length === 0) return;
    this.reason = new DOMException("This operation was aborted", "AbortError");
    for (const listener of listeners) listener();
  }
  /** A real AbortSignal that aborts with this one, for a fetch that needs one. */
  linked() {
    const controller = new AbortController();
    if (this.aborted) controller.abort(this.reason);
    else this.addEventListener("abort", () => controller.abort(this.reason));
    return controller.signal;
  }
}

function send(url, init, redirects, resolve, reject) {
  const { signal } = init;
  if (signal?.aborted) return reject(aborted(signal));
  const client = url.protocol === "https:" ? https : url.protocol === "http:" ? http : null;
  if (client === null) return reject(new TypeError(`fetch: ${url.protocol} URLs are not supported (${url.origin})`));
  const body = init.body ?? null;
  const headers = { ...init.headers };
  if (body !== null) headers["content-length"] = Buffer.byteLength(body);
  let request;
  try {
    request = client.request(url, { method: init.method ?? "GET", headers, agent: agents[url.protocol] });
  } catch (e) {
    // An invalid header name or value, as fetch rejects with.
    return reject(e);
  }
  const abort = () => request.destroy(aborted(signal));
  signal?.addEventListener("abort", abort, { once: true });
  const settled = () => signal?.removeEventListener("abort", abort);
  request.on("error", (e) => {
    settled();
    reject(e);
  });
  request.on("response", (message) => {
    const location = message.headers.location;
    if (REDIRECTS.has(message.statusCode) && location !== undefined) {
      settled();
      message.resume();
      if (redirects >= MAX_REDIRECTS) return reject(new TypeError(`fetch: more than ${MAX_REDIRECTS} redirects from ${url.origin}`));
      return redirect(url, init, message.statusCode, location, redirects, resolve, reject);
    }
    resolve(new UpstreamResponse(message, init.method === "HEAD", signal, settled));
  });
  request.end(body ?? undefined);
}

/** Follows a redirect as fetch does (the fetch standard's "HTTP-redirect fetch"). */
function redirect(from, init, status, location, redirects, resolve, reject) {
  let to;
  try {
    to = new URL(location, from);
  } catch {
    return reject(new TypeError(`fetch: a redirect from ${from.origin} to an invalid location`));
  }
  const next = { ...init, headers: { ...init.headers } };
  const method = (init.method ?? "GET").toUpperCase();
  if (((status === 301 || status === 302) && method === "POST") || (status === 303 && method !== "HEAD" && method !== "GET")) {
    next.method = "GET";
    next.body = null;
    for (const name of Object.keys(next.headers)) {
      if (/^content-(type|encoding|language|location)$/i.test(name)) delete next.headers[name];
    }
  }
  if (to.origin !== from.origin) {
    for (const name of Object.keys(next.headers)) if (name.toLowerCase() === "authorization") delete next.headers[name];
  }
  send(to, next, redirects + 1, resolve, reject);
}

/** What fetch rejects with once its signal aborted: the signal's reason. */
function aborted(signal) {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

/** The part of a fetch Response the wasm reads. */
class UpstreamResponse {
  constructor(message, head, signal, settled) {
    this.status = message.statusCode;
    this.headers = new NodeHeaders(message.headers);
    const empty = head || this.status === 204 || this.status === 304;
    if (empty) {
      message.resume();
      message.on("end", settled);
    }
    this.body = empty ? null : new UpstreamBody(message, signal, settled);
  }

  /** The whole body (a Vertex token's answer, src/driver/vertex.rs). */
  async arrayBuffer() {
    if (this.body === null) return new ArrayBuffer(0);
    const reader = this.body.getReader();
    const parts = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
    }
    const whole = Buffer.concat(parts);
    return whole.buffer.slice(whole.byteOffset, whole.byteOffset + whole.byteLength);
  }
}

/**
 * A fetch Headers' `has` and `get` over node's header object (lowercase names, arrays joined):
 * an upstream answer's here, a client request's in node-exchange.js.
 */
export class NodeHeaders {
  #headers;
  constructor(headers) {
    this.#headers = headers;
  }
  has(name) {
    return this.#headers[name.toLowerCase()] !== undefined;
  }
  get(name) {
    const value = this.#headers[name.toLowerCase()];
    return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
  }
}

/** A reader of an UpstreamBody (exported for tests, which count its reads). */
export class UpstreamReader {
  #body;
  #byob;
  constructor(body, byob) {
    this.#body = body;
    this.#byob = byob;
  }
  read(view) {
    return this.#body.read(this.#byob ? view : null);
  }
}

/**
 * A body as a ReadableStream's reader sees it: `getReader()` for a default reader (one network
 * chunk per read), `getReader({mode: "byob"})` for one that copies all that has arrived into the
 * buffer it is given. The socket is paused while READ_AHEAD_BYTES wait unread, so a reader that
 * stops reading stops the upstream too. It errors when the connection ends before the body
 * (undici's "terminated") or the signal aborts.
 */
class UpstreamBody {
  #message;
  #chunks = [];
  #queued = 0;
  #ended = false;
  #error = null;
  /** A read waiting for bytes: `{ view, resolve, reject }`. */
  #waiting = null;

  constructor(message, signal, settled) {
    this.#message = message;
    message.on("data", (chunk) => {
      this.#chunks.push(chunk);
      this.#queued += chunk.byteLength;
      if (this.#queued >= READ_AHEAD_BYTES) message.pause();
      this.#wake();
    });
    message.on("end", () => {
      this.#ended = true;
      settled();
      this.#wake();
    });
    // A connection cut mid-body, or the request destroyed by the signal.
    message.on("close", () => {
      if (this.#ended) return;
      settled();
      this.#error = signal?.aborted ? aborted(signal) : new TypeError("terminated: the connection closed before the body ended");
      this.#wake();
    });
  }

  getReader(options) {
    return new UpstreamReader(this, options?.mode === "byob");
  }

  /** The next read: into `view` (a BYOB read), or of one chunk (`view` null). */
  read(view) {
    return new Promise((resolve, reject) => {
      this.#waiting = { view, resolve, reject };
      this.#wake();
      if (this.#waiting !== null) this.#message.resume();
    });
  }

  /** Settles the waiting read, if something is there for it. */
  #wake() {
    const waiting = this.#waiting;
    if (waiting === null) return;
    if (this.#chunks.length > 0) {
      this.#waiting = null;
      waiting.resolve({ done: false, value: waiting.view ? this.#fill(waiting.view) : this.#take() });
    } else if (this.#error !== null) {
      this.#waiting = null;
      waiting.reject(this.#error);
    } else if (this.#ended) {
      this.#waiting = null;
      const value = waiting.view ? new Uint8Array(waiting.view.buffer, waiting.view.byteOffset, 0) : undefined;
      waiting.resolve({ done: true, value });
    }
  }

  /** The oldest chunk. */
  #take() {
    const chunk = this.#chunks.shift();
    this.#queued -= chunk.byteLength;
    return chunk;
  }

  /** As much as has arrived, copied into `view`: a view of the filled part of its buffer. */
  #fill(view) {
    let filled = 0;
    while (this.#chunks.length > 0 && filled < view.byteLength) {
      const chunk = this.#chunks[0];
      const n = Math.min(chunk.byteLength, view.byteLength - filled);
      view.set(n === chunk.byteLength ? chunk : chunk.subarray(0, n), filled);
      filled += n;
      if (n === chunk.byteLength) this.#chunks.shift();
      else this.#chunks[0] = chunk.subarray(n);
      this.#queued -= n;
    }
    return new Uint8Array(view.buffer, view.byteOffset, filled);
  }
}
