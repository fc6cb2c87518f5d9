// OpenTelemetry traces (issue 15) in Node and in workerd, with the real SDK.
//
// Node runs the shared scenarios (telemetry_scenarios.mjs) with @opentelemetry/sdk-trace-base's
// in-memory exporter, then what only Node can host here: an OTLP/HTTP JSON export to a collector
// stub on loopback (the JSON a backend receives), a trace that runs from a Baton through a
// gateway served over HTTP to the provider, and the metrics. workerd runs the same scenarios in a
// Worker, with the SDK bundled by esbuild (workerd has no package resolution).
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Readable } from "node:stream";
import { Baton, BatonError } from "llm-baton";
import { createGateway } from "llm-baton/gateway";
import { trace, context, ROOT_CONTEXT } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { remoteParent } from "../../pkg/telemetry.js";
import { startProvider } from "./provider.mjs";
import { launchChromium, openPage, startStaticServer } from "./chromium_page.mjs";
import { BROWSER_CONDITIONS, resolveEntry, WORKERD_CONDITIONS, WORKERD_MODULE_RULES } from "./resolve.mjs";
import { script, upstream } from "./scenarios.mjs";
import { CLIENT_KEY, SECRET, shipOtlp, target, telemetryScenarios, tracing } from "./telemetry_scenarios.mjs";

const otel = { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, OTLPTraceExporter, trace, context };
const repo = fileURLToPath(new URL("../../", import.meta.url));

const dir = `${repo}tests/e2e/artifacts/telemetry`;

let provider;
before(async () => {
  provider = await startProvider();
  mkdirSync(dir, { recursive: true });
  // The SDK as one ES module for workerd and Chromium, which resolve no packages; its "browser"
  // build uses no Node API (the OTLP exporter sends with fetch).
  await build({
    stdin: {
      contents: `export { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
export { trace, context } from "@opentelemetry/api";
export { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";`,
      resolveDir: repo,
    },
    bundle: true,
    format: "esm",
    platform: "browser",
    outfile: `${dir}/otel.mjs`,
    logLevel: "error",
  });
});
after(() => provider?.stop());

const env = () => ({ Baton, BatonError, createGateway, providerUrl: provider.url, runtime: "node", otel });

