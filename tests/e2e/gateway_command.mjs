// The llm-baton-gateway command as the tests of its operation run it (gateway_metrics.test.mjs,
// gateway_workers.test.mjs): started as a process, scraped, its /metrics read by a Prometheus
// text-format parser we did not write (parse-prometheus-text-format).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import parsePrometheus from "parse-prometheus-text-format";

export const BIN = fileURLToPath(new URL("../../pkg/bin/llm-baton-gateway.js", import.meta.url));

/** This process's environment without the variables the command reads, and `env` added. */
export function cleanEnv(env) {
  const clean = { ...process.env };
  for (const name of ["BATON_CONFIG", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GATEWAY_API_KEYS", "DEADLINE_MS", "GATEWAY_METRICS_KEY", "GATEWAY_WORKERS", "GATEWAY_REDIS_URL"]) delete clean[name];
  return { ...clean, ...env };
}

/**
 * The command started in `dir` with `args` and `env` added; resolves once it printed GATEWAY_URL
 * (within `timeoutMs`) to `{ url, child, exited, stdout(), stderr() }`, where `exited` resolves to
 * `{ code, signal, stderr, at }` (`at`: performance.now()).
 */
export function start(dir, args, env = {}, { timeoutMs = 15_000 } = {}) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: dir, env: cleanEnv(env), stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (c) => (stderr += c));
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal, stderr, at: performance.now() })));
  process.once("exit", () => child.kill("SIGKILL"));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no GATEWAY_URL line within ${timeoutMs / 1000} s: ${stdout} ${stderr}`)), timeoutMs);
    exited.then((e) => reject(new Error(`exited early (${e.code ?? e.signal}): ${e.stderr}`)));
    child.stdout.setEncoding("utf8").on("data", (c) => {
      stdout += c;
      const m = /^GATEWAY_URL=(http:\/\/\S+)\n/m.exec(stdout);
      if (!m) return;
      clearTimeout(timer);
      resolve({ url: m[1], child, exited, stdout: () => stdout, stderr: () => stderr });
    });
  });
}

/** `GET /metrics` with `key` as the Bearer token (null: no Authorization): `{ status, text, headers }`. */
export async function scrape(url, key) {
  const res = await fetch(`${url}/metrics`, { headers: key === null ? {} : { authorization: `Bearer ${key}` } });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

/**
 * The exposition parsed, checked against the text format's conventions, as name -> { type,
 * samples: [{ labels, value }] } (a histogram's sample: { labels, buckets: [[le, n]], sum, count }).
 * The parser reads the families, their types and help; it keeps a histogram's series apart only
 * when it has no labels (it merges labelled ones into one), so the series of `_bucket`, `_sum` and
 * `_count` are read as the untyped samples it parses without the HELP and TYPE lines.
 */
export function parseMetrics(text) {
  const lines = new Map();
  // A name's lines come in runs (a histogram's _bucket, _sum, _count, then the next series').
  for (const family of parsePrometheus(text.replace(/^#.*\n/gm, ""))) {
    if (!lines.has(family.name)) lines.set(family.name, []);
    lines.get(family.name).push(...family.metrics.map((m) => ({ labels: m.labels ?? {}, value: Number(m.value) })));
  }
  const families = new Map();
  for (const { name, type, help } of parsePrometheus(text)) {
    assert.match(name, /^llm_baton_[a-z_]+$/, "a metric name in snake case under llm_baton_");
    assert.ok(help.length > 0, `${name} has a HELP line`);
    if (type === "COUNTER") assert.match(name, /_total$/, `a counter's name ends in _total: ${name}`);
    if (type === "HISTOGRAM") assert.match(name, /_seconds$/, `a histogram of times is in seconds: ${name}`);
    if (type !== "COUNTER") assert.doesNotMatch(name, /_total$/, `only counters end in _total: ${name}`);
    assert.ok(["COUNTER", "GAUGE", "HISTOGRAM"].includes(type), `${name}: ${type}`);
    if (type !== "HISTOGRAM") {
      const samples = lines.get(name) ?? [];
      for (const { labels, value } of samples) {
        for (const label of Object.keys(labels)) assert.match(label, /^[a-z][a-z_]*$/, `a label name: ${label}`);
        if (type === "COUNTER") assert.ok(Number.isInteger(value) && value >= 0, `${name}: a count, ${value}`);
      }
      families.set(name, { type, samples });
      continue;
    }
    const series = new Map();
    const seriesOf = (labels) => {
      const key = JSON.stringify(Object.entries(labels).filter(([k]) => k !== "le").sort());
      if (!series.has(key)) series.set(key, { labels: Object.fromEntries(JSON.parse(key)), buckets: [], sum: NaN, count: NaN });
      return series.get(key);
    };
    for (const { labels, value } of lines.get(`${name}_bucket`) ?? []) {
      assert.ok(labels.le !== undefined, `${name}_bucket has an le label`);
      seriesOf(labels).buckets.push([labels.le === "+Inf" ? Infinity : Number(labels.le), value]);
    }
    for (const { labels, value } of lines.get(`${name}_sum`) ?? []) seriesOf(labels).sum = value;
    for (const { labels, value } of lines.get(`${name}_count`) ?? []) seriesOf(labels).count = value;
    for (const s of series.values()) {
      const { buckets } = s;
      assert.equal(buckets.at(-1)?.[0], Infinity, `${name} has a +Inf bucket, last`);
      for (let i = 1; i < buckets.length; i += 1) {
        assert.ok(buckets[i][0] > buckets[i - 1][0], `${name}'s bounds rise`);
        assert.ok(buckets[i][1] >= buckets[i - 1][1], `${name}'s buckets are cumulative: ${JSON.stringify(buckets)}`);
      }
      assert.equal(buckets.at(-1)[1], s.count, `${name}: the +Inf bucket is the count`);
      assert.ok(s.sum >= 0, `${name} has a sum`);
    }
    families.set(name, { type, samples: [...series.values()] });
  }
  return families;
}

/** The value of the sample of `family` whose labels are `labels` (every one given must match); 0 when none. */
export function valueOf(families, family, labels = {}) {
  const found = families.get(family)?.samples.filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v)) ?? [];
  return found.reduce((sum, s) => sum + (s.value ?? s.count), 0);
}

