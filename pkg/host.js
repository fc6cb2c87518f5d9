// The wasm's event loop: every entry into the wasm goes through this file, under one try/catch.
//
// A call is a task of the wasm (src/driver/host.rs). This loop polls it when something it waits
// on happened (a promise settled, a timer fired, the caller cancelled) and hands its outputs
// (events, deltas, the outcome) to the caller's code after the wasm has returned. The wasm holds
// no JS callback and JS holds no wasm closure, so if the wasm ever traps (a bug), the trap is
// caught right here: every call of the instance settles with BatonError kind "internal", every
// AbortController it made is aborted (the sockets close), and the instance is replaced, so the
// next call works on the same Baton and gateway objects without a restart.

/** A thrown driver error `{kind, message, …}`: an outcome, not a trap. */
export function isDriverError(e) {
  return e !== null && typeof e === "object" && !(e instanceof Error) && typeof e.kind === "string";
}

const encoder = new TextEncoder();

/**
 * The reason every dropped attempt's controller aborts with, made once: most of them belong to
 * attempts that already ended, and an abort() without a reason makes a DOMException, with its stack
 * (in Deno about 20 us, a twentieth of a small answer's CPU). The wasm never reads it.
 */
const ATTEMPT_OVER = new DOMException("llm-baton ended the attempt", "AbortError");

/** Dropped controllers wait for a timer due this soon (see flushAborts)... */
const ABORT_WINDOW_MS = 10;
/** ...but never longer than this in all, so a socket still closes promptly. */
export const ABORT_MAX_WAIT_MS = 50;

/**
 * The loop for one wasm-bindgen module (`wasm`: the Baton's, or the gateway's), whose instance it
 * owns: `attach` it once the module is instantiated. Each module has its own tasks, generation
 * and controllers, so a trap in one never touches the other. `oneTimer: false` gives each timer
 * its own runtime timer (workerd), instead of one per instant (see dueAt). `streamBodies: true`
 * sends each attempt's body as a stream (Deno; see services.fetch). `fetch`: what sends each
 * attempt instead of the global fetch, and `Controller`: the class of its attempts' abort
 * controllers, instead of AbortController (the Node gateway's, pkg/gateway/node-fetch.js).
 */
