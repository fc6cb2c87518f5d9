// llm-baton/clouds for browsers and bundlers: `llm-baton` with the clouds' targets (see
// clouds/node.js). A page holds no long-lived cloud credential: docs/clouds.md says what to use.
import * as wasm from "../wasm/llm_baton_clouds.js";
import { createHost } from "../host.js";
import { useRuntime } from "../core.js";
import { BATON_CLOUDS_WASM } from "../wasm_files_clouds.js";

await wasm.default({ module_or_path: BATON_CLOUDS_WASM });
const host = createHost(wasm);
host.attach();
useRuntime({ wasm, host, clouds: true, loadGateway: () => import("../gateway/clouds/browser.js") });

export { Baton, BatonError, HealthState } from "../core.js";
export { broadcastHealthStore } from "../broadcast.js";
