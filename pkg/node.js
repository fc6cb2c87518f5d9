// llm-baton for Node (the "node" export condition). Reads the wasm next to this file and
// instantiates it synchronously, so `import { Baton } from "llm-baton"` needs no init call.
import { readFileSync } from "node:fs";
import { initSync } from "./wasm/llm_baton.js";
import { attach } from "./host.js";

initSync({ module: readFileSync(new URL("./wasm/llm_baton_bg.wasm", import.meta.url)) });
attach();

export * from "./core.js";
export { broadcastHealthStore } from "./broadcast.js";