describe("telemetry in node", () => {
  for (const [name, run] of Object.entries(telemetryScenarios)) test(name, () => run(env()));

  test("an OTLP/HTTP JSON export carries the call's spans, parents and no secret", async () => {
    const collector = await collectorStub();
    try {
      await shipOtlp(env(), `${collector.url}/v1/traces`);
      checkOtlp(collector.received());
    } finally {
      await collector.stop();
    }
  });

  test("a trace runs from a Baton through a gateway served over HTTP to the provider", async () => {
    const p = await script(env(), "chain", [{ text: "Hello through the gateway" }]);
    const gatewayTracing = tracing(env());
    const gateway = createGateway(
      { targets: { upstream: target(env(), p, { model: "model-u" }) }, gateway: { apiKeys: [CLIENT_KEY] }, health: false },
      { telemetry: { tracer: gatewayTracing.tracer } },
    );
    const server = await serve(gateway);
    try {
      const clientTracing = tracing(env());
      const baton = new Baton(
        { targets: { gw: { format: "openai_chat", baseUrl: `${server.url}/v1`, model: "upstream", apiKey: CLIENT_KEY } }, health: false },
        { telemetry: { tracer: clientTracing.tracer } },
      );
      const items = [];
      for await (const item of baton.stream("gw", { messages: [{ role: "user", content: "Hi" }] })) items.push(item);
      assert.equal(items.at(-1).text, "Hello through the gateway");
      await new Promise((resolve) => setTimeout(resolve, 0));
      const client = clientTracing.exporter.getFinishedSpans();
      const served = gatewayTracing.exporter.getFinishedSpans();
      const clientAttempt = client.find((s) => s.name === "chat upstream");
      const gatewayCall = served.find((s) => s.name === "chat upstream" && s.kind === 1);
      const gatewayAttempt = served.find((s) => s.name === "chat model-u");
      assert.ok(clientAttempt && gatewayCall && gatewayAttempt, "every span exists");
      assert.equal(gatewayCall.spanContext().traceId, clientAttempt.spanContext().traceId, "one trace");
      assert.equal(gatewayCall.parentSpanContext.spanId, clientAttempt.spanContext().spanId, "the gateway's span continues the client's attempt");
      const log = await upstream(env(), p);
      const c = gatewayAttempt.spanContext();
      assert.equal(log.log[0].headers.traceparent, `00-${c.traceId}-${c.spanId}-01`, "the provider sees the gateway's attempt");
    } finally {
      await server.stop();
    }
  });

  test("metrics: duration, tokens, time to first chunk and attempts, by target and outcome", async () => {
    const reader = new (class extends MetricReader {
      async onForceFlush() {}
      async onShutdown() {}
    })();
    const meterProvider = new MeterProvider({ readers: [reader] });
    const p = await script(env(), "metrics-p", [{ status: 503 }]);
    const b = await script(env(), "metrics-b", [{ text: "one two", usage: { inputTokens: 5 } }]);
    const baton = new Baton(
      { targets: { primary: target(env(), p, { model: "model-p" }), backup: target(env(), b, { model: "model-b" }) }, routes: { main: { fallback: ["primary", "backup"] } }, health: false },
      { telemetry: { tracer: tracing(env()).tracer, meter: meterProvider.getMeter("llm-baton-test") } },
    );
    for await (const item of baton.stream("main", { messages: [{ role: "user", content: "Hi" }] })) void item;
    const { resourceMetrics } = await reader.collect();
    const metrics = Object.fromEntries(resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).map((m) => [m.descriptor.name, m]));
    const points = (name) => metrics[name]?.dataPoints ?? [];
    assert.equal(points("gen_ai.client.operation.duration").length, 1);
    assert.equal(points("gen_ai.client.operation.duration")[0].attributes["baton.target"], "backup");
    assert.equal(metrics["gen_ai.client.operation.duration"].descriptor.unit, "s");
    assert.deepEqual(points("gen_ai.client.token.usage").map((d) => [d.attributes["gen_ai.token.type"], d.value.sum]).sort(), [["input", 5], ["output", 2]]);
    assert.equal(points("gen_ai.client.operation.time_to_first_chunk").length, 1);
    assert.equal(points("baton.client.attempts")[0].value.sum, 2);
    assert.deepEqual(points("baton.client.attempt.duration").map((d) => [d.attributes["baton.target"], d.attributes["baton.outcome"]]).sort(), [["backup", "ok"], ["primary", "http"]]);
  });

  test("a bad telemetry option is a config error naming it", async () => {
    const config = { targets: { p: { format: "openai_chat", baseUrl: "http://127.0.0.1:9/v1", model: "m" } } };
    const cases = [
      [{ telemetry: {} }, "options.telemetry.tracer"],
      [{ telemetry: { tracer: {} } }, "options.telemetry.tracer"],
      [{ telemetry: { tracer: trace.getTracer("t"), meter: {} } }, "options.telemetry.meter"],
      [{ telemetry: { tracer: trace.getTracer("t"), recordContent: "yes" } }, "options.telemetry.recordContent"],
      [{ telemetry: { tracer: trace.getTracer("t"), sampler: 1 } }, "options.telemetry.sampler"],
      [{ telemetry: "on" }, "options.telemetry"],
    ];
    for (const [options, path] of cases) {
      for (const make of [() => new Baton(config, options), () => createGateway(config, options)]) {
        assert.throws(make, (e) => e instanceof BatonError && e.kind === "config" && e.path === path, `${JSON.stringify(options)} names ${path}`);
      }
    }
    const baton = new Baton(config, { telemetry: { tracer: trace.getTracer("t") } });
    await assert.rejects(baton.stream("p", { messages: [] }, { context: {} }).next(), (e) => e.path === "options.context");
  });

  test("an attempt's traceparent replaces one configured in the target's headers", async () => {
    const p = await script(env(), "configured", [{ text: "fine" }]);
    const configured = "00-11111111111111111111111111111111-2222222222222222-01";
    const t = tracing(env());
    const baton = new Baton(
      { targets: { primary: { ...target(env(), p, { model: "m" }), headers: { TraceParent: configured } } }, health: false },
      { telemetry: { tracer: t.tracer } },
    );
    await baton.complete("primary", { messages: [{ role: "user", content: "Hi" }] });
    await new Promise((resolve) => setTimeout(resolve, 0));
    const attempt = t.exporter.getFinishedSpans().find((s) => s.name === "chat m");
    const { traceId, spanId } = attempt.spanContext();
    assert.equal((await upstream(env(), p)).log[0].headers.traceparent, `00-${traceId}-${spanId}-01`);
  });

  test("a client's traceparent is its parent only when it follows the W3C grammar", () => {
    const id = "4bf92f3577b34da6a3ce929d0e0e4736";
    const span = "00f067aa0ba902b7";
    const cases = [
      [`00-${id}-${span}-01`, undefined, { traceId: id, spanId: span, traceFlags: 1, isRemote: true, traceState: undefined }],
      [`  00-${id}-${span}-00 `, undefined, { traceId: id, spanId: span, traceFlags: 0, isRemote: true, traceState: undefined }],
      [`00-${id}-${span}-01`, "a=1,b@c=2", { traceId: id, spanId: span, traceFlags: 1, isRemote: true, traceState: "a=1,b@c=2" }],
      [`00-${id}-${span}-01`, "A=1", { traceId: id, spanId: span, traceFlags: 1, isRemote: true, traceState: undefined }],
      // A later version may append fields; version 00 may not.
      [`01-${id}-${span}-01-more`, undefined, { traceId: id, spanId: span, traceFlags: 1, isRemote: true, traceState: undefined }],
      [`00-${id}-${span}-01-more`, undefined, null],
      [`ff-${id}-${span}-01`, undefined, null],
      [`00-${id.toUpperCase()}-${span}-01`, undefined, null],
      [`00-${"0".repeat(32)}-${span}-01`, undefined, null],
      [`00-${id}-${"0".repeat(16)}-01`, undefined, null],
      ["garbage", undefined, null],
      [undefined, "a=1", null],
    ];
    for (const [traceparent, tracestate, expected] of cases) {
      const parent = remoteParent(traceparent, tracestate);
      const got = parent === undefined ? null : trace.getSpan(parent).spanContext();
      assert.deepEqual(got && { ...got, traceState: got.traceState?.serialize() }, expected, `${traceparent} ${tracestate}`);
    }
  });

  test("a call cancelled while it waits for a health store ends its span, and no attempt began", async () => {
    const t = tracing(env());
    const store = { admit: () => new Promise(() => {}), report() {} };
    const baton = new Baton(
      { targets: { primary: { format: "openai_chat", baseUrl: "http://127.0.0.1:9/v1", model: "m" } } },
      { healthStore: store, healthWaitMs: 5000, telemetry: { tracer: t.tracer } },
    );
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 20);
    await assert.rejects(baton.complete("primary", { messages: [{ role: "user", content: "Hi" }] }, { signal: abort.signal }), (e) => e.kind === "cancelled");
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.deepEqual(t.started.map((s) => [s.name, s.ends]), [["chat primary", 1]]);
    assert.equal(t.exporter.getFinishedSpans()[0].attributes["error.type"], "cancelled");
  });

  test("a Baton's first traced call, which waits for telemetry.js to load, starts its span under the context active at the call", async () => {
    // A context manager that holds a context only while `with` runs, as a browser's
    // StackContextManager does: the span must not start under whatever is active after the load.
    let active = ROOT_CONTEXT;
    const manager = {
      active: () => active,
      with(ctx, fn, thisArg, ...args) {
        const before = active;
        active = ctx;
        try {
          return fn.call(thisArg, ...args);
        } finally {
          active = before;
        }
      },
      bind: (_ctx, target) => target,
      enable: () => manager,
      disable: () => manager,
    };
    assert.ok(context.setGlobalContextManager(manager), "the test's context manager is the global one");
    try {
      const p = await script(env(), "active", [{ text: "fine" }]);
      const t = tracing(env());
      const baton = new Baton({ targets: { primary: target(env(), p, { model: "m" }) }, health: false }, { telemetry: { tracer: t.tracer } });
      const parent = t.real.startSpan("caller");
      await context.with(trace.setSpan(ROOT_CONTEXT, parent), () => baton.complete("primary", { messages: [{ role: "user", content: "Hi" }] }));
      parent.end();
      await new Promise((resolve) => setTimeout(resolve, 0));
      const call = t.exporter.getFinishedSpans().find((s) => s.name === "chat primary");
      assert.equal(call?.parentSpanContext?.spanId, parent.spanContext().spanId, "the call span's parent is the caller's span");
    } finally {
      context.disable();
    }
  });

  test("the API's no-op tracer (no SDK registered) traces nothing and sends no traceparent", async () => {
    const p = await script(env(), "noop", [{ text: "fine" }]);
    const baton = new Baton({ targets: { primary: target(env(), p, { model: "m" }) }, health: false }, { telemetry: { tracer: trace.getTracer("nothing-registered") } });
    assert.equal((await baton.complete("primary", { messages: [{ role: "user", content: "Hi" }] })).text, "fine");
    assert.equal((await upstream(env(), p)).log[0].headers.traceparent, undefined);
  });
});

