// A HealthStore for the tabs of one app: what one tab learns about a target's health, every tab
// of the same origin knows a moment later, and a half-open target gets one probe among them all.
//
// Design: replicas, not a leader. Every tab keeps its own breakers (a HealthState) and feeds them
// every attempt that any tab reports: `report` applies the reports (`leg` events) here and posts
// them on a BroadcastChannel, and reports that arrive are applied too. Admissions are decided
// locally, with no round trip. Only a probe needs the others: a tab whose replica grants one must
// also take the Web Lock `${name}:${target}` (ifAvailable: it never queues, and a browser slower
// than LOCK_WAIT_MS to answer counts as a no) and holds it for the probe's lease, `cooldownMs`. The
// browser grants a lock to one holder at a time, so however the replicas differ, at most one probe
// per lease leaves all the tabs together. Holding the lock for the whole lease delays no one: a
// failed probe opens the target for a cooldown that ends after the lease, and after a success there
// is nothing to probe. The winner also announces the probe on the channel, so the others skip the
// target without asking for the lock, and know when it may be probed again.
//
// Why not one leader tab that decides for all (Web Locks can elect one)? Every admission would
// then wait for a message round trip through another tab's main thread, which may be busy or
// throttled in the background, and what the breakers learned would vanish with the leader's tab.
// Replicas need the other tabs for news only, and the lock is granted by the browser itself.
//
// Fails open. Without BroadcastChannel the store is a private replica (what a Baton does without
// a store). Without the Web Locks API (Node, Deno, an opaque origin) a probe is exclusive only as
// far as the announcements reach: two tabs that decide within the same millisecond may both
// probe. In Node the channel reaches the worker threads of one process, and is unref()'d so it
// never keeps the process alive.

import { BatonError, configError, HealthState, PROBE_LEASE_MS, readOptionObject } from "./core.js";

/** Marks this store's messages: a channel of the same name used by something else is ignored. */
const PROTOCOL = "llm-baton-health/1";
/**
 * How long a probe waits for its lock before this tab refuses it: half the Baton's default
 * `healthWaitMs` (50), so a busy browser delays a probe instead of making the Baton stop waiting
 * and fail open, which would let this tab's call through beside another tab's probe.
 */
const LOCK_WAIT_MS = 25;

const clock =
  typeof performance === "object" && typeof performance.now === "function" ? () => performance.now() : () => Date.now();

/**
 * A HealthStore shared by every tab (and worker) of this origin that uses the same `name`.
 * `options.health` is the breakers' config, the same object as the Baton config's `health`
 * (default: the defaults); the lease of a probe is its `cooldownMs`.
 */
export function broadcastHealthStore(name = "llm-baton-health", options = {}) {
  if (typeof name !== "string" || name.length === 0 || name.startsWith("-")) {
    const what = `must be a non-empty string not starting with "-" (Web Locks reserves those), such as "llm-baton-health"`;
    throw configError("name", `${what}; got ${describe(name)}`);
  }
  const { health } = readOptionObject(options, "options", ["health"], "{ health: { cooldownMs: 5000 } }") ?? {};
  return new BroadcastHealthStore(name, health);
}

class BroadcastHealthStore {
  #name;
  #leaseMs;
  #replica;
  #channel = null;
  /** target -> clock() time until which another tab holds its probe. */
  #probesElsewhere = new Map();

  constructor(name, health) {
    this.#name = name;
    try {
      this.#replica = new HealthState(health);
    } catch (e) {
      throw e instanceof BatonError && e.kind === "config" ? rename(e, "options.") : e;
    }
    // The breakers' cooldown as the wasm read it (its default when omitted).
    this.#leaseMs = this.#replica[PROBE_LEASE_MS]();
    if (typeof globalThis.BroadcastChannel !== "function") return;
    try {
      this.#channel = new BroadcastChannel(name);
    } catch {
      return;
    }
    this.#channel.unref?.();
    this.#channel.addEventListener("message", (event) => this.#receive(event.data));
  }

