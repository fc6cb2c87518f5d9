// The JavaScript face of llm-baton, shared by every runtime entry (node.js, deno.js, workerd.js,
// browser.js, and gateway/*.js for `llm-baton/gateway`). The entries only instantiate a wasm and
// hand it over as a runtime (`useRuntime`); everything the caller sees is here.
//
// There are two wasm builds of one engine. The Baton's (what `llm-baton` loads) has the Baton's
// API and no gateway; the gateway's (`llm-baton/gateway`) has the gateway and not the Baton's API,
// so an app of createGateway alone downloads neither the Baton's request reader nor its outputs.
// A Baton's `fetch`, the gateway in process, loads the gateway's wasm at its first call (or finds
// it loaded) and runs its gateway there, following the Baton's breakers and retry budget (see
// fetchLink), so a page that never calls `fetch` never downloads the gateway.
//
// The wasm does the real work (deadline, gate, limits, fetch + AbortController), run by the loop
// in host.js. This file adds what it cannot: errors that are real `Error`s (`instanceof
// BatonError`, a stack), options read with JavaScript's own eyes (a getter that throws, a
// callback), a stream as an async iterable, and "stop iterating" meaning "abort the call upstream".

import { isDriverError } from "./host.js";

/**
 * The runtimes the entries installed: `{ wasm, host, clouds?, loadGateway?, gateway? }`, where
 * `wasm` is a wasm-bindgen module, `host` its loop (host.js), `clouds` true for a build with the
 * clouds (llm-baton/clouds, llm-baton/gateway/clouds), `loadGateway()` (the Baton's runtime only)
 * imports the gateway's entry of the same build, which installs the gateway's runtime, and
 * `gateway` (the gateway's runtime only) is gateway.js.
 */
let batonRuntime = null;
let gatewayRuntime = null;

/**
 * Called by each entry once its wasm is instantiated. An app that imports an entry with the
 * clouds and one without (its own code and a library's) keeps the clouds' build: it reads every
 * config the other does.
 */
export function useRuntime(runtime) {
  if (runtime.gateway) {
    if (!gatewayRuntime?.clouds || runtime.clouds) gatewayRuntime = runtime;
  } else if (!batonRuntime?.clouds || runtime.clouds) batonRuntime = runtime;
}

/** Whether an entry has installed a runtime yet. */
export function hasRuntime() {
  return batonRuntime !== null || gatewayRuntime !== null;
}

/**
 * The static key under which an entry's subclass names its runtime: `llm-baton/gateway`'s
 * HealthState runs on the gateway's wasm.
 */
export const RUNTIME = Symbol("llm-baton runtime");
/** HealthState's probe lease, for pkg/broadcast.js (not public API). */
export const PROBE_LEASE_MS = Symbol("llm-baton probe lease");

/** Why no runtime is there: core.js was imported past the entries that install one. */
const NO_ENTRY = "llm-baton: import the package through one of its entries (\"llm-baton\", \"llm-baton/gateway\", \"llm-baton/clouds\" or \"llm-baton/gateway/clouds\"), not pkg/core.js";

/** The runtime a new object of class `made` (new.target) runs on. */
function runtimeFor(made) {
  const runtime = made[RUNTIME] ?? batonRuntime ?? gatewayRuntime;
  if (!runtime) throw new Error(NO_ENTRY);
  return runtime;
}

/** The Baton's runtime: only its wasm has the Baton's API. */
function batonRuntimeFor() {
  if (batonRuntime) return batonRuntime;
  throw new Error(gatewayRuntime
    ? "llm-baton: a Baton runs on the Baton's wasm; import it from \"llm-baton\" (llm-baton/gateway's wasm has the gateway only)"
    : NO_ENTRY);
}

/** Fields of a driver error worth keeping on a BatonError (see index.d.ts for their meaning). */
const ERROR_FIELDS = ["kind", "timeout", "limitMs", "status", "code", "class", "retryAfterMs", "contentFilter", "path", "target", "legs", "billedUsage"];