describe("telemetry in workerd", () => {
  let mf;
  before(async () => {
    writeFileSync(
      `${dir}/worker.mjs`,
      `// Generated by tests/e2e/telemetry.test.mjs.
import { Baton, BatonError } from "../../../../pkg/${resolveEntry(WORKERD_CONDITIONS).slice(2)}";
import { createGateway } from "../../../../pkg/${resolveEntry(WORKERD_CONDITIONS, "./gateway").slice(2)}";
import * as otel from "./otel.mjs";
import { shipOtlp, telemetryScenarios } from "../../telemetry_scenarios.mjs";

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const name = url.searchParams.get("scenario");
    const collector = url.searchParams.get("collector");
    const run = name === "otlp" ? (env) => shipOtlp(env, collector) : telemetryScenarios[name];
    if (!run) return Response.json({ ok: false, error: "no such scenario" }, { status: 404 });
    try {
      await run({ Baton, BatonError, createGateway, providerUrl: url.searchParams.get("provider"), runtime: "workerd", otel });
      return Response.json({ ok: true });
    } catch (e) {
      return Response.json({ ok: false, error: String((e && e.stack) || e) });
    }
  },
};
`,
    );
    mf = new Miniflare({ modules: true, modulesRoot: repo, scriptPath: `${dir}/worker.mjs`, modulesRules: WORKERD_MODULE_RULES, compatibilityDate: "2025-01-01" });
    await mf.ready;
  });
  after(async () => {
    await mf?.dispose();
  });

  const run = async (name, collector = "") => {
    const query = `scenario=${encodeURIComponent(name)}&provider=${encodeURIComponent(provider.url)}&collector=${encodeURIComponent(collector)}`;
    const out = await (await mf.dispatchFetch(`http://worker.test/?${query}`)).json();
    if (!out.ok) throw new Error(`in workerd: ${out.error}`);
  };
  for (const name of Object.keys(telemetryScenarios)) test(name, () => run(name));

  test("docs/traces.md's Worker ships a streamed call's spans after the body, through OTLP/HTTP JSON", async () => {
    // The code block of docs/traces.md, as written, with its imports pointed at this repo.
    const page = readFileSync(`${repo}docs/traces.md`, "utf8");
    const block = [...page.matchAll(/```js\n(import \{ env \} from "cloudflare:workers";[\s\S]*?)```/g)].map((m) => m[1]).find((b) => b.includes("telemetry:"));
    assert.ok(block?.includes("OTLPTraceExporter"), "docs/traces.md has the Worker's telemetry example");
    writeFileSync(
      `${dir}/readme-worker.mjs`,
      block
        .replace(`from "llm-baton"`, `from "../../../../pkg/${resolveEntry(WORKERD_CONDITIONS).slice(2)}"`)
        .replace(`from "llm-baton/gateway"`, `from "../../../../pkg/${resolveEntry(WORKERD_CONDITIONS, "./gateway").slice(2)}"`)
        .replaceAll(/from "@opentelemetry\/[a-z-]+"/g, `from "./otel.mjs"`)
        // The page's Worker reads its secrets with the package's configFromEnv.
        .replace(`from "llm-baton/gateway/env"`, `from "../../../../pkg/${resolveEntry(WORKERD_CONDITIONS, "./gateway/env").slice(2)}"`),
    );
    const p = await script(env(), "readme-p", [{ status: 503 }]);
    const b = await script(env(), "readme-b", [{ text: "Hello from the README", chunks: 3 }]);
    const config = {
      targets: { primary: target(env(), p, { model: "model-p" }), backup: target(env(), b, { format: "anthropic_messages", model: "model-b" }) },
      routes: { chat: { fallback: ["primary", "backup"] } },
      gateway: { apiKeys: [CLIENT_KEY] },
    };
    const collector = await collectorStub();
    const worker = new Miniflare({
      modules: true,
      modulesRoot: repo,
      scriptPath: `${dir}/readme-worker.mjs`,
      modulesRules: WORKERD_MODULE_RULES,
      compatibilityDate: "2025-06-01",
      compatibilityFlags: ["enable_request_signal"],
      bindings: { BATON_CONFIG: JSON.stringify(config), OTLP_TRACES_URL: `${collector.url}/v1/traces` },
    });
    try {
      const res = await worker.dispatchFetch("http://gateway.test/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${CLIENT_KEY}` },
        body: JSON.stringify({ model: "chat", stream: true, messages: [{ role: "user", content: "Hi" }] }),
      });
      assert.equal(res.status, 200);
      assert.match(await res.text(), /README/);
      const until = performance.now() + 5000;
      let spans = [];
      while (performance.now() < until) {
        spans = collector.received().flatMap((body) => JSON.parse(body).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((x) => x.spans)));
        if (spans.length >= 3) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.deepEqual(spans.map((x) => x.name).sort(), ["chat chat", "chat model-b", "chat model-p"]);
      assert.ok(!collector.received().join("").includes(SECRET) && !collector.received().join("").includes(CLIENT_KEY), "no key in the export");
    } finally {
      await worker.dispose();
      await collector.stop();
    }
  });

  test("an OTLP/HTTP JSON export from a Worker (the exporter's fetch transport) reaches the collector", async () => {
    const collector = await collectorStub();
    try {
      await run("otlp", `${collector.url}/v1/traces`);
      checkOtlp(collector.received());
    } finally {
      await collector.stop();
    }
  });
});

