#!/usr/bin/env node
// llm-baton-gateway: the OpenAI- and Anthropic-compatible gateway in one command on Node, the
// way self-hosted gateways are run (`npx llm-baton-gateway --config baton.json`). The config
// comes from a file, or from the environment exactly as the Worker and Deno examples read it;
// the server is llm-baton/gateway/node-server. Every failure to start is one line on stderr
// (what, where, what would be right) and a non-zero exit: 2 for bad flags, 1 for the rest.
import cluster from "node:cluster";
import { readFileSync } from "node:fs";
import { availableParallelism, constants } from "node:os";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { configFromEnv } from "../gateway/env.js";
import { parseJson } from "../gateway/json-text.js";
import { serve } from "../gateway/node-server.js";

const NAME = "llm-baton-gateway";
/** How often a gateway started by npm checks that npm is still there. */
const PARENT_CHECK_MS = 200;
const FLAGS = ["config", "host", "port", "log", "workers", "help"];
/** The most workers a gateway runs: far past any core count, short of a typo's thousands. */
const MAX_WORKERS = 256;
const LOG_FORMATS = ["text", "json", "off"];
const USAGE = `Usage: ${NAME} [--config FILE] [--host HOST] [--port PORT] [--log text|json|off] [--workers N]

Serves llm-baton's OpenAI- and Anthropic-compatible gateway over HTTP: POST /v1/chat/completions,
/v1/messages and /v1/responses; GET /v1/models (and /v1/models/{id}), /v1/health and /healthz.

Options:
  --config FILE  the config document: a .json file, or a .js/.mjs module whose default export is
                 the config (or a function of process.env that returns it). Without --config the
                 config comes from the environment:
                   BATON_CONFIG       the whole config document as JSON; else one route, "chat",
                   OPENAI_API_KEY     [OPENAI_BASE_URL, OPENAI_MODEL] an OpenAI target, failing
                   ANTHROPIC_API_KEY  [ANTHROPIC_BASE_URL, ANTHROPIC_MODEL] over to Anthropic
                   GATEWAY_API_KEYS   comma-separated keys clients must send
                   DEADLINE_MS        the default budget of one request (default 30000)
                 With or without --config:
                   GATEWAY_METRICS_KEY  serve Prometheus metrics at GET /metrics to a scraper
                                        sending Authorization: Bearer <this key> (16+ characters;
                                        the config's gateway.metrics.apiKey)
                   GATEWAY_WORKERS      as --workers
                   GATEWAY_REDIS_URL    share breakers and the retry budget with every gateway
                                        naming the same Redis (docs/health.md; the config's
                                        gateway.healthStore)
  --host HOST    the address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)
  --port PORT    the port to listen on (default 8787; 0 picks a free one)
  --log FORMAT   one access-log line per request on stdout: text (default), json, or off.
                 Method, path (no query string), status, time taken, the target that served and
                 its attempts (and the worker, with several); never a header, a body or a key
  --workers N    worker processes sharing the port (default: one per core, ${availableParallelism()} here); they
                 share breakers and the retry budget, and /metrics counts them all
  -h, --help     print this help and exit

Once listening it prints GATEWAY_URL=http://HOST:PORT on stdout. On SIGTERM or SIGINT it stops
accepting connections and exits 0 once the requests in flight have finished, each within its own
deadline; a second signal exits at once. Started by npx or npm start, it does the same when npm
exits (a signal to npm never reaches it). A worker that dies is replaced, with a line on stderr.
`;

/** A reason not to start: printed as one line, then exit with `code`. */
class Refusal extends Error {
  constructor(message, code = 1) {
    super(message);
    this.code = code;
  }
}

