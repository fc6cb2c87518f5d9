// llm-baton for Deno (the "deno" export condition, listed before "node", which Deno also
// matches). Reads the Baton's wasm next to this file (needs --allow-read) and instantiates it at once.
import * as wasm from "./wasm/llm_baton.js";
import { createHost } from "./host.js";
import { useRuntime } from "./core.js";

wasm.initSync({ module: Deno.readFileSync(new URL("./wasm/llm_baton_bg.wasm", import.meta.url)) });
const host = createHost(wasm);
host.attach();
useRuntime({ wasm, host, loadGateway: () => import("./gateway/deno.js") });

export { Baton, BatonError, HealthState } from "./core.js";
export { broadcastHealthStore } from "./broadcast.js";
