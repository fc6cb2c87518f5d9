// What every llm-baton/gateway entry exports, over the gateway's wasm once the entry has
// instantiated it: each runtime loads the wasm its own way, the rest is here.
import { createHost } from "../host.js";
import { Baton as CoreBaton, gatewayOn, HealthState as CoreHealthState, RUNTIME, useRuntime } from "../core.js";
import * as gateway from "../gateway.js";

/**
 * `{ createGateway, Baton, HealthState }` on the instantiated wasm-bindgen module `wasm`;
 * `hostOptions` go to createHost (pkg/host.js).
 */
export function gatewayApi(wasm, hostOptions) {
  const host = createHost(wasm, hostOptions);
  host.attach();
  const runtime = { wasm, host, gateway };
  useRuntime(runtime);
  return {
    /** An OpenAI- and Anthropic-compatible fetch handler before the config's routes (docs/gateway.md). */
    createGateway: (config, options) => gatewayOn(runtime, config, options),
    // Both classes are anonymous (the property names them): esbuild, wrangler's bundler, renames
    // the imported CoreBaton to Baton and so writes `class Baton extends Baton`, a ReferenceError
    // at startup, when a class expression is named Baton (evanw/esbuild#4273).
    /** The Baton on this wasm: its `fetch` runs here from the start. */
    Baton: class extends CoreBaton {
      static [RUNTIME] = runtime;
    },
    HealthState: class extends CoreHealthState {
      static [RUNTIME] = runtime;
    },
  };
}
