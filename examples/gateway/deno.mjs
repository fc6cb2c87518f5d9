// llm-baton's gateway under Deno: OpenAI- and Anthropic-compatible endpoints in front of the
// routes of a config built from the environment (configFromEnv, in llm-baton/gateway/env).
//
//   OPENAI_API_KEY=... deno run --unstable-no-legacy-abort --allow-net --allow-read --allow-env examples/gateway/deno.mjs
//
// (--unstable-no-legacy-abort: a request's signal aborts only when its client leaves; docs/gateway.md.)
//
// HOST (default 127.0.0.1) and PORT (default 8787; 0 picks a free one) choose where it listens.
// It prints `GATEWAY_URL=http://HOST:PORT` once listening.
import { createGateway } from "llm-baton/gateway";
import { configFromEnv } from "llm-baton/gateway/env";

const gateway = createGateway(configFromEnv(Deno.env.toObject()));
const hostname = Deno.env.get("HOST") || "127.0.0.1";
const port = Number(Deno.env.get("PORT") ?? 8787);

Deno.serve({
  hostname,
  port,
  onListen: (addr) => console.log(`GATEWAY_URL=http://${addr.hostname}:${addr.port}`),
}, gateway.fetch);
