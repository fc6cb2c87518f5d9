// llm-baton for Node (the "node" export condition). Reads the Baton's wasm next to this file and
// instantiates it synchronously, so `import { Baton } from "llm-baton"` needs no init call.
import { readFileSync } from "node:fs";
import * as wasm from "./wasm/llm_baton.js";
import { createHost } from "./host.js";
import { useRuntime } from "./core.js";

wasm.initSync({ module: readFileSync(new URL("./wasm/llm_baton_bg.wasm", import.meta.url)) });
const host = createHost(wasm);
host.attach();
useRuntime({ wasm, host, loadGateway: () => import("./gateway/node.js") });

export { Baton, BatonError, HealthState } from "./core.js";
export { broadcastHealthStore } from "./broadcast.js";
