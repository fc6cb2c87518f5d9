// llm-baton's gateway as a Cloudflare Worker: OpenAI- and Anthropic-compatible endpoints in
// front of the routes of a config built from the Worker's secrets (see config.js).
//
// The gateway is built once per isolate, at the module's top level: createGateway validates the
// config synchronously and does no I/O, which Workers allow there. `env` comes from
// "cloudflare:workers", so secrets are readable at the top level too.
import { env } from "cloudflare:workers";
import { createGateway } from "llm-baton";
import { configFromEnv } from "./config.js";

export default createGateway(configFromEnv(env));
