// llm-baton/gateway/clouds for Deno: createGateway with the clouds' targets.
import * as wasm from "../../wasm/llm_baton_gateway_clouds.js";
import { installGateway } from "../api.js";
import { GATEWAY_CLOUDS_WASM } from "../../wasm_files_clouds.js";

wasm.initSync({ module: Deno.readFileSync(GATEWAY_CLOUDS_WASM) });
installGateway(wasm, { streamBodies: true }, true);
export { HealthState, createGateway } from "../api.js";
export { BatonError } from "../../core.js";
