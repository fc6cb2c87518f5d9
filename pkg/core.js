// The JavaScript face of llm-baton, shared by every runtime entry (node.js, deno.js, workerd.js,
// browser.js). The entries only instantiate the wasm; everything the caller sees is here.
//
// The wasm driver does the real work (deadline, gate, limits, fetch + AbortController). This
// file adds three things it cannot: errors that are real `Error`s (`instanceof BatonError`, a
// stack), a stream as an async iterable, and "stop iterating" meaning "abort the call upstream".

import { WasmBaton, WasmGateway } from "./wasm/llm_baton.js";
import { Gateway } from "./gateway.js";

/** Fields of a driver error worth keeping on a BatonError (see index.d.ts for their meaning). */
const ERROR_FIELDS = ["kind", "timeout", "limitMs", "status", "retryAfterMs", "path", "target", "legs"];

/** Every failure of a call or a config, as a real Error with the driver's typed fields. */
export class BatonError extends Error {
  constructor(detail, options) {
    super(detail.message ?? String(detail.kind), options);
    this.name = "BatonError";
    for (const key of ERROR_FIELDS) {
      if (detail[key] !== undefined) this[key] = detail[key];
    }
  }
}

/**
 * The driver rejects with plain objects `{kind, message, ...}`. Anything else (a wasm trap, a
 * TypeError from a bad argument) is a bug or a misuse rather than a call outcome: it becomes
 * kind "internal" with the original value as `cause`, so callers still need one catch.
 */
function toBatonError(e) {
  if (e instanceof BatonError) return e;
  if (e !== null && typeof e === "object" && !(e instanceof Error) && typeof e.kind === "string") {
    return new BatonError(e);
  }
  const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return new BatonError({ kind: "internal", message: `llm-baton internal error: ${message}` }, { cause: e });
}

export class Baton {
  #wasm;

  /** Validates the config at once; a mistake throws BatonError kind "config" naming its path. */
  constructor(config) {
    try {
      this.#wasm = new WasmBaton(config);
    } catch (e) {
      throw toBatonError(e);
    }
  }

  /** One whole answer for `route` (a route or target name); options go to the driver as given. */
  async complete(route, request, options) {
    try {
      return await this.#wasm.complete(route, request, options ?? {});
    } catch (e) {
      throw toBatonError(e);
    }
  }

  /**
   * The answer as it arrives: an async iterable of `{type: "text" | "reasoning" | "tool_call"}`
   * events, then one `{type: "done", ...summary}`. The call starts at the first `next()`.
   * Leaving the loop early (break, return, throw) aborts the call upstream.
   */
  stream(route, request, options) {
    return new Stream(this.#wasm, route, request, options ?? {});
  }

  /** Every name `complete` and `stream` accept: the routes, then targets not shadowed by one. */
  routes() {
    return this.#wasm.routes();
  }
}

/**
 * An OpenAI- and Anthropic-compatible fetch handler in front of the config's routes (the `model`
 * a client asks for names a route). Validates the config at once, synchronously, with no I/O
 * and no timer, so a Worker may build it at its module's top level; throws BatonError kind
 * "config" naming the field.
 */
export function createGateway(config) {
  try {
    return new Gateway(new WasmGateway(config));
  } catch (e) {
    throw toBatonError(e);
  }
}

/**
 * A single-use async iterator over one streamed call. The driver pushes the deltas of each
 * network read synchronously, as one array; they queue here until the consumer pulls them.
 * The queue is unbounded: a model's answer is small, and pausing would hold the provider
 * connection open for nothing.
 */
class Stream {
  #start;
  #queue = [];
  #head = 0; // next value to hand out: Array#shift is O(n), and a fast stream queues thousands
  #waiting = []; // {resolve, reject} of pending next() calls, oldest first
  #failure = null; // the BatonError to throw once the queue is drained
  #ended = false; // the driver settled (or the consumer left)
  #closed = false; // the consumer left: ignore whatever still arrives
  #controller = new AbortController();
  #unlink = () => {};

  constructor(wasm, route, request, options) {
    this.#start = () => {
      // Our own controller, so leaving the loop can abort the call without touching the
      // caller's signal; the caller's signal still aborts it through the link below.
      const user = options.signal;
      if (user) {
        const forward = () => this.#controller.abort(user.reason);
        if (user.aborted) forward();
        else {
          user.addEventListener("abort", forward, { once: true });
          this.#unlink = () => user.removeEventListener("abort", forward);
        }
      }
      let call;
      try {
        call = wasm.stream(route, request, { ...options, signal: this.#controller.signal }, (batch) => this.#push(batch));
      } catch (e) {
        call = Promise.reject(e);
      }
      call.then(
        (summary) => this.#settle({ type: "done", ...summary }, null),
        (e) => this.#settle(null, toBatonError(e)),
      );
    };
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  next() {
    if (this.#start) {
      const start = this.#start;
      this.#start = null;
      start();
    }
    if (this.#queue.length > this.#head) return Promise.resolve({ value: this.#take(), done: false });
    if (this.#failure) {
      const failure = this.#failure;
      this.#failure = null;
      return Promise.reject(failure);
    }
    if (this.#ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.#waiting.push({ resolve, reject });
    });
  }

  /** The consumer is done (for-await `break`, or an exception in its body): abort upstream. */
  return(value) {
    this.#start = null;
    this.#closed = true;
    this.#queue.length = 0;
    this.#head = 0;
    this.#failure = null;
    if (!this.#ended) {
      this.#ended = true;
      this.#controller.abort(new BatonError({ kind: "cancelled", message: "the stream's consumer stopped reading" }));
      this.#unlink();
    }
    this.#wake();
    return Promise.resolve({ value, done: true });
  }

  #push(batch) {
    if (this.#closed) return;
    for (const ev of batch) this.#queue.push(ev);
    this.#wake();
  }

  #take() {
    const value = this.#queue[this.#head];
    this.#queue[this.#head++] = undefined;
    if (this.#head === this.#queue.length) {
      this.#queue.length = 0;
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue.splice(0, this.#head);
      this.#head = 0;
    }
    return value;
  }

  #settle(done, failure) {
    this.#unlink();
    if (this.#closed) return;
    this.#ended = true;
    if (done) this.#queue.push(done);
    this.#failure = failure;
    this.#wake();
  }

  /** Hands queued values (or the end, or the failure) to pending next() calls, in order. */
  #wake() {
    while (this.#waiting.length > 0 && (this.#queue.length > this.#head || this.#failure || this.#ended)) {
      const waiting = this.#waiting.shift();
      this.next().then(waiting.resolve, waiting.reject);
    }
  }
}
