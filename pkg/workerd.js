// llm-baton for Cloudflare Workers / workerd (the "workerd" export condition, listed first
// because workerd also matches "browser"). workerd refuses to compile wasm from bytes at run
// time, so the bundler/uploader hands us an already compiled WebAssembly.Module instead.
// Instantiating at the top level is allowed there; fetching or setting timers is not, and
// nothing here does either. The gateway's wasm is uploaded too but instantiated only when
// `baton.fetch` is first called.
import wasmModule from "./wasm/llm_baton_bg.wasm";
import * as wasm from "./wasm/llm_baton.js";
import { createHost } from "./host.js";
import { useRuntime } from "./core.js";

wasm.initSync({ module: wasmModule });
// A timer belongs to the request that set it: one each (pkg/host.js).
const host = createHost(wasm, { oneTimer: false });
host.attach();
useRuntime({ wasm, host, loadGateway: () => import("./gateway/workerd.js") });

export { Baton, BatonError, HealthState } from "./core.js";
export { broadcastHealthStore } from "./broadcast.js";