export function createHost(wasm, { oneTimer = true, streamBodies = false, fetch: send, Controller = AbortController } = {}) {
  /** Bumped each time the instance is replaced; objects built on an older one rebuild. */
  let generation = 0;
  /** Why the instance could not be replaced after a trap, if it could not. */
  let broken = null;
  /** task id -> { output(value), trapped(error), attemptHeaders? } for each running task. */
  const tasks = new Map();
  /** Tasks with a poll already queued. */
  const queued = new Set();
  /** The AbortControllers of this instance's attempts that are still open. */
  let controllers = new Set();

  const services = {
    schedule(task) {
      if (queued.has(task)) return;
      queued.add(task);
      const gen = generation;
      queueMicrotask(() => {
        queued.delete(task);
        if (gen === generation) run(task);
      });
    },
    watch(promise, slot) {
      const gen = generation;
      promise.then(
        (value) => settle(gen, slot, true, value),
        (error) => settle(gen, slot, false, error),
      );
    },
    setTimer(ms, slot) {
      const gen = generation;
      if (!oneTimer) return setTimeout(() => settle(gen, slot, true, undefined), ms);
      // The instant the wasm computed `ms` from (its clock is whole milliseconds).
      const at = Math.floor(performance.now()) + ms;
      let group = dueAt.get(at);
      if (!group) {
        group = new Set();
        group.handle = setTimeout(() => fire(at), ms);
        dueAt.set(at, group);
      }
      const timer = { at, slot, gen };
      group.add(timer);
      return timer;
    },
    clearTimer(timer) {
      if (!oneTimer) return clearTimeout(timer);
      // Its slot is freed now: a fire() that has already taken it skips it, without entering the wasm.
      timer.cleared = true;
      const group = dueAt.get(timer.at);
      if (!group?.delete(timer) || group.size > 0) return;
      clearTimeout(group.handle);
      dueAt.delete(timer.at);
    },
    controller() {
      const controller = new Controller();
      controllers.add(controller);
      return controller;
    },
    /**
     * Sends an attempt with the runtime's fetch, looked up at each call (an app or a test may
     * replace it). Deno's fetch sends a request again by itself when a connection it reused is
     * reset before the response headers, so the provider gets (and may bill) a request no attempt
     * counts; it does so only for a body it can replay, which a stream is not. So there the body
     * goes as a stream of one chunk, and such a reset reaches the engine as a failed attempt, which
     * the gate counts and may retry (docs/errors.md). Node and workerd send a request once.
     */
    fetch(url, init) {
      if (streamBodies) {
        const bytes = encoder.encode(init.body);
        init.body = new ReadableStream({
          start(c) {
            c.enqueue(bytes);
            c.close();
          },
        });
        init.duplex = "half";
      }
      return send ? send(url, init) : globalThis.fetch(url, init);
    },
    /**
     * Signs `data` with the RSA key in `pkcs8` (DER), RSASSA-PKCS1-v1_5 with SHA-256, for a Vertex
     * service account's token (src/driver/vertex.rs): WebCrypto in every runtime, so the wasm
     * carries no RSA. Both arrays are views into the wasm's memory, copied before anything awaits.
     */
    async signRs256(pkcs8, data) {
      const [keyBytes, bytes] = [pkcs8.slice(), data.slice()];
      const algorithm = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
      const key = await crypto.subtle.importKey("pkcs8", keyBytes, algorithm, false, ["sign"]);
      return new Uint8Array(await crypto.subtle.sign(algorithm, key, bytes));
    },
    abort(controller) {
      controllers.delete(controller);
      if (aborting.length === 0) abortingSince = performance.now();
      aborting.push(controller);
    },
    /**
     * The trace headers for an attempt of `task` being sent now (`{traceparent, tracestate?}`),
     * from the task's handler when it traces (pkg/telemetry.js), else undefined. Called from inside
     * a poll, so nothing may throw here: a throw gives no headers.
     */
    attemptHeaders(task, target, attempt) {
      const hook = tasks.get(task)?.attemptHeaders;
      if (!hook) return undefined;
      try {
        return hook(target, attempt);
      } catch {
        return undefined;
      }
    },
    /**
     * Undefined while `task`'s reader has room for more, else a promise that settles once it
     * has (pkg/gateway.js: a client that stopped reading; its `room` reads a number and never
     * throws, as nothing called from a poll may).
     */
    room(task) {
      return tasks.get(task)?.room?.();
    },
  };

  /**
   * Controllers the polls dropped, not yet aborted. They are aborted after the burst of work the
   * polls are part of: an abort costs far more than settling a call (the runtime builds an error
   * and tears the socket down), so when 300 deadlines expire together every caller hears first and
   * the sockets close a moment later (bench/load.mjs, p99 lateness at 300 on a loaded 2-core
   * machine: Node 297 -> 92 ms, workerd 154 -> 42 ms). In workerd each poll defers its own list:
   * a timer belongs to the request that set it, and so do the controllers that poll dropped.
   * Elsewhere see flushAborts.
   */
  let aborting = [];
  /** When the oldest controller in `aborting` was dropped (performance.now()). */
  let abortingSince = 0;
  /** A flushAborts is queued. */
  let flushQueued = false;

  /**
   * Timers by the instant they are due, when the runtime's timers are shared by the whole
   * process (all but workerd, where a timer belongs to the request that set it): one runtime
   * timer per instant, whose callback settles every slot due then and every other slot that has
   * come due meanwhile, before the runtime turns to I/O or the aborts. When 300 deadlines expire
   * together, each caller hears at once instead of after the sockets of those before it closed.
   */
  const dueAt = new Map();

  function fire(at) {
    let due = take([at]);
    while (due.length > 0) {
      for (const timer of due) {
        if (!timer.cleared) settle(timer.gen, timer.slot, true, undefined);
      }
      // Settling takes time (about 30 µs a timer): what came due meanwhile settles now too.
      const now = Math.floor(performance.now());
      due = take([...dueAt.keys()].filter((when) => when <= now).sort((a, b) => a - b));
    }
  }

  /** The timers due at `instants`, in that order, taken out of dueAt with their runtime timers. */
  function take(instants) {
    const due = [];
    for (const when of instants) {
      const group = dueAt.get(when);
      clearTimeout(group.handle);
      dueAt.delete(when);
      due.push(...group);
    }
    return due;
  }

  /** Node's setImmediate runs once every timer due now has fired; elsewhere the next timer turn. */
  const later = typeof globalThis.setImmediate === "function" ? globalThis.setImmediate : (f) => setTimeout(f, 0);

  function abortLater() {
    if (aborting.length === 0) return;
    if (oneTimer) {
      if (!flushQueued) {
        flushQueued = true;
        later(flushAborts);
      }
      return;
    }
    const list = aborting;
    aborting = [];
    later(() => {
      for (const controller of list) controller.abort(ATTEMPT_OVER);
    });
  }

  /**
   * Aborts the dropped controllers, unless a timer is due within ABORT_WINDOW_MS: then they wait
   * for it, at most ABORT_MAX_WAIT_MS in all. 300 calls started together have deadlines over
   * 20-40 ms of instants (starting a call takes time); in Node an abort costs about 0.2 ms of the
   * event loop, half of it later as the socket closes, so the aborts of the first instant's calls
   * would hold up the next instants' timers, and lateness would grow instant by instant.
   */
  function flushAborts() {
    flushQueued = false;
    if (aborting.length === 0) return;
    const now = performance.now();
    let next = Infinity;
    for (const when of dueAt.keys()) next = Math.min(next, when);
    const wait = next - now;
    if (wait < ABORT_WINDOW_MS && now - abortingSince < ABORT_MAX_WAIT_MS) {
      // After that timer's callback (a flush that runs first just waits again).
      flushQueued = true;
      setTimeout(flushAborts, Math.min(Math.max(wait, 0) + 1, ABORT_MAX_WAIT_MS - (now - abortingSince)));
      return;
    }
    const list = aborting;
    aborting = [];
    for (const controller of list) controller.abort(ATTEMPT_OVER);
  }

  /** Called by each runtime entry once the wasm is instantiated. */
  function attach() {
    wasm.setHost(services);
  }

  /** The current instance's generation: a wasm object made under another one is stale. */
  function currentGeneration() {
    return generation;
  }

  /**
   * Runs `make()` (a wasm constructor or method) and returns its result. A thrown driver error
   * object `{kind, message, …}` passes through; anything else is a trap: the instance is
   * replaced and the thrown value becomes `internal(error)`.
   */
  function enter(make, internal) {
    if (broken) throw internal(broken);
    try {
      return make();
    } catch (e) {
      if (isDriverError(e)) throw e;
      recover(e);
      throw internal(e);
    }
  }

  /**
   * Starts a task made by `start()` (which returns its id, or throws like `enter`). `handler`
   * gets `output(value)` for each output and `trapped(cause)` if the instance traps first.
   * Returns the task's id, for `cancel`.
   */
  function spawn(start, handler, internal) {
    const task = enter(start, internal);
    tasks.set(task, handler);
    // The first poll sends the request: from a microtask, so starting many calls stays cheap for
    // the caller, as an async function's would.
    services.schedule(task);
    return task;
  }

  /** The caller cancelled `task`: the wasm aborts its attempt and ends it as cancelled. */
  function cancel(task) {
    if (!tasks.has(task)) return;
    if (guarded(() => wasm.cancelTask(task))) run(task);
  }

  function settle(gen, slot, ok, value) {
    if (gen !== generation) return;
    const task = guarded(() => wasm.settleSlot(slot, ok, value));
    if (task !== undefined) run(task);
  }

  function run(task) {
    const handler = tasks.get(task);
    if (!handler) return;
    const outputs = guarded(() => wasm.pollTask(task));
    if (outputs === undefined) return;
    for (const output of outputs) {
      if (output.type === "done" || output.type === "failed" || output.type === "reply") tasks.delete(task);
      handler.output(output);
    }
    abortLater();
  }

  /** Runs a call into the wasm where nothing may throw: a throw is a trap, and recovered from. */
  function guarded(call) {
    try {
      return call();
    } catch (e) {
      recover(e);
      return undefined;
    }
  }


  /** The instance trapped: end everything it was doing, then replace it. */
  function recover(cause) {
    generation += 1;
    const affected = [...tasks.values()];
    tasks.clear();
    queued.clear();
    const open = [...controllers, ...aborting];
    controllers = new Set();
    aborting = [];
    for (const group of dueAt.values()) clearTimeout(group.handle);
    dueAt.clear();
    for (const controller of open) controller.abort();
    try {
      wasm.__wbg_reset_state();
      attach();
    } catch (e) {
      broken = e;
    }
    for (const handler of affected) handler.trapped(cause);
  }

  /** Test only: the next poll of any task traps, as a bug in the wasm would. */
  function armTrap() {
    wasm.armTrap();
  }

  return { attach, currentGeneration, enter, spawn, cancel, armTrap };
}
