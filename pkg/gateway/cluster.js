// `llm-baton-gateway --workers N`: one gateway on every core, as node:cluster runs it. The
// primary listens on the port (node:cluster hands each connection to a worker in turn) and serves
// nothing itself; each worker runs the whole gateway. What must be one for the gateway to be one
// lives in the primary:
//
// - The breakers and the retry budget: the primary keeps a HealthState, and each worker's gateway
//   follows it as a health store (the protocol of the Durable Object's store, pkg/durable.js):
//   `admit` asks the primary over IPC, `report` tells it each ended attempt. A provider one worker
//   finds dead is skipped by the others once their word on it is older than `healthCacheMs`.
// - `/metrics`: the worker a scrape reaches asks the primary, which asks every worker for its
//   counts (pkg/gateway/metrics.js's snapshot) and answers their sum with the shared breakers.
//
// A worker that dies is replaced, with a line on stderr (after a pause when the last replacement
// was under a second ago: a worker that always crashes costs no tight loop); its counts are lost
// (a scraper sees the counters fall, which Prometheus's rate() takes as a reset). SIGTERM or SIGINT to the primary
// drains every worker (each finishes the requests it has in flight), and the primary exits once
// they all have.
import cluster from "node:cluster";
import { METRICS } from "../gateway.js";

/** Marks this module's messages: anything else on the IPC channel is not ours. */
const PROTOCOL = "llm-baton-cluster/1";
/** How long the primary waits for a worker's counts before answering a scrape without them. */
const COLLECT_WAIT_MS = 1000;
/**
 * A worker that dies this soon after the last replacement is replaced after this long: a worker
 * that crashes at every request must not make the primary fork in a tight loop.
 */
const RESTART_PAUSE_MS = 1000;

/**
 * The primary: forks `workers` workers of this same script (their argv and environment are the
 * primary's), keeps the shared breakers in `health` (a HealthState of the gateway's wasm; null
 * when the workers share theirs through another store, such as Redis), and
 * replaces a worker that dies. `say(line)` writes a line on stderr. Resolves once every worker
 * listens with `{ url, drain(signal), stopNow(signal) }`, each of which resolves once every worker
 * has exited. A worker that cannot start (a port in use, a config module that throws: it says
 * why) stops them all, as does any worker that ends before they all first listen: then the
 * promise rejects with its reason; later, `fatal(reason)` is called.
 */
export function startPrimary({ workers, health, say, fatal }) {
  const listening = new Set();
  let stopping = false;
  let announced = false;
  let failed = null;
  let nextKey = 0;
  /** performance.now() of the last replacement (or the one scheduled). */
  let replaced = -Infinity;
  /** collect key -> { waiting: Set of worker ids, snapshots, end(), timer } */
  const collecting = new Map();
  let ready;
  let refuse;
  const started = new Promise((resolve, reject) => {
    ready = resolve;
    refuse = reject;
  });

  const send = (worker, message) => {
    try {
      worker.send({ protocol: PROTOCOL, ...message });
    } catch {
      // A worker that is exiting: its exit is handled below.
    }
  };
  const live = () => Object.values(cluster.workers ?? {}).filter((w) => w && !w.isDead());

  const collect = (asker, id) => {
    const key = nextKey++;
    const round = { waiting: new Set(), snapshots: [], timer: null };
    round.end = () => {
      if (!collecting.delete(key)) return;
      clearTimeout(round.timer);
      let view;
      try {
        view = health.snapshot();
      } catch {
        view = null;
      }
      send(asker, { type: "metrics", id, snapshots: round.snapshots, health: view });
    };
    collecting.set(key, round);
    for (const worker of live()) {
      round.waiting.add(worker.id);
      send(worker, { type: "collect", key });
    }
    round.timer = setTimeout(round.end, COLLECT_WAIT_MS);
    if (round.waiting.size === 0) round.end();
  };

  const onMessage = (worker, message) => {
    if (message?.protocol !== PROTOCOL) return;
    switch (message.type) {
      case "admit": {
        let view;
        try {
          view = health.admit(message.targets);
        } catch {
          view = null;
        }
        send(worker, { type: "admitted", id: message.id, view });
        break;
      }
      case "report":
        try {
          health.report(message.events);
        } catch {
          // A report the primary cannot read teaches it nothing; the worker's call went on.
        }
        break;
      case "metrics":
        collect(worker, message.id);
        break;
      case "collected": {
        const round = collecting.get(message.key);
        if (!round || !round.waiting.delete(worker.id)) break;
        round.snapshots.push(message.snapshot);
        if (round.waiting.size === 0) round.end();
        break;
      }
      case "listening":
        listening.add(worker.id);
        if (!announced && failed === null && listening.size === workers) {
          announced = true;
          ready(message.url);
        }
        break;
      case "refused":
        failed ??= message.message;
        break;
      default:
        break;
    }
  };

  const fork = () => {
    const worker = cluster.fork();
    worker.on("message", (message) => onMessage(worker, message));
    return worker;
  };

  cluster.on("exit", (worker, code, signal) => {
    const how = signal ? `signal ${signal}` : `code ${code}`;
    for (const round of collecting.values()) if (round.waiting.delete(worker.id) && round.waiting.size === 0) round.end();
    const served = listening.delete(worker.id);
    if (stopping) return;
    // Once the gateway serves, a worker that ends without a reason not to start is replaced,
    // whether or not it was listening yet.
    if ((served || announced) && failed === null) {
      const died = `worker ${worker.id} (process ${worker.process.pid}) exited (${how})`;
      const now = performance.now();
      if (now - replaced >= RESTART_PAUSE_MS) {
        replaced = now;
        say(`${died}; started worker ${fork().id} in its place`);
        return;
      }
      replaced += RESTART_PAUSE_MS;
      say(`${died}; another starts in ${((replaced - now) / 1000).toFixed(1)} s (the last was replaced less than ${RESTART_PAUSE_MS / 1000} s ago)`);
      setTimeout(() => stopping || fork(), replaced - now);
      return;
    }
    // One worker could not start, so none can: the gateway stops with its reason.
    failed ??= `worker ${worker.id} exited (${how}) before it listened`;
    stopping = true;
    for (const w of live()) w.process.kill("SIGKILL");
    allExited().then(() => (announced ? fatal(failed) : refuse(new Error(failed))));
  });
  for (let i = 0; i < workers; i += 1) fork();

  return started.then((url) => ({
    url,
    drain(signal) {
      stopping = true;
      for (const worker of live()) send(worker, { type: "drain", signal });
      return allExited();
    },
    stopNow(signal) {
      stopping = true;
      for (const worker of live()) send(worker, { type: "stop", signal });
      return allExited();
    },
  }));
}

