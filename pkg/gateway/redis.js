// llm-baton/gateway/redis: breakers and the retry budget shared through Redis (or Valkey) by
// every gateway process, on every host, that names the same server and prefix.
//
// Design: replicas fed by a stream, probes granted by a lock; not the breaker rewritten in Lua.
// The Durable Object store runs the core's breakers (HealthState) inside the object, the one
// place that decides. Redis can only run Lua, so deciding there would mean a second copy of
// src/health.rs (what counts as a failure, the window, the ratio, Retry-After, the lease, the
// budget) to keep in step with the first. Instead each process keeps a replica, as the browser
// tabs of pkg/broadcast.js do, and Redis carries the news:
// - `report(legs)` applies the legs to this process's replica at once, and appends them (every
//   REPORT_WINDOW_MS, one XADD) to the stream `prefix + "legs"`, trimmed near STREAM_MAX entries.
// - `admit(targets)` first reads what the others appended since its last read (XREAD from the
//   last id it saw) into the replica, then decides with the replica's `admit`: every process has
//   applied the same legs, so it reaches the decision the others reach, the retry budget included
//   (each replica counts everyone's successes and retries). The Baton asks only when its own word
//   on a target is older than `healthCacheMs` or a cooldown ended, so this is one round trip per
//   second or so, not one per call.
// - A half-open target's probe must be one among all processes: a replica that grants one also
//   takes the lock `prefix + "probe:" + target` (SET NX PX for the probe's lease, the policy's
//   `cooldownMs`); Redis gives it to one process at a time, and the others skip the target.
// - A process that starts reads the stream, as soon as the store is made, from one `windowMs`
//   before Redis's TIME (stream ids are Redis's own milliseconds, so the hosts' clocks never
//   meet): it joins knowing what the others learned. Those legs are applied as if they had just ended, so a newcomer may hold a target
//   open up to one cooldown longer than the others did: the safe side.
//
// Fails open. `admit` waits for Redis at most `waitMs`, and a command that takes longer than
// `timeoutMs` closes the connection: Redis down, slow or refusing leaves this process with its
// replica, which has learned from its own legs all along, so it keeps its own breakers (and grants
// its own probes; a probe lock that comes back refused after `waitMs` is too late to refuse it).
// What a late read brings is applied when it comes, for the next admit. One warning when
// Redis becomes unreachable, one when it is back; a down client does not touch the network until
// its backoff ends (pkg/gateway/resp.js), so no call waits on a dead server. Legs reported while
// Redis is down stay with this process: the others miss that news, nothing breaks.
import { randomUUID } from "node:crypto";
import { BatonError, configError, PROBE_LEASE_MS, readOptionObject } from "../core.js";
import { HealthState } from "./node.js";
import { RedisClient, RedisReplyError } from "./resp.js";

const CALLER = "redisHealthStore";
const STORE_OPTIONS = ["health", "timeoutMs", "waitMs", "prefix", "onWarning"];
/** Legs reported within this long of the first go to Redis in one XADD. */
const REPORT_WINDOW_MS = 10;
/** A batch of this many legs goes at once. */
const REPORT_BATCH_MAX = 500;
/** The stream keeps about this many batches (XADD MAXLEN ~). */
const STREAM_MAX = 10_000;
/** One XREAD takes this many batches; a read goes on until it has all (admits wait at most waitMs). */
const READ_COUNT = 500;
/** A read takes at most the whole stream, so it ends even while the others append faster. */
const READS_MAX = Math.ceil(STREAM_MAX / READ_COUNT) + 1;
/** The breakers' window when the health config leaves it out (src/policy.rs's default). */
const DEFAULT_WINDOW_MS = 30_000;

/**
 * A HealthStore over the Redis at `url` (`redis://[user:password@]host[:port][/db]`, `rediss://`
 * for TLS), for `createGateway(config, { healthStore })`.
 *
 * options:
 * - `health`: the config's `health` section (default: the defaults), the replica's policy.
 * - `waitMs`: the longest `admit` waits for Redis (default 40: below the Baton's `healthWaitMs`,
 *   50, so a slow Redis leaves the call with this process's breakers rather than none).
 * - `timeoutMs`: the longest a Redis command may take before the connection counts as failed
 *   (default 1000); it is then closed, and opened again after a backoff.
 * - `prefix`: keys are `prefix + "legs"` and `prefix + "probe:" + target` (default
 *   "llm-baton-health:"); gateways sharing a server but not their breakers use different ones.
 * - `onWarning(message)`: where the warnings go (default console.warn, after "llm-baton: "). Never
 *   holds a password.
 */
