// llm-baton/gateway for browsers and bundlers: streams the gateway's wasm (the Baton's engine plus
// the gateway) with a top-level await. A page loads it only by importing this entry or calling
// `baton.fetch`.
import * as wasm from "../wasm/llm_baton_gateway.js";
import { createHost } from "../host.js";
import { Baton as CoreBaton, gatewayOn, HealthState as CoreHealthState, RUNTIME, useRuntime } from "../core.js";
import * as gateway from "../gateway.js";

await wasm.default({ module_or_path: new URL("../wasm/llm_baton_gateway_bg.wasm", import.meta.url) });
const host = createHost(wasm);
host.attach();
const runtime = { wasm, host, gateway };
useRuntime(runtime);

/** An OpenAI- and Anthropic-compatible fetch handler in front of the config's routes (README, "Gateway"). */
export function createGateway(config, options) {
  return gatewayOn(runtime, config, options);
}

/** The Baton on this wasm: its `fetch` runs here from the start. */
export class Baton extends CoreBaton {
  static [RUNTIME] = runtime;
}

export class HealthState extends CoreHealthState {
  static [RUNTIME] = runtime;
}

export { BatonError } from "../core.js";
