// Type declarations for llm-baton/durable: breaker state shared across the isolates of a
// Cloudflare Workers deployment through a Durable Object.

import type { HealthConfig, HealthStore } from "./index.d.ts";

/**
 * What `durableHealthStore` needs of a Durable Object namespace binding (`env.BATON_HEALTH`), so the
 * types do not depend on @cloudflare/workers-types.
 */
export interface HealthObjectNamespace {
  idFromName(name: string): unknown;
  get(id: never): { fetch(input: string, init?: RequestInit): Promise<Response> };
}

export interface DurableHealthStoreOptions {
  /**
   * The `health` section of the llm-baton config (default: the defaults). Checked at once: a
   * mistake throws BatonError kind "config". Every message carries it, so the objects need no
   * setup, and one built from another config rebuilds its breakers.
   */
  config?: HealthConfig | false;
  /**
   * How long one object request may take before its target reads as "pass" (fail open).
   * Default 1000, at most 60000. The Baton's own bounded wait is usually shorter.
   */
  timeoutMs?: number;
  /**
   * Object names are `prefix + target`, and `prefix + "#retry-budget"` for the object that keeps
   * the deployment's retry budget from every leg (default "llm-baton-health:").
   */
  prefix?: string;
}

/**
 * A HealthStore over a namespace bound to `BatonHealthObject`, for
 * `new Baton(config, { healthStore })` and `createGateway(config, { healthStore })`: one object
 * per target name; `admit` asks the targets' objects and the budget object in parallel (a target
 * whose object fails or is late reads as closed: fail open; a budget that cannot be read is left
 * out, and the Baton counts its own), `report` forwards each leg event to its target's object and
 * to the budget object (fire and forget, kept alive with the Worker's `waitUntil`). Throws BatonError kind "config" for
 * a namespace that is not one, an unknown option, or a health config the core refuses.
 */
export declare function durableHealthStore(namespace: HealthObjectNamespace, options?: DurableHealthStoreOptions): HealthStore;

/**
 * The Durable Object: export it from the Worker's main module and bind it in wrangler.toml
 * (examples/gateway/wrangler.toml). It keeps the breakers of the targets whose name maps to it,
 * in memory, and serves `POST /admit {targets, config?}` (a HealthView with `retryBudget`),
 * `POST /report {events: [{leg, cause?}], config?}` (204) and `GET /snapshot` (a HealthSnapshot).
 * Malformed messages get a 4xx with `{error}` saying why.
 */
export declare class BatonHealthObject {
  constructor(state: unknown, env: unknown);
  fetch(request: Request): Promise<Response>;
}