/** Resolves once no worker is alive. */
function allExited() {
  return new Promise((resolve) => {
    const check = () => {
      if (Object.values(cluster.workers ?? {}).every((w) => !w || w.isDead())) resolve();
      else cluster.once("exit", () => setImmediate(check));
    };
    check();
  });
}

/**
 * A worker's side. `store`: the HealthStore that asks the primary (pass it to createGateway as
 * `healthStore`). `attach(gateway)`: its `/metrics` (when it has one) reports every worker's
 * counts. `listening(url)` and `refused(message)` tell the primary how starting went.
 * `onStop(drain, stopNow)`: the primary's drain and stop orders, and the primary's end (the IPC
 * channel closing), which drains.
 */
export function workerSide() {
  let nextId = 0;
  /** ask id -> resolve, for admissions and scrapes the primary has not answered yet. */
  const pending = new Map();
  let reports = [];
  const send = (message) => {
    try {
      process.send({ protocol: PROTOCOL, ...message });
      return true;
    } catch {
      return false;
    }
  };
  const ask = (message) =>
    new Promise((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      if (!send({ ...message, id })) {
        pending.delete(id);
        resolve(null);
      }
    });
  let collect = async () => ({ families: {}, inFlight: 0, processes: 1 });
  const handlers = { drain: () => {}, stop: () => {} };

  process.on("message", (message) => {
    if (message?.protocol !== PROTOCOL) return;
    if (message.type === "admitted" || message.type === "metrics") {
      const resolve = pending.get(message.id);
      pending.delete(message.id);
      resolve?.(message);
    } else if (message.type === "collect") {
      collect().then((snapshot) => send({ type: "collected", key: message.key, snapshot }));
    } else if (message.type === "drain") handlers.drain(message.signal);
    else if (message.type === "stop") handlers.stop(message.signal);
  });
  process.on("disconnect", () => {
    for (const resolve of pending.values()) resolve(null);
    pending.clear();
    handlers.drain("the primary exited");
  });

  const store = {
    /** The primary's view; null (the gateway fails open) if it cannot be asked. */
    async admit(targets) {
      const answer = await ask({ type: "admit", targets });
      return answer?.view ?? null;
    },
    /** Sent to the primary in one message per turn of the event loop. */
    report(events) {
      if (reports.length === 0) setImmediate(() => {
        send({ type: "report", events: reports });
        reports = [];
      });
      reports.push(...events);
    },
  };

  return {
    store,
    attach(gateway) {
      const link = gateway[METRICS];
      if (!link) return;
      collect = async () => (await link.load()).snapshot();
      link.gather = async () => {
        const answer = await ask({ type: "metrics" });
        if (answer === null) return { snapshot: (await link.load()).snapshot(), health: link.health() };
        const { mergeSnapshots } = link.code;
        // The primary keeps no breakers when the workers share them through Redis: this one's.
        return { snapshot: mergeSnapshots(answer.snapshots), health: answer.health ?? link.health() };
      };
    },
    listening: (url) => send({ type: "listening", url }),
    refused: (message) => send({ type: "refused", message }),
    onStop(drain, stop) {
      handlers.drain = drain;
      handlers.stop = stop;
    },
  };
}
