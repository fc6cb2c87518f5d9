// llm-baton/gateway for Deno: the gateway's wasm (the Baton's engine plus the gateway), read next
// to this file (needs --allow-read) and instantiated at import.
import * as wasm from "../wasm/llm_baton_gateway.js";
import { createHost } from "../host.js";
import { Baton as CoreBaton, gatewayOn, HealthState as CoreHealthState, RUNTIME, useRuntime } from "../core.js";
import * as gateway from "../gateway.js";

wasm.initSync({ module: Deno.readFileSync(new URL("../wasm/llm_baton_gateway_bg.wasm", import.meta.url)) });
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
