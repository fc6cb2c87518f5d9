// llm-baton/clouds for Cloudflare Workers: `llm-baton` with the clouds' targets (see
// clouds/node.js), its wasm handed over compiled, as in workerd.js.
import wasmModule from "../wasm/llm_baton_clouds_bg.wasm";
import * as wasm from "../wasm/llm_baton_clouds.js";
import { createHost } from "../host.js";
import { useRuntime } from "../core.js";

wasm.initSync({ module: wasmModule });
const host = createHost(wasm, { oneTimer: false });
host.attach();
useRuntime({ wasm, host, clouds: true, loadGateway: () => import("../gateway/clouds/workerd.js") });

export { Baton, BatonError, HealthState } from "../core.js";
export { broadcastHealthStore } from "../broadcast.js";
