// llm-baton for Node (the "node" export condition). Reads the Baton's wasm from the package's
// wasm/ folder (wasm_files.js) and instantiates it synchronously, so `import { Baton } from
// "llm-baton"` needs no init call.
import { readFileSync } from "node:fs";
import * as wasm from "./wasm/llm_baton.js";
import { createHost } from "./host.js";
import { useRuntime } from "./core.js";
import { BATON_WASM } from "./wasm_files.js";

wasm.initSync({ module: readFileSync(BATON_WASM) });
const host = createHost(wasm);
host.attach();
useRuntime({ wasm, host, loadGateway: () => import("./gateway/node.js") });

export { Baton, BatonError, HealthState } from "./core.js";
export { broadcastHealthStore } from "./broadcast.js";
