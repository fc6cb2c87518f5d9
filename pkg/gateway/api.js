// What every llm-baton/gateway entry exports, over the gateway's wasm once the entry has
// instantiated it (`installGateway`): each runtime loads the wasm its own way, the rest is here.
// The entries re-export these bindings, so a bundler keeps only the ones an app imports: an app
// that imports only createGateway does not download HealthState. A Baton is the Baton's entry's
// (`llm-baton`): this wasm has the gateway, not the Baton's API.
import { createHost } from "../host.js";
import { gatewayOn, HealthState as CoreHealthState, RUNTIME, useRuntime } from "../core.js";
import * as gateway from "../gateway.js";
import { metricsLink, splitMetrics } from "./metrics-link.js";

/** The gateway's runtime (core.js's `{ wasm, host, gateway }`), once an entry has installed it. */
let runtime = null;

/**
 * Installs the instantiated wasm-bindgen module `wasm`; `hostOptions` go to createHost
 * (pkg/host.js); `clouds`: the build has the clouds (llm-baton/gateway/clouds). With both builds
 * imported, createGateway runs on the clouds' one, which reads every config the other does.
 */
export function installGateway(wasm, hostOptions, clouds = false) {
  if (runtime?.clouds && !clouds) return;
  const host = createHost(wasm, hostOptions);
  host.attach();
  runtime = { wasm, host, gateway, clouds };
  useRuntime(runtime);
}

/**
 * An OpenAI- and Anthropic-compatible fetch handler before the config's routes (docs/gateway.md),
 * serving `/metrics` when the config has `gateway.metrics`.
 */
export function createGateway(config, options) {
  const [wasmConfig, metricsKey] = splitMetrics(config);
  const metrics = metricsKey === undefined ? undefined : (instance) => metricsLink(metricsKey, runtime, instance);
  return gatewayOn(runtime, wasmConfig, options, metrics);
}

/**
 * `base` on the gateway's runtime. The class is anonymous (the export names it): esbuild,
 * wrangler's bundler, renames an imported class to its export's name and so writes `class
 * HealthState extends HealthState`, a ReferenceError at startup, when a class expression has
 * that name (evanw/esbuild#4273). Called with a pure annotation, so a bundle that does not use
 * the class drops the call.
 */
function onGateway(base) {
  return class extends base {
    static get [RUNTIME]() {
      return runtime;
    }
  };
}

export const HealthState = /* @__PURE__ */ onGateway(CoreHealthState);
