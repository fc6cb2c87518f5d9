// llm-baton/gateway/clouds for browsers and bundlers: createGateway with the clouds' targets.
import * as wasm from "../../wasm/llm_baton_gateway_clouds.js";
import { installGateway } from "../api.js";
import { GATEWAY_CLOUDS_WASM } from "../../wasm_files_clouds.js";

await wasm.default({ module_or_path: GATEWAY_CLOUDS_WASM });
installGateway(wasm, undefined, true);
export { HealthState, createGateway } from "../api.js";
export { BatonError } from "../../core.js";
