// llm-baton/durable: breaker state shared by every isolate of a Workers deployment.
//
// A deployment is hundreds of isolates, each with its own Baton; what one of them learns about a
// failing provider should spare the others. Cloudflare's place for shared state is the Durable
// Object, so this entry has two halves:
// - `BatonHealthObject`, the Durable Object: one per target name, holding that target's breaker
//   in a `HealthState` (the same core the Baton uses, on the object's clock). One object per target
//   keeps each object's load to the calls of one provider, and a probe grant exclusive: only the
//   object decides it.
// - `durableHealthStore(namespace)`, the HealthStore a Baton is given: it asks each target's
//   object in parallel before a call and forwards the attempts' leg events after it. It never
//   makes a call wait on a slow or missing object: each request is capped (`timeoutMs`), and
//   anything that goes wrong reads as "pass" (fail open: a breaker that cannot be reached must
//   not stop traffic). The legs an isolate reports within REPORT_WINDOW_MS go to each object in
//   one request: a busy isolate ends many calls at once, each object takes about a thousand
//   requests a second, and every request is billed, while a breaker that hears 50 ms later
//   decides the same.
// - The retry budget is one for the whole deployment, so it cannot live in the per-target
//   objects (each sees only its target's legs): one more object, `prefix + "#retry-budget"`,
//   receives every leg and answers the balance with each admission.
//
// The objects need no setup: every message carries the `health` section of the config, and an
// object (re)builds its breakers when it differs from the one it holds. Their state lives in
// memory: an object that is evicted starts again with closed breakers, which is the safe side.
// Times in the protocol are relative (ms from now), as the isolates' clocks differ.
//
// The objects run on whichever wasm the Worker has loaded already (llm-baton's or
// llm-baton/gateway's), so a gateway Worker instantiates one wasm, not two; a Worker that imports
// neither entry loads the Baton's on its first message.
import { BatonError, configError, hasRuntime, HealthState, readOptionObject } from "./core.js";
import * as workers from "cloudflare:workers";

/** Request bodies an object reads at most: a leg event is a few hundred bytes. */
const MAX_BODY_BYTES = 256 * 1024;
/** Any URL reaches an object; this one reads well in its logs. */
const ORIGIN = "https://llm-baton-health";
const STORE_OPTIONS = ["config", "timeoutMs", "prefix"];
/** What opens the message of a mistake in the store's arguments. */
const CALLER = "durableHealthStore";
/** The object that keeps the deployment's retry budget is named `prefix + BUDGET_OBJECT`. */
const BUDGET_OBJECT = "#retry-budget";
/** Legs reported within this long of the first go to each object in one request. */
const REPORT_WINDOW_MS = 50;
/** A batch of this many legs goes at once, so a request stays far below MAX_BODY_BYTES. */
const REPORT_BATCH_MAX = 500;

/**
 * The Durable Object. Bind it in wrangler.toml (see examples/gateway) and export it from the
 * Worker's main module: `export { BatonHealthObject } from "llm-baton/durable"`.
 *
 *   POST /admit  {"targets": ["primary"], "config": {...}}          -> 200 HealthView (+ retryBudget)
 *   POST /report {"events": [{leg, cause?}, ...], "config": {...}}  -> 204
 *   GET  /snapshot                                                 -> 200 the shape of baton.health()
 *
 * A malformed message gets a 4xx naming what was wrong; nothing a caller sends makes it throw.
 */
export class BatonHealthObject {
  /** The breakers, and the config text they were built from. */
  #health = null;
  #configText = null;

  // The Durable Object contract: (state, env). The breakers need neither: they live in memory.
  constructor(state, env) {
    void state;
    void env;
  }

  async fetch(request) {
    try {
      if (!hasRuntime()) await import("./workerd.js");
      return await this.#route(request);
    } catch (e) {
      return reply(500, `llm-baton health object: ${describe(e)}`);
    }
  }

