// llm-baton/clouds for Node: `llm-baton` with Azure OpenAI, Amazon Bedrock and Google Vertex AI
// targets (the Baton's wasm built with the clouds). The same API; a separate entry so an app that
// reaches no cloud downloads none of their code.
import { readFileSync } from "node:fs";
import * as wasm from "../wasm/llm_baton_clouds.js";
import { createHost } from "../host.js";
import { useRuntime } from "../core.js";
import { BATON_CLOUDS_WASM } from "../wasm_files_clouds.js";

wasm.initSync({ module: readFileSync(BATON_CLOUDS_WASM) });
const host = createHost(wasm);
host.attach();
useRuntime({ wasm, host, clouds: true, loadGateway: () => import("../gateway/clouds/node.js") });

export { Baton, BatonError, HealthState } from "../core.js";
export { broadcastHealthStore } from "../broadcast.js";
