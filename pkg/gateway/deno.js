// llm-baton/gateway for Deno: the gateway's wasm (the engine and the gateway), read
// from the package's wasm/ folder (wasm_files.js; needs --allow-read) and instantiated at import.
import * as wasm from "../wasm/llm_baton_gateway.js";
import { installGateway } from "./api.js";
import { GATEWAY_WASM } from "../wasm_files.js";

wasm.initSync({ module: Deno.readFileSync(GATEWAY_WASM) });
installGateway(wasm, { streamBodies: true });
export { HealthState, createGateway } from "./api.js";
export { BatonError } from "../core.js";