/** `{ help }` or `{ config?, host, port }` from the command line, or a Refusal (exit 2). */
function parseFlags(argv) {
  const flags = { host: "127.0.0.1", port: 8787, log: "text" };
  const seen = new Set();
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === "-h" || arg === "--help") return { help: true };
    const match = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg);
    if (!match || !FLAGS.includes(match[1])) {
      const name = match?.[1] ?? arg.replace(/^-+/, "");
      const near = FLAGS.find((f) => editDistance(f, name) <= 2);
      const hint = near ? ` (did you mean --${near}?)` : "";
      const what = arg.startsWith("-") ? `unknown option ${JSON.stringify(arg)}` : `unexpected argument ${JSON.stringify(arg)}`;
      throw new Refusal(`${what}${hint}; run ${NAME} --help for the options`, 2);
    }
    const flag = match[1];
    if (flag === "help") throw new Refusal("--help takes no value", 2);
    if (seen.has(flag)) throw new Refusal(`--${flag} is given twice; give it once`, 2);
    seen.add(flag);
    let value = match[2];
    if (value === undefined) {
      value = argv[i + 1];
      if (value === undefined || value.startsWith("--")) throw new Refusal(`--${flag} needs a value, e.g. ${example(flag)}`, 2);
      i += 1;
    }
    if (value === "") throw new Refusal(`--${flag} is empty; give a value, e.g. ${example(flag)}`, 2);
    if (flag === "workers") {
      flags.workers = readWorkers(value, "--workers", 2);
    } else if (flag === "port") {
      const port = /^\d{1,5}$/.test(value) ? Number(value) : NaN;
      if (!(port <= 65535)) throw new Refusal(`--port must be a port number from 0 to 65535, 0 for any free port (got ${JSON.stringify(value)})`, 2);
      flags.port = port;
    } else if (flag === "log" && !LOG_FORMATS.includes(value)) {
      throw new Refusal(`--log must be text, json or off (got ${JSON.stringify(value)})`, 2);
    } else flags[flag] = value;
  }
  return flags;
}

function example(flag) {
  return { config: "--config baton.json", host: "--host 127.0.0.1", port: "--port 8787", log: "--log json", workers: "--workers 4" }[flag];
}

/** A worker count from `value` (named `where`), or a Refusal exiting with `code`. */
function readWorkers(value, where, code) {
  const n = /^\d{1,4}$/.test(value) ? Number(value) : NaN;
  if (!(n >= 1 && n <= MAX_WORKERS)) {
    throw new Refusal(`${where} must be a number of worker processes from 1 to ${MAX_WORKERS}, e.g. ${availableParallelism()} (one per core, the default; got ${JSON.stringify(value)})`, code);
  }
  return n;
}

/** The worker count: --workers, else GATEWAY_WORKERS, else one per core. */
function workerCount(flags) {
  if (flags.workers !== undefined) return flags.workers;
  const env = process.env.GATEWAY_WORKERS;
  return env ? readWorkers(env, "GATEWAY_WORKERS", 2) : availableParallelism();
}

/**
 * `config` with GATEWAY_METRICS_KEY as its gateway.metrics.apiKey, when that is set; a config that
 * has its own gateway.metrics as well is a Refusal (which of the two keys is meant?).
 */
function withMetricsKey(config, where) {
  const key = process.env.GATEWAY_METRICS_KEY;
  if (!key) return config;
  if (config?.gateway?.metrics != null) {
    throw new Refusal(`GATEWAY_METRICS_KEY is set and ${where} has gateway.metrics too; keep one of them`);
  }
  return { ...config, gateway: { ...config?.gateway, metrics: { apiKey: key } } };
}

function editDistance(a, b) {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const next = [i];
    for (let j = 1; j <= b.length; j += 1) next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length];
}

/** `[config, where]`: the config document and how to name its source in a message. */
async function loadConfig(path) {
  if (path === undefined) {
    try {
      const where = process.env.BATON_CONFIG ? "the config in BATON_CONFIG" : "the config from the environment";
      return [configFromEnv(process.env), where];
    } catch (e) {
      throw new Refusal(`without --config: ${messageOf(e)}`);
    }
  }
  if (/\.[cm]?js$/.test(path)) return [await importConfig(path), `the config in ${path}`];
  let text;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    const why = { ENOENT: "no such file", EISDIR: "it is a directory", EACCES: "permission denied" }[e.code] ?? messageOf(e);
    throw new Refusal(`cannot read the config file ${path}: ${why}; --config takes a JSON file (or a .js/.mjs module)`);
  }
  try {
    return [parseJson(text.replace(/^\uFEFF/, ""), `the config file ${path}`), `the config in ${path}`];
  } catch (e) {
    throw new Refusal(messageOf(e));
  }
}

/** A .js/.mjs config: its default export, or what that (a function) returns for process.env. */
async function importConfig(path) {
  let module;
  try {
    module = await import(pathToFileURL(resolve(path)).href);
  } catch (e) {
    const why = e?.code === "ERR_MODULE_NOT_FOUND" && !e.message.includes("imported from") ? "no such file" : messageOf(e);
    throw new Refusal(`cannot load the config module ${path}: ${why}`);
  }
  if (!("default" in module)) throw new Refusal(`the config module ${path} has no default export; end it with \`export default { targets: { ... } }\``);
  try {
    return typeof module.default === "function" ? await module.default(process.env) : module.default;
  } catch (e) {
    throw new Refusal(`the config module ${path}: its default export threw: ${messageOf(e)}`);
  }
}

