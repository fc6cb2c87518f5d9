// llm-baton/gateway for Cloudflare Workers / workerd: the gateway's wasm arrives compiled from the
// uploader (workerd compiles no wasm from bytes) and is instantiated at the top level, which workerd
// allows; nothing here fetches or sets a timer.
import wasmModule from "../wasm/llm_baton_gateway_bg.wasm";
import * as wasm from "../wasm/llm_baton_gateway.js";
import { installGateway } from "./api.js";

wasm.initSync({ module: wasmModule });
installGateway(wasm, { oneTimer: false });
export { HealthState, createGateway } from "./api.js";
export { BatonError } from "../core.js";