export function redisHealthStore(url, options = {}) {
  const settings = readOptionObject(options, "options", STORE_OPTIONS, "{ health: config.health }", CALLER) ?? {};
  const { health, timeoutMs = 1000, waitMs = 40, prefix = "llm-baton-health:", onWarning = (m) => console.warn(`llm-baton: ${m}`) } = settings;
  if (typeof url !== "string") throw configError("url", `must be a redis:// or rediss:// URL string (got ${typeof url})`, CALLER);
  for (const [name, value, example] of [["timeoutMs", timeoutMs, 1000], ["waitMs", waitMs, 40]]) {
    if (!(typeof value === "number" && value >= 1 && value <= 60_000)) {
      const got = JSON.stringify(value);
      throw configError(`options.${name}`, `must be a number of milliseconds from 1 to 60000, e.g. ${example} (got ${got})`, CALLER);
    }
  }
  if (typeof prefix !== "string") throw configError("options.prefix", `must be a string such as "llm-baton-health:"`, CALLER);
  if (typeof onWarning !== "function") throw configError("options.onWarning", "must be a function of the warning's text", CALLER);
  let replica;
  try {
    replica = new HealthState(health);
  } catch (e) {
    if (e instanceof BatonError && e.kind === "config") {
      throw new BatonError({ kind: "config", path: `options.${e.path}`, message: `${CALLER}: options.${e.message}` });
    }
    throw e;
  }
  const windowMs = health?.windowMs ?? DEFAULT_WINDOW_MS;
  return new RedisHealthStore(url, { replica, windowMs, timeoutMs, waitMs, prefix, onWarning });
}

class RedisHealthStore {
  #replica;
  #leaseMs;
  #windowMs;
  #waitMs;
  #prefix;
  #warn;
  #client;
  /** Marks this process's batches in the stream, which it has applied already. */
  #id = randomUUID();
  /** The id of the last stream entry read, or null before the first read. */
  #lastId = null;
  /** The read under way, which concurrent admits share. */
  #reading = null;
  /** Legs waiting for the window to end, and its timer. */
  #outbox = [];
  #flushTimer = null;
  #wasDown = false;
  #refusalsWarned = false;

