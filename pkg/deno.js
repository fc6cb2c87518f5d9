// llm-baton for Deno (the "deno" export condition, listed before "node", which Deno also
// matches). Reads the Baton's wasm from the package's wasm/ folder (wasm_files.js; needs
// --allow-read) and instantiates it at once. Request bodies go as streams, so that Deno's fetch
// never sends one twice (pkg/host.js, services.fetch).
import * as wasm from "./wasm/llm_baton.js";
import { createHost } from "./host.js";
import { useRuntime } from "./core.js";
import { BATON_WASM } from "./wasm_files.js";

wasm.initSync({ module: Deno.readFileSync(BATON_WASM) });
const host = createHost(wasm, { streamBodies: true });
host.attach();
useRuntime({ wasm, host, loadGateway: () => import("./gateway/deno.js") });

export { Baton, BatonError, HealthState } from "./core.js";
export { broadcastHealthStore } from "./broadcast.js";