describe("telemetry in chromium", () => {
  let server;
  let browser;
  let page;
  const pageLog = [];
  before(async () => {
    const page_ = `<!doctype html>
<meta charset="utf-8">
<script type="importmap">${JSON.stringify({ imports: { "llm-baton": `/pkg/${resolveEntry(BROWSER_CONDITIONS).slice(2)}`, "llm-baton/gateway": `/pkg/${resolveEntry(BROWSER_CONDITIONS, "./gateway").slice(2)}` } })}</script>
<script type="module">
  import { Baton, BatonError } from "llm-baton";
  import { createGateway } from "llm-baton/gateway";
  import * as otel from "/tests/e2e/artifacts/telemetry/otel.mjs";
  import { shipOtlp, telemetryScenarios } from "/tests/e2e/telemetry_scenarios.mjs";
  window.runScenario = async (name, providerUrl, collector) => {
    const env = { Baton, BatonError, createGateway, providerUrl, runtime: "browser", otel };
    try {
      await (name === "otlp" ? shipOtlp(env, collector) : telemetryScenarios[name](env));
      return { ok: true };
    } catch (e) {
      return { ok: false, error: String((e && e.stack) || e) };
    }
  };
  window.batonReady = true;
</script>`;
    server = await startStaticServer(page_, ["pkg/", "tests/e2e/telemetry_scenarios.mjs", "tests/e2e/scenarios.mjs", "tests/e2e/agents.mjs", "tests/e2e/artifacts/telemetry/"]);
    browser = await launchChromium();
    page = await openPage(browser, `http://127.0.0.1:${server.address().port}/`, "batonReady", pageLog, "the telemetry scenarios");
  });
  after(async () => {
    await browser?.close();
    server?.close();
  });

  const run = async (name, collector = "") => {
    const out = await page.evaluate(([n, url, c]) => window.runScenario(n, url, c), [name, provider.url, collector]);
    if (!out.ok) throw new Error(`in Chromium: ${out.error}\n${pageLog.join("\n")}`);
  };
  for (const name of Object.keys(telemetryScenarios)) test(name, () => run(name));

  test("an OTLP/HTTP JSON export from a page reaches the collector", async () => {
    const collector = await collectorStub();
    try {
      await run("otlp", `${collector.url}/v1/traces`);
      checkOtlp(collector.received());
    } finally {
      await collector.stop();
    }
  });
});

