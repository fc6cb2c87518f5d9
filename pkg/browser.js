// llm-baton for browsers and bundlers (the "browser" and "default" export conditions).
// Browsers may not compile large modules synchronously on the main thread, so this entry
// streams the Baton's wasm (served as application/wasm) with a top-level await. The gateway's
// wasm is fetched only if `baton.fetch` is called.
import * as wasm from "./wasm/llm_baton.js";
import { createHost } from "./host.js";
import { useRuntime } from "./core.js";
import { BATON_WASM } from "./wasm_files.js";

await wasm.default({ module_or_path: BATON_WASM });
const host = createHost(wasm);
host.attach();
useRuntime({ wasm, host, loadGateway: () => import("./gateway/browser.js") });

export { Baton, BatonError, HealthState } from "./core.js";
export { broadcastHealthStore } from "./broadcast.js";