  constructor(url, { replica, windowMs, timeoutMs, waitMs, prefix, onWarning }) {
    this.#replica = replica;
    this.#leaseMs = replica[PROBE_LEASE_MS]();
    this.#windowMs = windowMs;
    this.#waitMs = waitMs;
    this.#prefix = prefix;
    this.#warn = onWarning;
    let client;
    try {
      client = new RedisClient(url, { timeoutMs, field: "url", onState: (up, reason) => this.#stateChanged(up, reason) });
    } catch (e) {
      throw configError("url", e.message.replace(/^url /, ""), CALLER);
    }
    this.#client = client;
    // Connect and catch up now, so the first call finds the others' news already read.
    this.#catchUp();
  }

  /** The server, as `redis://host:port/db` (no credentials). */
  get where() {
    return this.#client.where;
  }

  async admit(targets) {
    const deadline = performance.now() + this.#waitMs;
    await within(this.#catchUp(), deadline);
    let view;
    try {
      view = this.#replica.admit(Array.from(targets ?? [], String));
    } catch {
      return { targets: Array.from(targets ?? [], (target) => ({ target: String(target), state: "closed", probe: false })) };
    }
    const probes = view.targets.filter((entry) => entry.probe);
    if (probes.length === 0) return view;
    const claims = this.#client.pipeline(
      probes.map(({ target }) => ["SET", `${this.#prefix}probe:${target}`, this.#id, "NX", "PX", String(this.#leaseMs)]),
    );
    // Redis out of reach, or late: the probe stands (fail open), as it would without a store.
    const held = await within(Promise.all(claims.map((claim) => claim.then((reply) => reply === "OK", (e) => this.#failed(e, true)))), deadline);
    if (held === null) return view;
    const refused = new Set(probes.filter((_, i) => !held[i]).map((entry) => entry.target));
    const entries = view.targets.map((entry) => (refused.has(entry.target) ? { ...entry, probe: false, reopensInMs: this.#leaseMs } : entry));
    return { ...view, targets: entries };
  }

  report(events) {
    if (!Array.isArray(events)) return;
    const legs = events.filter((e) => typeof e?.leg?.target === "string").map(slim);
    if (legs.length === 0) return;
    try {
      this.#replica.report(legs);
    } catch {
      // A leg the replica cannot read (and those after it) teaches it nothing; all still go out.
    }
    this.#outbox.push(...legs);
    if (this.#outbox.length >= REPORT_BATCH_MAX) this.#flush();
    else if (this.#flushTimer === null) {
      this.#flushTimer = setTimeout(() => this.#flush(), REPORT_WINDOW_MS);
      this.#flushTimer.unref?.();
    }
  }

  /** Every target this process's replica has heard of, as `baton.health()` shows them. */
  snapshot() {
    return this.#replica.snapshot();
  }

  /** Sends the legs that wait, then closes the connection; resolves once closed. */
  async close() {
    await this.#flush();
    this.#client.close();
  }

  /** Sends the legs that wait; resolves once Redis has them, or could not take them. */
  #flush() {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = null;
    const legs = this.#outbox;
    this.#outbox = [];
    if (legs.length === 0) return Promise.resolve();
    const add = ["XADD", `${this.#prefix}legs`, "MAXLEN", "~", String(STREAM_MAX), "*", "from", this.#id, "legs", JSON.stringify(legs)];
    return this.#client.send(...add).then(
      () => {},
      (e) => this.#failed(e),
    );
  }

  /** The read under way, or a new one. */
  #catchUp() {
    this.#reading ??= this.#read().finally(() => (this.#reading = null));
    return this.#reading;
  }

  /** Applies what the others appended since the last read; never rejects. */
  async #read() {
    try {
      if (this.#lastId === null) {
        const [seconds, micros] = await this.#client.send("TIME");
        this.#lastId = `${Math.max(0, Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) - this.#windowMs)}-0`;
      }
      for (let i = 0; i < READS_MAX; i += 1) {
        const reply = await this.#client.send("XREAD", "COUNT", String(READ_COUNT), "STREAMS", `${this.#prefix}legs`, this.#lastId);
        const entries = reply?.[0]?.[1] ?? [];
        for (const [id, fields] of entries) {
          this.#lastId = id;
          const field = (name) => (fields.includes(name) ? fields[fields.indexOf(name) + 1] : undefined);
          if (field("from") !== this.#id) this.#learn(field("legs"));
        }
        if (entries.length < READ_COUNT) return;
      }
    } catch (e) {
      this.#failed(e);
    }
  }

  #learn(text) {
    try {
      const legs = JSON.parse(text);
      if (Array.isArray(legs)) this.#replica.report(legs);
    } catch {
      // Another version's legs, or not legs at all: nothing to learn from them.
    }
  }

  /** A command that failed: reachability is told by #stateChanged; a refusal, once. */
  #failed(e, result) {
    if (e instanceof RedisReplyError && !this.#refusalsWarned) {
      this.#refusalsWarned = true;
      this.#warn(`the health store at ${this.where} refused a command (${e.message}); this process keeps its own breakers where it must`);
    }
    return result;
  }

  #stateChanged(up, reason) {
    if (!up) {
      this.#wasDown = true;
      this.#warn(`the health store at ${this.where} is unreachable (${reason}); this process keeps its own breakers until it is back`);
    } else if (this.#wasDown) {
      this.#wasDown = false;
      this.#warn(`the health store at ${this.where} is reachable again; breakers are shared`);
    }
  }
}

/** What health learns from a leg event: the leg's target, outcome, place in its call and times, and the cause. */
function slim(event) {
  const { target, outcome, attempt, ttftMs, startMs, endMs } = event.leg;
  const report = { leg: { target, outcome, attempt, ttftMs, startMs, endMs } };
  if (event.cause !== undefined) report.cause = event.cause;
  return report;
}

/** `promise`'s value, or null once `deadline` (performance.now()) passes first. */
function within(promise, deadline) {
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(resolve, Math.max(0, deadline - performance.now()), null);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * The command's health store (pkg/bin/llm-baton-gateway.js): `gateway.healthStore` of the config
 * (`{ redis: URL, waitMs?, timeoutMs?, prefix? }`), or the URL in GATEWAY_REDIS_URL (`envUrl`). Returns
 * `[config, store]`: the config without `gateway.healthStore` (the gateway's wasm does not read
 * it), and the store or null. Throws BatonError kind "config" naming the field, never the URL.
 */
export function healthStoreOfConfig(config, { envUrl, onWarning } = {}) {
  const gateway = config?.gateway;
  const section = gateway !== null && typeof gateway === "object" ? gateway.healthStore : undefined;
  const fromEnv = envUrl === undefined || envUrl === "" ? undefined : envUrl;
  if (section === undefined && fromEnv === undefined) return [config, null];
  if (section !== undefined && fromEnv !== undefined) {
    throw configError("gateway.healthStore", "is given both in the config and in GATEWAY_REDIS_URL; give it once");
  }
  const where = section === undefined ? "GATEWAY_REDIS_URL" : "gateway.healthStore";
  const settings =
    section === undefined
      ? { redis: fromEnv }
      : readOptionObject(section, where, ["redis", "waitMs", "timeoutMs", "prefix"], `{ "redis": "redis://127.0.0.1:6379" }`);
  if (settings === null || typeof settings.redis !== "string") {
    throw configError(`${where}.redis`, `must be the Redis URL, e.g. { "redis": "redis://127.0.0.1:6379" }`);
  }
  const { redis, timeoutMs, waitMs, prefix } = settings;
  let store;
  try {
    store = redisHealthStore(redis, { health: config?.health, timeoutMs, waitMs, prefix, onWarning });
  } catch (e) {
    if (!(e instanceof BatonError && e.kind === "config")) throw e;
    // The field as the user wrote it: the URL, a store option, or the health section.
    const field = e.path === "url" ? (section === undefined ? where : `${where}.redis`) : e.path.startsWith("options.health") ? e.path.slice("options.".length) : `${where}.${e.path.slice("options.".length)}`;
    const what = e.message.slice(e.message.indexOf(e.path) + e.path.length).trim();
    throw configError(field, what);
  }
  if (section === undefined) return [config, store];
  const { healthStore: _, ...rest } = gateway;
  return [{ ...config, gateway: rest }, store];
}