/** What a collector received of the retried-then-failed-over stream (shipOtlp), as OTLP/HTTP JSON. */
function checkOtlp(bodies) {
  assert.ok(bodies.length >= 1, "the collector received an export");
  assert.ok(!bodies.join("\n").includes(SECRET), "the OTLP JSON holds no provider key");
  const exported = bodies.flatMap((b) => JSON.parse(b).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
  const call = exported.find((s) => s.name === "chat main");
  assert.ok(call, "the call span was exported");
  const attempts = exported.filter((s) => s.parentSpanId === call.spanId).sort((a, b) => Number(BigInt(a.startTimeUnixNano) - BigInt(b.startTimeUnixNano)));
  assert.deepEqual(attempts.map((s) => s.name), ["chat model-p", "chat model-p", "chat model-b"]);
  assert.deepEqual(attempts.map((s) => s.status?.code ?? 0), [2, 2, 0]);
  for (const s of [call, ...attempts]) {
    assert.equal(s.traceId, call.traceId);
    assert.ok(BigInt(s.endTimeUnixNano) >= BigInt(s.startTimeUnixNano), `${s.name} ended`);
  }
  assert.deepEqual(call.events.map((e) => e.name), ["baton.retry", "baton.failover"]);
  const attribute = (span, key) => span.attributes.find((a) => a.key === key)?.value;
  assert.deepEqual(attribute(call, "gen_ai.provider.name"), { stringValue: "anthropic" });
  assert.deepEqual(attribute(call, "baton.contributors"), { arrayValue: { values: [{ stringValue: "backup" }] } });
  assert.deepEqual(attribute(attempts[0], "http.response.status_code"), { intValue: 503 });
}

/**
 * A collector on loopback that records every POSTed body (OTLP/HTTP JSON) and answers 200; it
 * answers CORS preflights, as a collector a page exports to must.
 */
function collectorStub() {
  const bodies = [];
  const server = createServer((req, res) => {
    const cors = { "access-control-allow-origin": "*", "access-control-allow-headers": "*", "access-control-allow-methods": "POST" };
    if (req.method === "OPTIONS") {
      res.writeHead(204, cors).end();
      return;
    }
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      bodies.push(Buffer.concat(chunks).toString("utf8"));
      res.writeHead(200, { "content-type": "application/json", ...cors });
      res.end("{}");
    });
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        received: () => [...bodies],
        // A browser keeps its connection open: close it, or close() waits for it.
        stop: () =>
          new Promise((done) => {
            server.close(done);
            server.closeAllConnections();
          }),
      });
    });
  });
}

/** A gateway's fetch handler served over node:http on loopback. */
function serve(gateway) {
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const request = new Request(`http://127.0.0.1${req.url}`, {
      method: req.method,
      headers: Object.entries(req.headers).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]])),
      body: req.method === "POST" ? Buffer.concat(chunks) : undefined,
    });
    const response = await gateway.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) Readable.fromWeb(response.body).pipe(res);
    else res.end();
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        stop: () => new Promise((done) => {
          server.closeAllConnections?.();
          server.close(done);
        }),
      });
    });
  });
}
