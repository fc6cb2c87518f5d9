// llm-baton/gateway/clouds for Node: createGateway with the clouds' targets (the gateway's wasm
// built with them), instantiated synchronously at import, reaching providers over node:http(s).
import { readFileSync } from "node:fs";
import * as wasm from "../../wasm/llm_baton_gateway_clouds.js";
import { installGateway } from "../api.js";
import { AttemptController, fetchUpstream } from "../node-fetch.js";
import { GATEWAY_CLOUDS_WASM } from "../../wasm_files_clouds.js";

wasm.initSync({ module: readFileSync(GATEWAY_CLOUDS_WASM) });
installGateway(wasm, { fetch: fetchUpstream, Controller: AttemptController }, true);
export { HealthState, createGateway } from "../api.js";
export { BatonError } from "../../core.js";