/** The test-only hook that makes the wasm trap at its next poll (tests/e2e/hostile.mjs). */
const TRAP = Symbol.for("llm-baton.test.trap");

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
 * The driver rejects with plain objects `{kind, message, ...}`; anything else reaching here is
 * a bug, kind "internal".
 */
function toBatonError(e) {
  if (e instanceof BatonError) return e;
  if (isDriverError(e)) return new BatonError(e);
  return internalError(e);
}

/** A trap in the wasm, or another bug: says so, and what to report. Never carries a request. */
function internalError(cause) {
  const what = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
  const message =
    `llm-baton internal error (a bug, not your config or the provider): ${what}. ` +
    "Every call in progress was ended and the module restarted; the next call works. " +
    "Please report it to the llm-baton maintainers with this message, your runtime and the route's config (without keys).";
  return new BatonError({ kind: "internal", message }, { cause });
}

/** A call the caller cancelled (its signal) before it ended. */
function cancelledError() {
  return new BatonError({ kind: "cancelled", message: "the caller cancelled the call", legs: [] });
}

/**
 * A config error: `path` names the field, `what` says what is wrong and what would be right.
 * `caller`, when given, opens the message: the function whose argument it is
 * (`durableHealthStore: options.prefix must be a string…`).
 */
export function configError(path, what, caller) {
  const message = `${path} ${what}`;
  return new BatonError({ kind: "config", path, message: caller ? `${caller}: ${message}` : message });
}

/**
 * A call's options, read once: unknown keys, a getter that throws and values of the wrong type
 * are config errors naming the option. `deadlineMs` is checked by the wasm (NaN included).
 */
function readOptions(options, stream) {
  const known = stream ? ["deadlineMs", "signal", "onEvent", "context", "resettable"] : ["deadlineMs", "signal", "onEvent", "context"];
  const settings = readOptionObject(options, "options", known, "{ deadlineMs: 10000 }") ?? {};
  const { signal, onEvent, resettable } = settings;
  settings.context = readContext(settings.context);
  if (signal != null && !(typeof signal.aborted === "boolean" && typeof signal.addEventListener === "function")) {
    throw configError("options.signal", "must be an AbortSignal (from new AbortController().signal)");
  }
  if (onEvent != null && typeof onEvent !== "function") {
    throw configError("options.onEvent", "must be a function");
  }
  if (resettable !== undefined && typeof resettable !== "boolean") {
    throw configError("options.resettable", `must be true or false (got ${typeof resettable}); false when the reader cannot discard what it was given`);
  }
  return settings;
}

/**
 * An options object read once, the one reader of every options argument (the Baton's, a call's,
 * the health stores'): `undefined`/`null` gives null; anything but an object, an unknown key, or
 * a getter that throws is a config error naming `where` or the key (opened by `caller`, see
 * configError). Returns the known keys' values.
 */
export function readOptionObject(options, where, known, example, caller) {
  if (options === undefined || options === null) return null;
  if (typeof options !== "object" || Array.isArray(options)) {
    throw configError(where, `must be an object such as ${example}`, caller);
  }
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw configError(`${where}.${key}`, `is not a known option; known options: ${known.join(", ")}`, caller);
    }
  }
  const settings = {};
  for (const key of known) {
    try {
      settings[key] = options[key];
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      throw configError(`${where}.${key}`, `could not be read: its getter threw (${why})`, caller);
    }
  }
  return settings;
}

/**
 * Calls the caller's `onEvent`. It cannot break the call: a throw, or a returned promise that
 * rejects, is reported once per call with console.error and the call goes on.
 */
function eventSink(onEvent) {
  if (!onEvent) return () => {};
  let reported = false;
  const report = (e) => {
    if (reported) return;
    reported = true;
    console.error("llm-baton: options.onEvent failed; the call goes on without it for this event:", e);
  };
  return (event) => {
    try {
      const result = onEvent(event);
      if (result !== null && typeof result === "object" && typeof result.then === "function") {
        Promise.resolve(result).catch(report);
      }
    } catch (e) {
      report(e);
    }
  };
}

