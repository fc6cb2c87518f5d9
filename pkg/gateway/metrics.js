// The gateway's `/metrics`, in the Prometheus text format: what a self-hosted gateway is watched
// by. Nothing here is measured twice: the counts come from what the wasm already tells a traced
// request (pkg/gateway.js hands each request's events and its end to a RequestMeter), and the
// breakers' state from the wasm's own (or, under `--workers`, the shared store's) snapshot. Only
// gateway.js loads this file (at the first request), and only for a gateway whose config has
// `gateway.metrics`; it checks the scraper's key itself.
//
// One process counts its own requests; `snapshot()` is that count as plain JSON, which
// `mergeSnapshots` adds up across the workers of one gateway (pkg/gateway/cluster.js) before
// `render` writes the text. Every label's values are bounded by the config (routes, targets,
// formats, outcomes) or by HTTP (status codes): a client cannot grow the series with the names
// it sends.

/** The text format's content type (version 0.0.4, what every Prometheus scrapes). */
export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** Seconds: from a quick refusal to a long generation. */
const DURATION_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Seconds from a call's start to the first content its client saw. */
const FIRST_TOKEN_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30];

/** A plan's format (src/format/client) as the config names the dialect. */
const CLIENT_FORMATS = { openai: "openai_chat", anthropic: "anthropic_messages", responses: "openai_responses" };

/** name -> [type, help, label names]; `_seconds` histograms, `_total` counters. */
const FAMILIES = {
  llm_baton_requests_total: ["counter", "Requests the gateway answered, by route (the model a client named, \"\" for none or an unknown one), client format and HTTP status.", ["route", "format", "status"]],
  llm_baton_request_duration_seconds: ["histogram", "Time from a request's arrival to the end of its answer (a stream's last byte).", ["route", "format"]],
  llm_baton_time_to_first_token_seconds: ["histogram", "Time from a streamed call's start to the first content its client saw, by the target that gave it.", ["route", "target"]],
  llm_baton_attempts_total: ["counter", "Attempts sent upstream, by target and how they ended.", ["target", "outcome"]],
  llm_baton_retries_total: ["counter", "Retries of a target after a failed attempt.", ["target"]],
  llm_baton_failovers_total: ["counter", "Calls handed from one target to the next.", ["from", "to"]],
  llm_baton_hedges_total: ["counter", "Hedged attempts started beside a slow one.", ["from", "to"]],
  llm_baton_resumes_total: ["counter", "Broken streams resumed on another attempt, by mode (continue or restart).", ["from", "to", "mode"]],
  llm_baton_skips_total: ["counter", "Targets a call skipped, by reason: breaker_open, or slow (its recent first tokens passed its hedge threshold).", ["target", "reason"]],
  llm_baton_tokens_total: ["counter", "Tokens the providers reported, by target and type (input or output), failed attempts included.", ["target", "type"]],
};

/** One process's counts, and the request meters that feed them. */
export class GatewayMetrics {
  #routes;
  #targets;
  /** family name -> Map(label key -> number, or a histogram's { buckets, sum, count }) */
  #series = new Map();
  #inFlight = 0;

  /** `config`: the config as the wasm validated it, for the routes and targets labels may name. */
  constructor(config) {
    this.#targets = Object.keys(config.targets ?? {});
    this.#routes = new Set([...Object.keys(config.routes ?? {}), ...this.#targets]);
    for (const name of Object.keys(FAMILIES)) this.#series.set(name, new Map());
  }

  /** The configured targets, every one of which has a breaker state in the output. */
  get targets() {
    return this.#targets;
  }

  /**
   * A request the wasm answered at once (a refusal, a GET, a preflight): counted with no route
   * and no format. `started`: performance.now() at its arrival.
   */
  answered(status, started) {
    this.#finish("", "", status, started);
  }

