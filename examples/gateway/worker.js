// llm-baton's gateway as a Cloudflare Worker: OpenAI- and Anthropic-compatible endpoints in
// front of the routes of a config built from the Worker's secrets (configFromEnv, in
// llm-baton/gateway/env: the variables it reads are listed there): `.dev.vars` under
// `npx wrangler dev` (copy .dev.vars.example), `wrangler secret put` once deployed.
//
// The gateway is built once per isolate, at the module's top level: createGateway validates the
// config synchronously and does no I/O, which Workers allow there. `env` comes from
// "cloudflare:workers", so secrets and bindings are readable at the top level too.
//
// Breakers are shared by every isolate of the deployment through the Durable Object bound as
// BATON_HEALTH (wrangler.toml): a provider one isolate found down is skipped by all of them.
import { env } from "cloudflare:workers";
import { createGateway } from "llm-baton/gateway";
import { durableHealthStore } from "llm-baton/durable";
import { configFromEnv } from "llm-baton/gateway/env";

export { BatonHealthObject } from "llm-baton/durable";

const config = configFromEnv(env);

export default createGateway(config, {
  healthStore: durableHealthStore(env.BATON_HEALTH, { config: config.health }),
});
