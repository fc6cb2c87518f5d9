// llm-baton for Deno (the "deno" export condition, listed before "node", which Deno also
// matches). Reads the wasm next to this file (needs --allow-read) and instantiates it at once.
import { initSync } from "./wasm/llm_baton.js";
import { attach } from "./host.js";

initSync({ module: Deno.readFileSync(new URL("./wasm/llm_baton_bg.wasm", import.meta.url)) });
attach();

export * from "./core.js";
export { broadcastHealthStore } from "./broadcast.js";
