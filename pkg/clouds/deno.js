// llm-baton/clouds for Deno: `llm-baton` with the clouds' targets (see clouds/node.js). Each
// attempt's body goes as a stream, as in deno.js.
import * as wasm from "../wasm/llm_baton_clouds.js";
import { createHost } from "../host.js";
import { useRuntime } from "../core.js";
import { BATON_CLOUDS_WASM } from "../wasm_files_clouds.js";

wasm.initSync({ module: Deno.readFileSync(BATON_CLOUDS_WASM) });
const host = createHost(wasm, { streamBodies: true });
host.attach();
useRuntime({ wasm, host, clouds: true, loadGateway: () => import("../gateway/clouds/deno.js") });

export { Baton, BatonError, HealthState } from "../core.js";
export { broadcastHealthStore } from "../broadcast.js";
