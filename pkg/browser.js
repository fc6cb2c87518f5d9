// llm-baton for browsers and bundlers (the "browser" and "default" export conditions).
// Browsers may not compile large modules synchronously on the main thread, so this entry
// streams the wasm (served as application/wasm) with a top-level await.
import init from "./wasm/llm_baton.js";
import { attach } from "./host.js";

await init({ module_or_path: new URL("./wasm/llm_baton_bg.wasm", import.meta.url) });
attach();

export * from "./core.js";
export { broadcastHealthStore } from "./broadcast.js";