  async #route(request) {
    const path = new URL(request.url).pathname;
    const post = (run) => (request.method === "POST" ? this.#withBody(request, path, run) : notAllowed(path, "POST"));
    switch (path) {
      case "/admit":
        return post((body) => {
          // No targets: only the retry budget's balance.
          const targets = body.targets;
          if (!Array.isArray(targets) || !targets.every((t) => typeof t === "string" && t !== "")) {
            return reply(400, `POST /admit: "targets" must be an array of target names, e.g. {"targets": ["primary"]}`);
          }
          return this.#call(body, (health) => Response.json(health.admit(targets)));
        });
      case "/report":
        return post((body) => {
          const events = body.events;
          const isLegEvent = (event) => isObject(event) && isObject(event.leg) && typeof event.leg.target === "string";
          if (!Array.isArray(events) || !events.every(isLegEvent)) {
            const example = `{"events": [{"leg": {"target": "primary", "outcome": "ok"}}]}`;
            return reply(400, `POST /report: "events" must be an array of leg events, e.g. ${example}`);
          }
          return this.#call(body, (health) => {
            // One at a time, so an event the core cannot read does not cost the others.
            const refused = [];
            events.forEach((event, i) => {
              try {
                health.report([event]);
              } catch (e) {
                if (e instanceof BatonError && e.kind === "internal") throw e;
                refused.push(`events[${i}]: ${describe(e).replace(/^reports\[0\]:? ?/, "")}`);
              }
            });
            if (refused.length > 0) {
              const learned = events.length - refused.length;
              return reply(400, `POST /report: learned from ${learned} of ${events.length} events; ${refused.join("; ")}`);
            }
            return new Response(null, { status: 204 });
          });
        });
      case "/snapshot":
        if (request.method !== "GET") return notAllowed(path, "GET");
        // Before any message there are no breakers to show.
        if (this.#health === null) return Response.json({ enabled: true, targets: [], retryBudget: null });
        return Response.json(this.#health.snapshot());
      default:
        return reply(
          404,
          `no such path ${JSON.stringify(path)}; a BatonHealthObject serves POST /admit, POST /report and GET /snapshot`,
        );
    }
  }

  /** Reads a JSON object body (bounded), or answers 400/413 saying what was wrong. */
  async #withBody(request, path, run) {
    const declared = Number(request.headers.get("content-length"));
    if (declared > MAX_BODY_BYTES) return reply(413, `POST ${path}: the body is ${declared} bytes, more than ${MAX_BODY_BYTES}`);
    const text = await request.text();
    if (text.length > MAX_BODY_BYTES) {
      return reply(413, `POST ${path}: the body is ${text.length} characters, more than ${MAX_BODY_BYTES}`);
    }
    let body;
    try {
      body = JSON.parse(text);
    } catch (e) {
      return reply(400, `POST ${path}: the body is not JSON (${e.message}); send a JSON object such as {"targets": ["primary"]}`);
    }
    if (!isObject(body)) return reply(400, `POST ${path}: the body must be a JSON object, got ${kindOf(body)}`);
    return run(body);
  }

  /**
   * Runs `use(health)` on the breakers built from the message's config, rebuilt when it differs
   * from the one they were built from (a trap in the wasm is rebuilt by HealthState itself). A
   * config the core refuses is a 400 naming the field; the breakers held so far stay.
   */
  #call(body, use) {
    const configText = JSON.stringify(body.config ?? null);
    if (this.#health === null || configText !== this.#configText) {
      try {
        this.#health = new HealthState(body.config);
        this.#configText = configText;
      } catch (e) {
        if (e instanceof BatonError && e.kind === "internal") throw e;
        return reply(400, `the config is not a valid health section: ${describe(e)}`);
      }
    }
    return use(this.#health);
  }
}

/**
 * A HealthStore over a Durable Object namespace bound to `BatonHealthObject`:
 * `new Baton(config, { healthStore: durableHealthStore(env.BATON_HEALTH, { config: config.health }) })`.
 *
 * options:
 * - `config`: the `health` section of the llm-baton config (default: the defaults). Checked here,
 *   so a mistake throws BatonError kind "config" at once rather than being refused by every object.
 * - `timeoutMs`: how long one object request may take before its target reads as "pass"
 *   (default 1000; the Baton's own bounded wait, `healthWaitMs`, is usually shorter).
 * - `prefix`: object names are `prefix + target`, and `prefix + "#retry-budget"` for the retry
 *   budget (default "llm-baton-health:"); deployments sharing a namespace but not their breakers
 *   use different prefixes.
 */
