// The floor under any JavaScript gateway on Deno, for the gateway bench: a proxy that forwards
// the client's body to UPSTREAM and pipes the answer back through a JavaScript ReadableStream,
// one enqueue per chunk read, parsing and deciding nothing (gateway-floor.mjs). What llm-baton's
// gateway costs above this is its own work; what this costs is Deno's (a fetch body read, a
// promise and a socket write per chunk the upstream sent). Prints GATEWAY_URL=... once listening.
// FLOOR_READER=byob reads the upstream into one reused buffer, as llm-baton's gateway does.
//
//   UPSTREAM=http://127.0.0.1:PORT/ok deno run --allow-net=127.0.0.1 --allow-env bench/lib/gateway-floor-deno.mjs
import { passThrough } from "./gateway-floor.mjs";

const upstream = Deno.env.get("UPSTREAM");
const byob = Deno.env.get("FLOOR_READER") === "byob";

Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: (a) => console.log(`GATEWAY_URL=http://${a.hostname}:${a.port}`) }, (req) => passThrough(req, upstream, { byob }));
