// llm-baton for browsers and bundlers (the "browser" and "default" export conditions).
// Browsers may not compile large modules synchronously on the main thread, so this entry
// streams the Baton's wasm (served as application/wasm) with a top-level await. The gateway's
// wasm is fetched only if `baton.fetch` is called.
import * as wasm from "./wasm/llm_baton.js";
import { createHost } from "./host.js";
import { useRuntime } from "./core.js";

await wasm.default({ module_or_path: new URL("./wasm/llm_baton_bg.wasm", import.meta.url) });
const host = createHost(wasm);
host.attach();
useRuntime({ wasm, host, loadGateway: () => import("./gateway/browser.js") });

export { Baton, BatonError, HealthState } from "./core.js";
export { broadcastHealthStore } from "./broadcast.js";
