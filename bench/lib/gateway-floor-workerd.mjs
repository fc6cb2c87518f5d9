// The floor under any JavaScript gateway in workerd, for the gateway bench: a Worker with the
// same proxy as gateway-floor-deno.mjs (gateway-floor.mjs: the client's body forwarded to
// env.UPSTREAM, the answer piped back through a JavaScript ReadableStream, one enqueue per chunk
// read, nothing parsed). What llm-baton's gateway costs above this in workerd is its own work;
// what this costs is workerd's. bench/gateway.mjs runs it in Miniflare.
import { passThrough } from "./gateway-floor.mjs";

export default {
  fetch: (request, env) => passThrough(request, env.UPSTREAM),
};
