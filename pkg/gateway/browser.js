// llm-baton/gateway for browsers and bundlers: streams the gateway's wasm (the engine and
// the gateway) with a top-level await. A page loads it only by importing this entry or calling
// `baton.fetch`.
import * as wasm from "../wasm/llm_baton_gateway.js";
import { installGateway } from "./api.js";
import { GATEWAY_WASM } from "../wasm_files.js";

await wasm.default({ module_or_path: GATEWAY_WASM });
installGateway(wasm);
export { HealthState, createGateway } from "./api.js";
export { BatonError } from "../core.js";
