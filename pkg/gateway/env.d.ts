// Types of `llm-baton/gateway/env`: the gateway's config from environment variables.
import type { Config } from "../index.d.ts";

/**
 * A config for createGateway from string variables (a Worker's `env`, `Deno.env.toObject()`,
 * `process.env`): `BATON_CONFIG` (the whole document as JSON), else one route, "chat", from
 * `OPENAI_API_KEY` [`OPENAI_BASE_URL`, `OPENAI_MODEL`] failing over to `ANTHROPIC_API_KEY`
 * [`ANTHROPIC_BASE_URL`, `ANTHROPIC_MODEL`], with `GATEWAY_API_KEYS` (comma-separated) and
 * `DEADLINE_MS`. Throws an Error naming the variable when one is missing or malformed.
 */
export declare function configFromEnv(env: Record<string, string | undefined>): Config;