/**
 * Links the caller's signal to a task: an abort cancels it. Returns the unlink function.
 */
function linkSignal(signal, onAbort) {
  if (!signal) return () => {};
  signal.addEventListener("abort", onAbort, { once: true });
  return () => signal.removeEventListener("abort", onAbort);
}

/**
 * The options of `new Baton(config, options)` and `createGateway(config, options)`: a health
 * store to share breakers through, how long a call waits for it, and how long its answer holds;
 * and the OpenTelemetry tracer and meter (`telemetry`). Returns `{ health, telemetry }`.
 */
function readBatonOptions(options, where) {
  const settings = readOptionObject(options, where, ["healthStore", "healthWaitMs", "healthCacheMs", "telemetry"], "{ healthStore }");
  if (settings === null) return { health: null, telemetry: null };
  const telemetry = settings.telemetry == null
    ? null
    : readTelemetry(readOptionObject(settings.telemetry, `${where}.telemetry`, ["tracer", "meter", "recordContent"], "{ tracer }"), `${where}.telemetry`);
  return { health: readHealthOptions(settings, where), telemetry };
}

/**
 * The `telemetry` option, checked: `settings` is what readBatonOptions read of it (its known
 * keys). Throws a config error for a tracer or meter that is not one, or a non-boolean
 * `recordContent`.
 */
function readTelemetry(settings, where) {
  const { tracer, meter, recordContent = false } = settings;
  if (tracer === null || typeof tracer !== "object" || typeof tracer.startSpan !== "function") {
    throw configError(`${where}.tracer`, "must be an OpenTelemetry Tracer (from trace.getTracer(\"my-app\") of @opentelemetry/api)");
  }
  if (meter != null && (typeof meter !== "object" || typeof meter.createHistogram !== "function")) {
    throw configError(`${where}.meter`, "must be an OpenTelemetry Meter (from metrics.getMeter(\"my-app\") of @opentelemetry/api)");
  }
  if (typeof recordContent !== "boolean") {
    throw configError(`${where}.recordContent`, `must be true or false (got ${typeof recordContent})`);
  }
  return { tracer, meter: meter ?? null, recordContent };
}

/** A call option `context`: an OpenTelemetry Context (`context.active()`), else a config error. */
function readContext(value) {
  if (value == null) return undefined;
  if (typeof value !== "object" || typeof value.getValue !== "function" || typeof value.setValue !== "function") {
    throw configError("options.context", "must be an OpenTelemetry Context (context.active() of @opentelemetry/api)");
  }
  return value;
}

/**
 * The tracing of one Baton or gateway, whose code (telemetry.js) the first traced call imports,
 * so an app without `telemetry` never downloads it. `current`: the Telemetry once loaded, else
 * null; `load()` resolves with it, or with null when the import failed (reported with
 * console.error; that call goes untraced and the next one imports again). `config`: the config
 * as the wasm validated it, which a span reads its targets from.
 */
function lazyTelemetry(settings, config) {
  let loading = null;
  const lazy = {
    current: null,
    load() {
      loading ??= import("./telemetry.js").then(
        ({ Telemetry }) => (lazy.current = new Telemetry(settings, config)),
        (e) => {
          loading = null;
          console.error("llm-baton: telemetry.js could not be loaded; this call goes untraced:", e);
          return null;
        },
      );
      return loading;
    },
  };
  return lazy;
}

/**
 * The caller's active OpenTelemetry context, for a span that starts after a wait: read where
 * every 1.x copy of @opentelemetry/api keeps its registered context manager. Undefined without
 * one (the span then starts under the tracer's active context, as it would have).
 */
function activeContext() {
  try {
    return globalThis[Symbol.for("opentelemetry.js.api.1")]?.context?.active();
  } catch {
    return undefined;
  }
}

