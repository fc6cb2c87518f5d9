// llm-baton/gateway/clouds for Cloudflare Workers: createGateway with the clouds' targets.
import wasmModule from "../../wasm/llm_baton_gateway_clouds_bg.wasm";
import * as wasm from "../../wasm/llm_baton_gateway_clouds.js";
import { installGateway } from "../api.js";

wasm.initSync({ module: wasmModule });
installGateway(wasm, { oneTimer: false }, true);
export { HealthState, createGateway } from "../api.js";
export { BatonError } from "../../core.js";