/**
 * The access log `--log` asks for: a line on stdout per ended exchange, or none. `worker`: the
 * worker's number when there are several, which each line names.
 */
function accessLog(format, worker) {
  if (format === "off") return undefined;
  if (format === "json") {
    return worker === undefined
      ? (record) => process.stdout.write(`${JSON.stringify(record)}\n`)
      : (record) => process.stdout.write(`${JSON.stringify({ ...record, worker })}\n`);
  }
  const by = worker === undefined ? "" : ` worker=${worker}`;
  return (r) => {
    const served = r.target ? ` target=${r.target} attempts=${r.attempts}` : "";
    process.stdout.write(`${r.time} ${r.method} ${r.path} ${r.status} ${r.ms}ms${served}${r.complete ? "" : " incomplete"}${by}\n`);
  };
}

function messageOf(e) {
  return e instanceof Error ? e.message : String(e);
}

/**
 * The gateway's entry for `config`: the build with the clouds when a target names one (`cloud`,
 * or Bedrock's own `bedrock_converse` format), else the smaller one. Loaded only once the config
 * is read: --help and a bad flag need no wasm.
 */
function gatewayEntry(config) {
  const targets = config?.targets;
  const clouds = targets !== null && typeof targets === "object" &&
    Object.values(targets).some((t) => t !== null && typeof t === "object" && (t.cloud !== undefined || t.format === "bedrock_converse"));
  return clouds ? import("../gateway/clouds/node.js") : import("../gateway/node.js");
}

/**
 * `[config, where, store]` as the gateway is given it: loadConfig's, with GATEWAY_METRICS_KEY,
 * and the Redis health store of `gateway.healthStore` or GATEWAY_REDIS_URL (its module loaded
 * only then; the field taken out of the config), or null without one.
 */
async function gatewayConfig(flags) {
  const [loaded, where] = await loadConfig(flags.config);
  const config = withMetricsKey(loaded, where);
  const envUrl = process.env.GATEWAY_REDIS_URL;
  if (config?.gateway?.healthStore === undefined && !envUrl) return [config, where, null];
  const { healthStoreOfConfig } = await import("../gateway/redis.js");
  try {
    const [rest, store] = healthStoreOfConfig(config, { envUrl, onWarning: (m) => process.stderr.write(`${NAME}: ${m}\n`) });
    return [rest, where, store];
  } catch (e) {
    throw new Refusal(`${where} is not valid: ${messageOf(e)}`);
  }
}

/** The gateway, or a Refusal naming the config's source. */
function build(createGateway, config, where, options) {
  try {
    return createGateway(config, options);
  } catch (e) {
    throw new Refusal(`${where} is not valid: ${messageOf(e)}`);
  }
}

/** Drains or stops at SIGTERM and SIGINT: the first signal `drain(signal)`, a second `now(signal)`. */
function onSignals(drain, now) {
  let signalled = false;
  for (const signal of ["SIGTERM", "SIGINT"]) {
    process.on(signal, () => {
      if (signalled) return now(signal);
      signalled = true;
      drain(signal);
    });
  }
}

/**
 * `npx llm-baton-gateway` (npm exec) and `npm start` run the command under `sh -c`: a signal to
 * npm ends npm and that shell, and never reaches node, which would go on serving alone. Started
 * by npm, the gateway watches its parent, and calls `drain` once the parent is gone.
 */
function watchNpm(drain) {
  if (!process.env.npm_command) return;
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    drain(`npm (process ${parent}) exited`);
  }, PARENT_CHECK_MS);
  watch.unref();
}

