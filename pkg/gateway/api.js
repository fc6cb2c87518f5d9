// What every llm-baton/gateway entry exports, over the gateway's wasm once the entry has
// instantiated it (`installGateway`): each runtime loads the wasm its own way, the rest is here.
// The entries re-export these bindings, so a bundler keeps only the ones an app imports: an app
// that imports only createGateway downloads neither class.
import { createHost } from "../host.js";
import { Baton as CoreBaton, gatewayOn, HealthState as CoreHealthState, RUNTIME, useRuntime } from "../core.js";
import * as gateway from "../gateway.js";

/** The gateway's runtime (core.js's `{ wasm, host, gateway }`), once an entry has installed it. */
let runtime = null;

/** Installs the instantiated wasm-bindgen module `wasm`; `hostOptions` go to createHost (pkg/host.js). */
export function installGateway(wasm, hostOptions) {
  const host = createHost(wasm, hostOptions);
  host.attach();
  runtime = { wasm, host, gateway };
  useRuntime(runtime);
}

/** An OpenAI- and Anthropic-compatible fetch handler before the config's routes (docs/gateway.md). */
export const createGateway = (config, options) => gatewayOn(runtime, config, options);

/**
 * `base` on the gateway's runtime. The class is anonymous (the export names it): esbuild,
 * wrangler's bundler, renames the imported CoreBaton to Baton and so writes `class Baton extends
 * Baton`, a ReferenceError at startup, when a class expression is named Baton (evanw/esbuild#4273).
 * Called with a pure annotation, so a bundle that does not use the class drops the call.
 */
function onGateway(base) {
  return class extends base {
    static get [RUNTIME]() {
      return runtime;
    }
  };
}

/** The Baton on this wasm: its `fetch` runs here from the start. */
export const Baton = /* @__PURE__ */ onGateway(CoreBaton);
export const HealthState = /* @__PURE__ */ onGateway(CoreHealthState);