  /**
   * A request that reads a body and runs a call: its meter. `format` is the client's (the
   * plan's); `body` what gateway.js read (`{bytes}` or `{error}`), whose `model` names the route.
   */
  request(format, body, started) {
    this.#inFlight += 1;
    return new RequestMeter(this, CLIENT_FORMATS[format] ?? format, this.#routeOf(body), started);
  }

  #routeOf(body) {
    if (!body.bytes) return "";
    try {
      const model = JSON.parse(new TextDecoder().decode(body.bytes))?.model;
      return typeof model === "string" && this.#routes.has(model) ? model : "";
    } catch {
      return "";
    }
  }

  /** RequestMeter: the request ended with `status`. */
  ended(route, format, status, started) {
    this.#inFlight -= 1;
    this.#finish(route, format, status, started);
  }

  #finish(route, format, status, started) {
    this.add("llm_baton_requests_total", [route, format, String(status)], 1);
    this.observe("llm_baton_request_duration_seconds", [route, format], (performance.now() - started) / 1000);
  }

  add(family, labels, n) {
    const series = this.#series.get(family);
    const key = labels.join("\0");
    series.set(key, (series.get(key) ?? 0) + n);
  }

  observe(family, labels, seconds) {
    const series = this.#series.get(family);
    const key = labels.join("\0");
    let h = series.get(key);
    if (h === undefined) {
      h = { buckets: new Array(bucketsOf(family).length).fill(0), sum: 0, count: 0 };
      series.set(key, h);
    }
    // Counted in the first bucket that holds it; `render` makes them cumulative.
    const bounds = bucketsOf(family);
    let i = 0;
    while (i < bounds.length && seconds > bounds[i]) i += 1;
    if (i < bounds.length) h.buckets[i] += 1;
    h.sum += seconds;
    h.count += 1;
  }

  /** This process's counts as plain JSON (what crosses IPC), for mergeSnapshots and render. */
  snapshot() {
    const families = {};
    for (const [name, series] of this.#series) {
      families[name] = [...series].map(([key, value]) => [key, typeof value === "number" ? value : { buckets: [...value.buckets], sum: value.sum, count: value.count }]);
    }
    return { families, inFlight: this.#inFlight, processes: 1 };
  }
}

/** What one request's call told, counted as it is told. */
class RequestMeter {
  #metrics;
  #format;
  #route;
  #started;
  #ended = false;

  constructor(metrics, format, route, started) {
    this.#metrics = metrics;
    this.#format = format;
    this.#route = route;
    this.#started = started;
  }

  /** A `{type: "event"}` output's event. */
  event(event) {
    const m = this.#metrics;
    switch (event.type) {
      case "leg": {
        const { target, outcome, usage } = event.leg;
        m.add("llm_baton_attempts_total", [target, outcome], 1);
        if (usage?.inputTokens !== undefined) m.add("llm_baton_tokens_total", [target, "input"], usage.inputTokens);
        if (usage?.outputTokens !== undefined) m.add("llm_baton_tokens_total", [target, "output"], usage.outputTokens);
        break;
      }
      case "retry":
        m.add("llm_baton_retries_total", [event.target], 1);
        break;
      case "failover":
        m.add("llm_baton_failovers_total", [event.from, event.to], 1);
        break;
      case "hedge":
        m.add("llm_baton_hedges_total", [event.from, event.to], 1);
        break;
      case "resume":
        m.add("llm_baton_resumes_total", [event.from, event.to, event.mode], 1);
        break;
      case "skip":
        // The event's reason is a sentence with numbers in it: one label value per kind instead.
        m.add("llm_baton_skips_total", [event.target, event.reopensInMs !== undefined ? "breaker_open" : "slow"], 1);
        break;
      default:
        break;
    }
  }

  /** The call answered: `summary` is its Completion, whose legs give the first token's time. */
  done(summary) {
    const first = summary.legs.find((leg) => leg.ttftMs !== undefined);
    if (first) this.#metrics.observe("llm_baton_time_to_first_token_seconds", [this.#route, summary.target], (first.startMs + first.ttftMs) / 1000);
  }

