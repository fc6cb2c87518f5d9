// The scenarios in Deno (`deno test`), importing "llm-baton" by name. With the repo's
// package.json and node_modules/ present and no deno.json, Deno resolves bare specifiers the
// npm way (its "manual" node_modules mode): node_modules/llm-baton links to pkg/, and Deno
// applies the package's "exports" with its conditions ("deno", "node", "import", "default").
// "deno" is listed before "node", so this must land on pkg/deno.js.
import { Baton, BatonError } from "llm-baton";
import { createGateway } from "llm-baton/gateway";
import { scenarios } from "./scenarios.mjs";
import { hostile } from "./hostile.mjs";
import { startProvider } from "./provider.mjs";
import { telemetryScenarios } from "./telemetry_scenarios.mjs";
import { context, trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";

const provider = await startProvider();
const env = { Baton, BatonError, createGateway, providerUrl: provider.url, runtime: "deno" };
const hostileEnv = { ...env, inspect: (v) => Deno.inspect(v, { depth: 10 }), watchProcess: watchUncaught };
// OpenTelemetry traces (issue 15) with the real SDK, as in Node and workerd (telemetry.test.mjs).
const telemetryEnv = { ...env, otel: { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, trace, context } };
const all = { ...scenarios, ...hostile, ...telemetryScenarios };
const names = Object.keys(all);
let pending = names.length + 1;
const done = () => {
  pending -= 1;
  if (pending === 0) provider.stop();
};

Deno.test("llm-baton resolves to the deno entry", () => {
  try {
    const resolved = import.meta.resolve("llm-baton");
    if (!/\/pkg\/deno\.js$/.test(resolved)) throw new Error(`llm-baton resolved to ${resolved}, expected .../pkg/deno.js`);
  } finally {
    done();
  }
});

for (const name of names) {
  Deno.test({
    name,
    // Timers and sockets of an aborted attempt may outlive the test by a tick; the provider
    // checks that every connection really closed.
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async () => {
      // A hostile scenario's uncaught error (a wasm trap in a microtask) fails that scenario
      // instead of the whole module, so the scenarios after it still run.
      const uncaught = name in hostile ? watchUncaught() : () => [];
      try {
        await all[name](name in hostile ? hostileEnv : name in telemetryScenarios ? telemetryEnv : env);
      } finally {
        done();
        const seen = uncaught();
        if (seen.length) throw new Error(`${seen.length} uncaught error(s) during the scenario: ${seen.slice(0, 3).join(" | ")}`);
      }
    },
  });
}

/** Records (and keeps from ending the run) uncaught errors and unhandled rejections until the returned function is called. */
function watchUncaught() {
  const seen = [];
  const onError = (e) => {
    e.preventDefault();
    seen.push(`uncaught: ${e.error?.stack ?? e.message}`);
  };
  const onRejection = (e) => {
    e.preventDefault();
    seen.push(`unhandled rejection: ${e.reason?.stack ?? e.reason}`);
  };
  globalThis.addEventListener("error", onError);
  globalThis.addEventListener("unhandledrejection", onRejection);
  return () => {
    globalThis.removeEventListener("error", onError);
    globalThis.removeEventListener("unhandledrejection", onRejection);
    return seen;
  };
}