/** The health store options, read by readBatonOptions; null without a store. */
function readHealthOptions(settings, where) {
  const { healthStore: store, healthWaitMs: waitMs = 50, healthCacheMs: cacheMs = 1000 } = settings;
  if (store == null) return null;
  if (typeof store.admit !== "function" || typeof store.report !== "function") {
    throw configError(`${where}.healthStore`, "must have admit(targets) and report(legs) methods (see HealthStore in index.d.ts)");
  }
  for (const [key, value] of [["healthWaitMs", waitMs], ["healthCacheMs", cacheMs]]) {
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
      throw configError(`${where}.${key}`, `must be a number of milliseconds, 0 or more (got ${String(value)})`);
    }
  }
  return { store, waitMs, cacheMs };
}

/**
 * Connects a wasm object's breakers to a health store. Before a call, `admit(targets)` asks the
 * store when this replica's word on them is stale (or a cooldown ended: only the store grants
 * probes), waiting at most `waitMs`; a store that is slow, fails or answers nonsense fails open
 * (the targets pass). Calls that find the word stale while an ask about their targets is under
 * way wait for that answer instead of asking again: a burst of calls asks the store once.
 * Resolves to the milliseconds waited, which the call's budget pays. `report(event)` forwards a
 * `leg` event; the store's errors never reach the call.
 */
function healthLink(settings, wasm) {
  if (!settings) return null;
  const { store, waitMs, cacheMs } = settings;
  /** The ask under way: the targets it asks about, and its end. */
  let asking = null;
  const ask = async (targets) => {
    let timer;
    const late = new Promise((resolve) => {
      timer = setTimeout(resolve, waitMs, null);
    });
    let view = null;
    try {
      view = await Promise.race([Promise.resolve().then(() => store.admit(targets)), late]);
    } catch {
      view = null;
    } finally {
      clearTimeout(timer);
    }
    const open = { targets: targets.map((target) => ({ target, state: "closed" })) };
    try {
      wasm().absorb(view ?? open);
    } catch {
      wasm().absorb(open);
    }
  };
  return {
    async admit(stale, targets) {
      const began = performance.now();
      if (!stale(cacheMs)) return 0;
      const wanted = targets();
      if (asking !== null && wanted.every((target) => asking.targets.has(target))) {
        // One view absorbed once: a probe the store grants goes to one call, not to each.
        await asking.done;
      } else {
        const done = ask(wanted);
        asking = { targets: new Set(wanted), done };
        try {
          await done;
        } finally {
          if (asking?.done === done) asking = null;
        }
      }
      return performance.now() - began;
    },
    report(event) {
      try {
        const sent = store.report([event]);
        if (sent && typeof sent.then === "function") sent.then(undefined, () => {});
      } catch {
        // The store's trouble is not the call's.
      }
    },
  };
}

/**
 * `healthLink(...).admit`'s two questions (is the store to be asked? about which targets?) from
 * one wasm call, `ask(maxAgeMs)`, which answers the targets or undefined.
 */
function staleTargets(ask) {
  let targets;
  return [(maxAgeMs) => (targets = ask(maxAgeMs)) !== undefined, () => targets];
}

/**
 * `baton.fetch`'s health link: its gateway (on the gateway's wasm) follows the Baton (on its own)
 * as a replica follows a store. Before each request the gateway takes the Baton's view of the
 * targets of the request's route (a probe the Baton grants goes to that request, which may take
 * it), and each leg it ends is the Baton's too, so a breaker either opens is open for both, and
 * one retry budget pays for both. A Baton with a health store of its own has its gateway ask
 * that store as another replica, and tells the Baton each leg as well, so `baton.health()`
 * counts the SDK's calls.
 */
