// llm-baton/gateway for Deno: the gateway's wasm (the Baton's engine plus the gateway), read next
// to this file (needs --allow-read) and instantiated at import.
import * as wasm from "../wasm/llm_baton_gateway.js";
import { gatewayApi } from "./api.js";

wasm.initSync({ module: Deno.readFileSync(new URL("../wasm/llm_baton_gateway_bg.wasm", import.meta.url)) });
export const { Baton, HealthState, createGateway } = gatewayApi(wasm);
export { BatonError } from "../core.js";