  /** The replica's admissions; a probe it grants stands only if this tab wins the target's lock. */
  async admit(targets) {
    let view;
    try {
      view = this.#replica.admit(targets);
    } catch {
      return { targets: targets.map((target) => ({ target, state: "closed", probe: false })) };
    }
    const entries = await Promise.all(view.targets.map((entry) => (entry.probe ? this.#claimProbe(entry) : entry)));
    return { ...view, targets: entries };
  }

  /** Applies the reports (`leg` events: `{leg, cause?}`) here and sends them to every other tab. */
  report(reports) {
    if (!Array.isArray(reports)) return;
    const readable = reports.filter(isReport);
    if (readable.length === 0) return;
    this.#learn(readable);
    this.#post({ type: "reports", reports: readable });
  }

  /** Stops sending and hearing news; the replica goes on alone. */
  close() {
    this.#channel?.close();
    this.#channel = null;
  }

  async #claimProbe(entry) {
    const { target } = entry;
    const heldUntil = this.#probesElsewhere.get(target);
    if (heldUntil !== undefined) {
      const leftMs = heldUntil - clock();
      if (leftMs > 0) return refused(entry, leftMs);
      this.#probesElsewhere.delete(target);
    }
    if (!(await holdLock(`${this.#name}:${target}`, this.#leaseMs, LOCK_WAIT_MS))) return refused(entry, this.#leaseMs);
    this.#post({ type: "probe", target, leaseMs: this.#leaseMs });
    return entry;
  }

  #receive(message) {
    if (message === null || typeof message !== "object" || message.protocol !== PROTOCOL) return;
    if (message.type === "reports" && Array.isArray(message.reports)) {
      const reports = message.reports.filter(isReport);
      if (reports.length > 0) this.#learn(reports);
    } else if (message.type === "probe" && typeof message.target === "string" && message.leaseMs >= 0) {
      this.#probesElsewhere.set(message.target, clock() + Math.min(message.leaseMs, this.#leaseMs));
    }
  }

  #learn(reports) {
    try {
      this.#replica.report(reports);
    } catch {
      // A report the replica cannot read (another version's?) teaches it nothing; the rest did.
    }
  }

  #post(message) {
    try {
      this.#channel?.postMessage({ protocol: PROTOCOL, ...message });
    } catch {
      // A closed channel or an uncloneable report: the other tabs miss this news, nothing breaks.
    }
  }
}

/**
 * Takes the Web Lock `lockName` if no one holds it, and keeps it for `leaseMs`. Resolves to
 * whether this tab holds it: false if someone does, or if the browser took over `waitMs` to say
 * (a lock granted after that is let go at once); true where the Web Locks API is missing or
 * refuses (fail open).
 */
function holdLock(lockName, leaseMs, waitMs) {
  const locks = globalThis.navigator?.locks;
  if (typeof locks?.request !== "function") return Promise.resolve(true);
  return new Promise((resolve) => {
    let answered = false;
    const answer = (held) => {
      if (answered) return;
      answered = true;
      clearTimeout(late);
      resolve(held);
    };
    const late = setTimeout(() => answer(false), waitMs);
    late?.unref?.();
    locks
      .request(lockName, { ifAvailable: true }, (lock) => {
        if (lock === null || answered) {
          answer(false);
          return undefined;
        }
        answer(true);
        return new Promise((release) => {
          const lease = setTimeout(release, leaseMs);
          lease?.unref?.(); // Node: a held lease never keeps the process alive
        });
      })
      .catch(() => answer(true));
  });
}

/** A `leg` event's `{leg, cause?}`, the shape every tab's replica reads. */
function isReport(report) {
  return report !== null && typeof report === "object" && typeof report.leg?.target === "string";
}

/** The view of a probe another tab holds: skip it for the `leftMs` that remain of its lease. */
function refused(entry, leftMs) {
  return { ...entry, probe: false, reopensInMs: Math.ceil(leftMs) };
}

/** A config error about `health.…` as one about `options.health.…`, the store's own argument. */
function rename(error, prefix) {
  return new BatonError({ kind: "config", path: prefix + error.path, message: prefix + error.message });
}

function describe(value) {
  return typeof value === "string" ? JSON.stringify(value) : typeof value;
}