function fetchLink(batonRuntime, baton, store, gatewayRuntime, gateway) {
  const tell = (event) => {
    try {
      guard(batonRuntime, () => baton().report([event]));
    } catch {
      // A leg the Baton cannot read is not the request's trouble.
    }
  };
  const shared = healthLink(store, gateway);
  if (shared) {
    return {
      admit: shared.admit,
      report(event) {
        tell(event);
        shared.report(event);
      },
    };
  }
  return {
    async admit(stale, targets) {
      // The Baton is in process: its word is never old, so it is asked each time.
      if (stale(0)) {
        const view = guard(batonRuntime, () => baton().view(targets()));
        guard(gatewayRuntime, () => gateway().absorb(view));
      }
      return 0;
    },
    report: tell,
  };
}

// Baton and HealthState are made by a pure call, so a bundle that does not use one drops it
// (an app of llm-baton/gateway's createGateway alone): esbuild keeps a class with a symbol-keyed
// member ([TRAP], [PROBE_LEASE_MS]) whether or not it is used.
export const Baton = /* @__PURE__ */ (() => class Baton {
  #runtime;
  #instance;
  /** The health store's settings (readBatonOptions; null without one): `fetch`'s gateway asks it too. */
  #store;
  #health;
  #telemetry;
  #fetch = null;

  /**
   * Validates the config at once; a mistake throws BatonError kind "config" naming its path.
   * `options.healthStore` shares breakers and the retry budget (docs/health.md);
   * `options.telemetry` traces every call (docs/traces.md).
   */
  constructor(config, options) {
    const { health, telemetry } = readBatonOptions(options, "options");
    this.#runtime = batonRuntimeFor();
    this.#instance = rebuildable(this.#runtime, "WasmBaton", config, health ? (wasm) => wasm.followStore() : undefined);
    this.#store = health;
    this.#health = healthLink(health, () => this.#instance());
    this.#telemetry = telemetry && lazyTelemetry(telemetry, this.#instance.config);
  }

  /** Every target's circuit breaker and the retry budget, as this Baton sees them now. */
  health() {
    const wasm = this.#instance();
    return guard(this.#runtime, () => wasm.health());
  }

  /** One whole answer for `route` (a route or target name). */
  complete(route, request, options) {
    return new Promise((resolve, reject) => {
      let unlink = () => {};
      ({ unlink } = this.#begin(route, request, options, false, {
        output(out) {
          if (out.type === "done") {
            unlink();
            resolve(out.summary);
          } else if (out.type === "failed") {
            unlink();
            reject(new BatonError(out.error));
          }
        },
        trapped(cause) {
          unlink();
          reject(internalError(cause));
        },
        failed(error) {
          unlink();
          reject(error);
        },
      }));
    }).catch((e) => {
      throw toBatonError(e);
    });
  }

  /**
   * The answer as it arrives: an async iterable of `{type: "text" | "reasoning" | "tool_call"}`
   * events (and, when a broken stream restarts, `{type: "reset"}`: discard what was shown), then
   * one `{type: "done", ...summary}`. The call starts at the first `next()`.
   * `options.resettable: false`: the reader cannot take back what it was given, so a broken
   * stream may continue on another member but never restarts (no `reset` item).
   * Leaving the loop early (break, return, throw) aborts the call upstream.
   */
  stream(route, request, options) {
    return new Stream((handler) => this.#begin(route, request, options, true, handler));
  }

  /**
   * Starts a call: reads the options, sends the task's events to `onEvent` and its other outputs
   * to `handler`, and links the caller's signal. Returns `{ cancel, unlink }`.
   */
  #begin(route, request, options, stream, handler) {
    const settings = readOptions(options, stream);
    if (settings.signal?.aborted) throw cancelledError();
    const telemetry = this.#telemetry;
    if (telemetry === null || telemetry.current !== null) return this.#start(route, request, settings, stream, handler, telemetry?.current);
    // The first traced call starts once telemetry.js is imported, its span under the context
    // active now. A call that ends before that still gets its span, ended as the call was.
    settings.context ??= activeContext();
    let call = null;
    let ended = null;
    const unlinkWait = linkSignal(settings.signal, () => {
      const error = cancelledError();
      ended = (trace) => trace.failed(error);
      handler.failed(error);
    });
    telemetry.load().then((loaded) => {
      unlinkWait();
      if (ended) {
        const trace = loaded?.call({ route: String(route), stream, parent: settings.context, request });
        if (trace) ended(trace);
        return;
      }
      try {
        call = this.#start(route, request, settings, stream, handler, loaded ?? undefined);
      } catch (e) {
        handler.failed(toBatonError(e));
      }
    });
    return {
      cancel: () => {
        if (call) call.cancel();
        else ended ??= (trace) => trace.abandon();
      },
      unlink: () => {
        unlinkWait();
        call?.unlink();
      },
    };
  }

  /** #begin's call, with its options read and its Telemetry (or undefined) at hand. */
  #start(route, request, settings, stream, handler, telemetry) {
    // The wasm takes a stream as whether its reader can take back what it was given.
    const delivery = stream ? (settings.resettable ?? true) : undefined;
    const onEvent = eventSink(settings.onEvent);
    const health = this.#health;
    const trace = telemetry?.call({ route: String(route), stream, parent: settings.context, request });
    if (trace) handler = traced(handler, trace);
    const events = settings.onEvent != null || health !== null || trace !== undefined;
    const runtime = this.#runtime;
    const instance = this.#instance;
    const { spawn, cancel } = runtime.host;
    const start = (waitedMs) => {
      try {
        return spawn(
          () => instance().start(String(route), request, settings.deadlineMs, delivery, events, waitedMs),
          {
            output(out) {
              if (out.type !== "event") return handler.output(out);
              if (health && out.event.type === "leg") health.report(out.event);
              trace?.event(out.event);
              if (settings.onEvent) onEvent(out.event);
            },
            trapped: handler.trapped,
            attemptHeaders: trace && ((target, attempt) => trace.attemptHeaders(target, attempt)),
          },
          internalError,
        );
      } catch (e) {
        trace?.failed(toBatonError(e));
        throw e;
      }
    };
    if (!health) {
      const task = start(0);
      const abandon = () => {
        trace?.abandon();
        cancel(task);
      };
      return { cancel: abandon, unlink: linkSignal(settings.signal, () => cancel(task)) };
    }
    // With a health store, the call starts once the store answered (or the wait ran out).
    let task = null;
    let gone = false;
    const stop = () => {
      if (task !== null) cancel(task);
      else if (!gone) {
        gone = true;
        handler.failed(cancelledError());
      }
    };
    const abandon = () => {
      trace?.abandon();
      stop();
    };
    const unlink = linkSignal(settings.signal, stop);
    const wasm = instance;
    health
      .admit(...staleTargets((maxAgeMs) => guard(runtime, () => wasm().staleTargets(String(route), maxAgeMs))))
      .catch(() => 0)
      .then((waitedMs) => {
        if (gone) return;
        try {
          task = start(waitedMs);
        } catch (e) {
          gone = true;
          handler.failed(toBatonError(e));
        }
      });
    return { cancel: abandon, unlink };
  }

  /**
   * A standard fetch serving the gateway's endpoints in process, for an official SDK's `fetch`
   * option (docs/official-sdks.md). An arrow property: it works unbound. The first call loads the
   * gateway's wasm (unless `llm-baton/gateway` was imported); its gateway follows this Baton's
   * breakers and retry budget, so the SDK's calls and this Baton's own share them.
   */
  fetch = async (input, init) => {
    if (this.#fetch === null) {
      this.#fetch = this.#inProcessFetch();
      // A gateway wasm that failed to load (a network error in a browser) is tried again next time.
      this.#fetch.catch(() => {
        this.#fetch = null;
      });
    }
    return (await this.#fetch)(input, init);
  };

  /** The gateway logic for `fetch`, on the gateway's wasm, over this Baton's config and health. */
  async #inProcessFetch() {
    if (!gatewayRuntime || (this.#runtime.clouds && !gatewayRuntime.clouds)) await this.#runtime.loadGateway();
    const runtime = gatewayRuntime;
    const gateway = rebuildable(runtime, "WasmGateway", this.#instance.config, (wasm) => {
      wasm.inProcess();
      wasm.followStore();
    });
    const link = fetchLink(this.#runtime, this.#instance, this.#store, runtime, gateway);
    return runtime.gateway.inProcessFetch(gateway, gatewayServices(runtime, gateway, link, this.#telemetry));
  }

  /** Every name `complete` and `stream` accept: the routes, then targets not shadowed by one. */
  routes() {
    const wasm = this.#instance();
    return guard(this.#runtime, () => wasm.routes());
  }

  /** Test only: the wasm traps at its next poll, as a bug would (`"fetch"`: the wasm `fetch` runs on). */
  [TRAP](which) {
    (which === "fetch" ? gatewayRuntime : this.#runtime)?.host.armTrap();
  }
})();

/**
 * A call's handler that also feeds its trace: the reader's items (a restart's `reset`), the
 * outcome, a trap and a failure before the task started each end the call's spans.
 */
function traced(handler, trace) {
  return {
    output(out) {
      if (out.type === "deltas") {
        // A reset comes first in its batch.
        if (out.deltas[0]?.type === "reset") trace.reset(out.deltas[0]);
      } else if (out.type === "done") trace.done(out.summary);
      else if (out.type === "failed") trace.failed(out.error);
      handler.output(out);
    },
    trapped(cause) {
      trace.trapped(internalError(cause));
      handler.trapped(cause);
    },
    failed(error) {
      trace.failed(error);
      handler.failed(error);
    },
  };
}

/**
 * The breakers and the retry budget on their own (the core's, src/health.rs), for a health store
 * that keeps the shared state: the Durable Object of `llm-baton/durable`, a browser tab answering
 * for the others. `policy` is a config's `health` section (undefined: the defaults).
 */
export const HealthState = /* @__PURE__ */ (() => class HealthState {
  #runtime;
  #instance;

  constructor(policy) {
    this.#runtime = runtimeFor(new.target);
    this.#instance = rebuildable(this.#runtime, "WasmHealth", policy);
  }

  /** Each target's admission for one asker: a HealthView (half-open targets grant one probe). */
  admit(targets) {
    const wasm = this.#instance();
    return guard(this.#runtime, () => wasm.admit(targets.map(String)));
  }

  /** Learns from `leg` events (`{type: "leg", leg, cause?}`). */
  report(events) {
    const wasm = this.#instance();
    guard(this.#runtime, () => wasm.report(events));
  }

  /** Every target it has heard of, as `baton.health()` shows them. */
  snapshot() {
    const wasm = this.#instance();
    return guard(this.#runtime, () => wasm.snapshot());
  }

  /** pkg/broadcast.js: how long a probe's lease lasts, the policy's cooldown (from the wasm). */
  [PROBE_LEASE_MS]() {
    const wasm = this.#instance();
    return guard(this.#runtime, () => wasm.probeLeaseMs());
  }
})();

/**
 * A wasm object of `runtime` (class `className`: "WasmBaton", "WasmGateway", "WasmHealth") built
 * from a config at once, so a mistake throws here; returns a function that gives the current one,
 * rebuilt from a copy of the validated config (the function's `config`) when a trap has replaced
 * the instance since.
 */
export function rebuildable(runtime, className, config, prepare = () => {}) {
  const WasmClass = runtime.wasm[className];
  const { currentGeneration } = runtime.host;
  const build = (from) => {
    const made = guard(runtime, () => new WasmClass(from));
    guard(runtime, () => prepare(made));
    return made;
  };
  let wasm = build(config);
  let built = currentGeneration();
  const kept = copy(config);
  const current = () => {
    if (built !== currentGeneration()) {
      wasm = build(kept);
      built = currentGeneration();
    }
    return wasm;
  };
  current.config = kept;
  return current;
}

function copy(config) {
  try {
    return structuredClone(config);
  } catch {
    return JSON.parse(JSON.stringify(config));
  }
}

/**
 * Runs a wasm call of `runtime` that may throw a driver error; returns its value or throws a
 * BatonError.
 */
export function guard(runtime, make) {
  try {
    return runtime.host.enter(make, internalError);
  } catch (e) {
    throw toBatonError(e);
  }
}

/**
 * An OpenAI- and Anthropic-compatible fetch handler in front of the config's routes, on the
 * gateway's `runtime` (`llm-baton/gateway`'s createGateway). Validates the config at once,
 * synchronously, with no I/O and no timer, so a Worker may build it at its module's top level;
 * throws BatonError kind "config" naming the field. `metrics`, if given, makes the gateway's
 * metrics link from its wasm object's getter (pkg/gateway/metrics-link.js).
 */
export function gatewayOn(runtime, config, options, metrics) {
  const { health, telemetry } = readBatonOptions(options, "options");
  const instance = rebuildable(runtime, "WasmGateway", config, health ? (wasm) => wasm.followStore() : undefined);
  if (guard(runtime, () => instance().open())) console.warn(runtime.gateway.openGatewayWarning(config));
  const link = healthLink(health, instance);
  const services = gatewayServices(runtime, instance, link, telemetry && lazyTelemetry(telemetry, instance.config));
  // `/metrics` (pkg/gateway/metrics-link.js), from the gateway's entry only: a Baton never serves it.
  if (metrics) services.metrics = metrics(instance);
  return new runtime.gateway.Gateway(instance, services);
}

/**
 * What the gateway code (pkg/gateway.js) runs a request with: the runtime's loop, and the health
 * link and telemetry of its owner (a gateway, or a Baton for `baton.fetch`). `instance()` gives
 * the current WasmGateway.
 */
function gatewayServices(runtime, instance, link, telemetry) {
  // The request's body: the store is asked about the targets of the route its model names.
  const admit = link && ((body) => link.admit(...staleTargets((maxAgeMs) => guard(runtime, () => instance().staleTargets(maxAgeMs, body)))));
  const { spawn, cancel, armTrap } = runtime.host;
  return {
    spawn,
    cancel,
    enter: (f) => guard(runtime, f),
    internalError,
    armTrap,
    health: link && { admit, report: link.report },
    telemetry,
  };
}

/**
 * A single-use async iterator over one streamed call. The driver's outputs queue here until the
 * consumer pulls them. The queue is unbounded: a model's answer is small, and pausing would hold
 * the provider connection open for nothing.
 */
class Stream {
  #start;
  #queue = [];
  #head = 0; // next value to hand out: Array#shift is O(n), and a fast stream queues thousands
  #waiting = []; // {resolve, reject} of pending next() calls, oldest first
  #failure = null; // the BatonError to throw once the queue is drained
  #ended = false; // the driver settled (or the consumer left)
  #closed = false; // the consumer left: ignore whatever still arrives
  #cancel = null;
  #unlink = () => {};

  constructor(start) {
    this.#start = () => {
      try {
        const { cancel, unlink } = start({
          output: (out) => this.#output(out),
          trapped: (cause) => this.#settle(null, internalError(cause)),
          failed: (error) => this.#settle(null, error),
        });
        this.#cancel = cancel;
        this.#unlink = unlink;
      } catch (e) {
        this.#settle(null, toBatonError(e));
      }
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
      this.#unlink();
      this.#cancel?.();
    }
    this.#wake();
    return Promise.resolve({ value, done: true });
  }

  #output(out) {
    if (out.type === "deltas") {
      if (this.#closed) return;
      for (const ev of out.deltas) this.#queue.push(ev);
      this.#wake();
    } else if (out.type === "done") this.#settle({ type: "done", ...out.summary }, null);
    else if (out.type === "failed") this.#settle(null, new BatonError(out.error));
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