  /** The response ended (its last byte written, or the call trapped) with `status`; counted once. */
  end(status) {
    if (this.#ended) return;
    this.#ended = true;
    this.#metrics.ended(this.#route, this.#format, status, this.#started);
  }
}

function bucketsOf(family) {
  return family === "llm_baton_time_to_first_token_seconds" ? FIRST_TOKEN_BUCKETS : DURATION_BUCKETS;
}

/** The counts of several processes (snapshots) as one. */
export function mergeSnapshots(snapshots) {
  const merged = new Map();
  let inFlight = 0;
  let processes = 0;
  for (const snapshot of snapshots) {
    inFlight += snapshot.inFlight;
    processes += snapshot.processes;
    for (const [name, entries] of Object.entries(snapshot.families)) {
      let series = merged.get(name);
      if (!series) merged.set(name, (series = new Map()));
      for (const [key, value] of entries) {
        const had = series.get(key);
        if (typeof value === "number") series.set(key, (had ?? 0) + value);
        else if (had === undefined) series.set(key, { buckets: [...value.buckets], sum: value.sum, count: value.count });
        else {
          value.buckets.forEach((n, i) => (had.buckets[i] += n));
          had.sum += value.sum;
          had.count += value.count;
        }
      }
    }
  }
  return { families: Object.fromEntries([...merged].map(([name, series]) => [name, [...series]])), inFlight, processes };
}

/**
 * The exposition: the counts of `snapshot`, then the gauges: each of `targets`' breaker state
 * from `health` (a HealthSnapshot; a target it has not heard of is closed), the retry budget's
 * balance, the requests in flight and the processes counted.
 */
export function render(snapshot, health, targets) {
  const out = [];
  for (const [name, [type, help, labelNames]] of Object.entries(FAMILIES)) {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    const entries = [...(snapshot.families[name] ?? [])].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [key, value] of entries) {
      const labels = labelText(labelNames, key.split("\0"));
      if (type === "counter") {
        out.push(`${name}{${labels}} ${value}`);
        continue;
      }
      let cumulative = 0;
      bucketsOf(name).forEach((bound, i) => {
        cumulative += value.buckets[i];
        out.push(`${name}_bucket{${labels},le="${bound}"} ${cumulative}`);
      });
      out.push(`${name}_bucket{${labels},le="+Inf"} ${value.count}`, `${name}_sum{${labels}} ${value.sum}`, `${name}_count{${labels}} ${value.count}`);
    }
  }
  out.push(
    "# HELP llm_baton_breaker_state Each target's breaker: 1 for the state it is in (closed, open or half_open), 0 for the others.",
    "# TYPE llm_baton_breaker_state gauge",
  );
  const states = new Map((health?.targets ?? []).map((t) => [t.target, t.state]));
  for (const target of targets) {
    const state = states.get(target) ?? "closed";
    for (const s of ["closed", "open", "half_open"]) out.push(`llm_baton_breaker_state{${labelText(["target", "state"], [target, s])}} ${s === state ? 1 : 0}`);
  }
  if (health?.retryBudget) {
    out.push(
      "# HELP llm_baton_retry_budget_balance Retries the shared retry budget still allows now.",
      "# TYPE llm_baton_retry_budget_balance gauge",
      `llm_baton_retry_budget_balance ${health.retryBudget.balance}`,
    );
  }
  out.push(
    "# HELP llm_baton_requests_in_flight Requests whose answer has not ended yet.",
    "# TYPE llm_baton_requests_in_flight gauge",
    `llm_baton_requests_in_flight ${snapshot.inFlight}`,
    "# HELP llm_baton_processes Gateway processes (workers) whose counts these are.",
    "# TYPE llm_baton_processes gauge",
    `llm_baton_processes ${snapshot.processes}`,
  );
  return `${out.join("\n")}\n`;
}

function labelText(names, values) {
  return names.map((name, i) => `${name}="${escapeLabel(values[i])}"`).join(",");
}

/** A label value as the text format quotes it: backslash, double quote and newline escaped. */
function escapeLabel(value) {
  return String(value).replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}
