// llm-baton/gateway for Node: the gateway's wasm (the engine and the gateway), instantiated
// synchronously at import. `createGateway` serves the OpenAI- and Anthropic-compatible endpoints.
import { readFileSync } from "node:fs";
import * as wasm from "../wasm/llm_baton_gateway.js";
import { installGateway } from "./api.js";
import { AttemptController, fetchUpstream } from "./node-fetch.js";
import { GATEWAY_WASM } from "../wasm_files.js";

wasm.initSync({ module: readFileSync(GATEWAY_WASM) });
installGateway(wasm, { fetch: fetchUpstream, Controller: AttemptController });
export { HealthState, createGateway } from "./api.js";
export { BatonError } from "../core.js";
