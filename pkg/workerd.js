// llm-baton for Cloudflare Workers / workerd (the "workerd" export condition, listed first
// because workerd also matches "browser"). workerd refuses to compile wasm from bytes at run
// time, so the bundler/uploader hands us an already compiled WebAssembly.Module instead.
// Instantiating at the top level is allowed there; fetching or setting timers is not, and
// nothing here does either.
import wasmModule from "./wasm/llm_baton_bg.wasm";
import { initSync } from "./wasm/llm_baton.js";
import { attach } from "./host.js";

initSync({ module: wasmModule });
attach();

export * from "./core.js";
export { broadcastHealthStore } from "./broadcast.js";