export function durableHealthStore(namespace, options = {}) {
  if (!isObject(namespace) || typeof namespace.idFromName !== "function" || typeof namespace.get !== "function") {
    throw configError(
      "namespace",
      "must be a Durable Object namespace binding bound to BatonHealthObject " +
        "(env.BATON_HEALTH with a [[durable_objects.bindings]] entry in wrangler.toml)",
      CALLER,
    );
  }
  const settings = readOptionObject(options, "options", STORE_OPTIONS, "{ config: config.health }", CALLER) ?? {};
  const { config, timeoutMs = 1000, prefix = "llm-baton-health:" } = settings;
  if (!(typeof timeoutMs === "number" && timeoutMs > 0 && timeoutMs <= 60_000)) {
    const got = JSON.stringify(timeoutMs);
    throw configError("options.timeoutMs", `must be a number of milliseconds from 1 to 60000, e.g. 1000 (got ${got})`, CALLER);
  }
  if (typeof prefix !== "string") throw configError("options.prefix", `must be a string such as "llm-baton-health:"`, CALLER);
  new HealthState(config);

  const ids = new Map();
  const objectOf = (target) => {
    let id = ids.get(target);
    if (id === undefined) {
      id = namespace.idFromName(prefix + target);
      ids.set(target, id);
    }
    // A fresh stub per request: a stub may be tied to the request that made it.
    return namespace.get(id);
  };
  /**
   * Posts a message to a target's object and hands the response to `read`; settles with its
   * result, or with null when anything fails or the object takes longer than `timeoutMs` (the
   * request is then aborted). Never rejects.
   */
  const send = (target, path, message, read) => {
    const controller = new AbortController();
    let timer;
    const late = new Promise((resolve) => {
      timer = setTimeout(() => {
        controller.abort();
        resolve(null);
      }, timeoutMs);
    });
    const answered = (async () => {
      const res = await objectOf(target).fetch(`${ORIGIN}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(config === undefined ? message : { ...message, config }),
        signal: controller.signal,
      });
      if (!res.ok) {
        await res.body?.cancel();
        return null;
      }
      return read(res);
    })().catch(() => null);
    return Promise.race([answered, late]).finally(() => clearTimeout(timer));
  };

  /** One target's entry of the shared view, or "pass" when its object cannot say in time. */
  const admitOne = async (target) => {
    const entry = await send(target, "/admit", { targets: [target] }, async (res) => {
      const view = await res.json();
      return Array.isArray(view?.targets) ? view.targets.find((e) => isObject(e) && e.target === target) : null;
    });
    return entry ?? { target, state: "closed", probe: false };
  };
  /** Without a budget (`health: false`, `retryBudget: false`) there is nothing to ask or tell. */
  const sharesBudget = config !== false && config?.retryBudget !== false;
  /** The deployment's retry budget balance, or null (the Baton then counts its own). */
  const budget = () =>
    !sharesBudget
      ? Promise.resolve(null)
      : send(BUDGET_OBJECT, "/admit", { targets: [] }, async (res) => {
          const balance = (await res.json())?.retryBudget;
          return typeof balance === "number" && Number.isFinite(balance) ? balance : null;
        });

  /** The legs waiting for the window to end, by target; null when none wait. */
  let batch = null;
  function newBatch() {
    let settle;
    const sent = new Promise((resolve) => (settle = resolve));
    return { byTarget: new Map(), legs: 0, sent, settle, timer: setTimeout(sendBatch, REPORT_WINDOW_MS) };
  }
  /** Each target's legs to its object, and all of them to the budget's; settles when all have. */
  function sendBatch() {
    const { byTarget, timer, settle } = batch;
    batch = null;
    clearTimeout(timer);
    const done = (res) => res.body?.cancel();
    const sends = [...byTarget].map(([target, group]) => send(target, "/report", { events: group }, done));
    if (sharesBudget) sends.push(send(BUDGET_OBJECT, "/report", { events: [...byTarget.values()].flat() }, done));
    settle(Promise.all(sends));
  }

  return {
    async admit(targets) {
      const names = [...new Set(Array.from(targets ?? [], String))];
      const [entries, balance] = await Promise.all([Promise.all(names.map(admitOne)), budget()]);
      return balance === null ? { targets: entries } : { targets: entries, retryBudget: balance };
    },
    report(events) {
      let kept = null;
      for (const event of Array.isArray(events) ? events : []) {
        const target = event?.leg?.target;
        if (typeof target !== "string") continue;
        // What health learns from: the leg's target, outcome and place in its call (a retry or
        // a hop after the first), and the failure's cause. Usage and timings stay here.
        const report = { leg: { target, outcome: event.leg.outcome, attempt: event.leg.attempt } };
        if (event.cause !== undefined) report.cause = event.cause;
        batch ??= newBatch();
        if (!batch.byTarget.has(target)) batch.byTarget.set(target, []);
        batch.byTarget.get(target).push(report);
        batch.legs += 1;
        // Each request that adds to a batch waits for it: whichever ends first, none is cut.
        if (kept !== batch.sent) keepAlive((kept = batch.sent));
        if (batch.legs >= REPORT_BATCH_MAX) sendBatch();
      }
    },
  };
}

/**
 * A report outlives the call that made it: in a Worker, tell the runtime to wait for it, or it
 * may be cancelled when the response is done. Outside a request there is nothing to extend.
 */
function keepAlive(promise) {
  try {
    if (typeof workers.waitUntil === "function") workers.waitUntil(promise);
  } catch {
    // Not in a request context: the promise runs on its own.
  }
}

function reply(status, message) {
  return Response.json({ error: message }, { status });
}

function notAllowed(path, method) {
  return new Response(JSON.stringify({ error: `${path} accepts ${method} only` }), {
    status: 405,
    headers: { "content-type": "application/json", allow: method },
  });
}

function describe(e) {
  if (e instanceof Error) return e.message;
  if (isObject(e) && typeof e.message === "string") return e.message;
  return String(e);
}

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function kindOf(v) {
  return v === null ? "null" : Array.isArray(v) ? "an array" : `a ${typeof v}`;
}
