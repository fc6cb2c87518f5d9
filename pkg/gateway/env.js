// The gateway's config, built from environment secrets: a Worker's `env`, Deno's or Node's
// environment. What the example Worker and Deno host (examples/gateway/) and the Node command
// (bin/llm-baton-gateway.js) all read, so a deployment moves between them with the same variables.
//
// BATON_CONFIG, when set, is the whole config document as JSON (targets, routes, keys): the most
// flexible choice, kept as one secret. Otherwise the config is assembled from one secret per
// provider:
//
//   OPENAI_API_KEY    [OPENAI_BASE_URL, OPENAI_MODEL]      an OpenAI Chat target "openai"
//   ANTHROPIC_API_KEY [ANTHROPIC_BASE_URL, ANTHROPIC_MODEL] an Anthropic target "anthropic"
//   GATEWAY_API_KEYS  comma-separated keys clients must send (Authorization: Bearer or x-api-key)
//   DEADLINE_MS       the default budget of one request (default 30000)
//
// and one route, "chat": OpenAI (two attempts), failing over to Anthropic (whichever are set). A
// silent OpenAI (no headers or no first token in time) hands over to Anthropic at once, without
// its second attempt; errors such as a 503 use both.

import { FROM_ENVIRONMENT } from "../gateway.js";
import { parseJson } from "./json-text.js";

/** A config document for createGateway from an object of string variables. */
export function configFromEnv(env) {
  if (env.BATON_CONFIG) return parseJson(env.BATON_CONFIG, "BATON_CONFIG");

  const targets = {};
  const chain = [];
  if (env.OPENAI_API_KEY) {
    targets.openai = {
      format: "openai_chat",
      baseUrl: env.OPENAI_BASE_URL || "https://api.openai.com/v1",
      model: env.OPENAI_MODEL || "gpt-4o-mini",
      apiKey: env.OPENAI_API_KEY,
      timeouts: { headersMs: 10000, firstTokenMs: 15000, idleMs: 15000 },
    };
    chain.push({ retry: "openai", attempts: 2 });
  }
  if (env.ANTHROPIC_API_KEY) {
    targets.anthropic = {
      format: "anthropic_messages",
      baseUrl: env.ANTHROPIC_BASE_URL || "https://api.anthropic.com/v1",
      model: env.ANTHROPIC_MODEL || "claude-haiku-4-5",
      apiKey: env.ANTHROPIC_API_KEY,
      timeouts: { headersMs: 10000, firstTokenMs: 15000, idleMs: 15000 },
    };
    chain.push("anthropic");
  }
  if (chain.length === 0) {
    throw new Error("set BATON_CONFIG, or at least one of OPENAI_API_KEY and ANTHROPIC_API_KEY");
  }
  const apiKeys = (env.GATEWAY_API_KEYS || "").split(",").map((k) => k.trim()).filter(Boolean);
  const deadlineMs = Number(env.DEADLINE_MS || 30000);
  if (!(Number.isFinite(deadlineMs) && deadlineMs > 0)) {
    // Number("30s") is NaN: refuse it here, naming the variable, rather than run with no deadline.
    throw new Error(`DEADLINE_MS must be a positive number of milliseconds, e.g. 30000 (got ${JSON.stringify(env.DEADLINE_MS)})`);
  }
  return {
    targets,
    routes: { chat: { fallback: chain } },
    deadlineMs,
    gateway: apiKeys.length > 0 ? { apiKeys } : {},
    [FROM_ENVIRONMENT]: true,
  };
}