async function main(argv) {
  const flags = parseFlags(argv);
  if (flags.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (cluster.isWorker) return serveAsWorker(flags);
  const workers = workerCount(flags);
  const [config, where, redis] = await gatewayConfig(flags);
  const { createGateway, HealthState } = await gatewayEntry(config);
  if (workers === 1) return serveAlone(build(createGateway, config, where, redis ? { healthStore: redis } : undefined), flags);
  // Validated here (and the open-gateway warning said) once, not once per worker.
  build(createGateway, config, where);
  const { startPrimary } = await import("../gateway/cluster.js");
  // The breakers and retry budget every worker shares, on the config's own policy; with Redis,
  // each worker shares them through it instead, with every other process that names it.
  await redis?.close();
  const health = redis ? null : new HealthState(config.health);
  const say = (line) => process.stderr.write(`${NAME}: ${line}\n`);
  let running;
  try {
    running = await startPrimary({
      workers,
      health,
      say,
      fatal(reason) {
        say(reason);
        process.exit(1);
      },
    });
  } catch (e) {
    throw new Refusal(messageOf(e));
  }
  let stopping = false;
  // 0 once drained; a second signal's exit status once the workers were stopped by it.
  let status = 0;
  const drain = (why) => {
    stopping = true;
    say(`${why}: draining ${workers} workers`);
    running.drain(why).then(() => process.exit(status));
  };
  onSignals(drain, (signal) => {
    say(`${signal} again: stopping every worker now`);
    status = 128 + constants.signals[signal];
    running.stopNow(signal).then(() => process.exit(status));
  });
  watchNpm((why) => stopping || drain(why));
  process.stdout.write(`GATEWAY_URL=${running.url}\n`);
}

/** One process serving `gateway` (--workers 1). */
async function serveAlone(gateway, flags) {
  const running = await listen(gateway, flags, undefined);
  stopOnSignals(running, NAME, true);
  process.stdout.write(`GATEWAY_URL=${running.url}\n`);
}

/** A worker of `--workers N`: the gateway on the primary's shared breakers, on the shared port. */
async function serveAsWorker(flags) {
  const { workerSide } = await import("../gateway/cluster.js");
  const side = workerSide();
  const name = `${NAME} (worker ${cluster.worker.id})`;
  try {
    const [config, where, redis] = await gatewayConfig(flags);
    const { createGateway } = await gatewayEntry(config);
    // The primary has already said that the gateway has no apiKeys, if so: once is enough.
    const warn = console.warn;
    console.warn = () => {};
    let gateway;
    try {
      gateway = build(createGateway, config, where, { healthStore: redis ?? side.store });
    } finally {
      console.warn = warn;
    }
    side.attach(gateway);
    const running = await listen(gateway, flags, cluster.worker.id);
    const stop = stopOnSignals(running, name, false);
    side.onStop(stop.drain, stop.now);
    side.listening(running.url);
  } catch (e) {
    if (!(e instanceof Refusal)) throw e;
    side.refused(e.message);
    process.exit(e.code);
  }
}

/** `gateway` served on --host and --port; a Refusal that says why not. */
async function listen(gateway, flags, worker) {
  try {
    return await serve(gateway, { host: flags.host, port: flags.port, onExchange: accessLog(flags.log, worker) });
  } catch (e) {
    const at = `${flags.host}:${flags.port}`;
    const why = {
      EADDRINUSE: `the port is in use; choose another with --port, or --port 0 for any free port`,
      EADDRNOTAVAIL: `${flags.host} is not an address of this machine; try --host 127.0.0.1 or --host 0.0.0.0`,
      ENOTFOUND: `the host name ${flags.host} does not resolve; try --host 127.0.0.1 or --host 0.0.0.0`,
      EACCES: `permission denied (a port below 1024 needs privileges); try --port 8787`,
    }[e?.code] ?? messageOf(e);
    throw new Refusal(`cannot listen on ${at}: ${why}`);
  }
}

/**
 * Drains `running` at the first SIGTERM or SIGINT (stops accepting, exits 0 once the requests in
 * flight are done) and cuts them at a second. `npm`: also when npm, the parent, exits. Returns
 * `{ drain(why), now(signal) }`, for a primary's orders to a worker.
 */
function stopOnSignals(running, name, npm) {
  let stopping = false;
  const drain = (why, again = "") => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`${name}: ${why}: no longer accepting connections; finishing ${running.inFlight} request(s) in flight${again}\n`);
    running.close().then(() => process.exit(0));
  };
  const now = (signal) => {
    process.stderr.write(`${name}: ${signal} again: exiting now, ${running.inFlight} request(s) cut off\n`);
    running.closeNow();
    process.exit(128 + constants.signals[signal]);
  };
  onSignals((signal) => drain(signal, ` (send ${signal} again to exit now)`), now);
  if (npm) watchNpm((why) => drain(why));
  return { drain: (why) => drain(why), now };
}

main(process.argv.slice(2)).catch((e) => {
  if (!(e instanceof Refusal)) throw e;
  process.stderr.write(`${NAME}: ${e.message}\n`);
  process.exit(e.code);
});
