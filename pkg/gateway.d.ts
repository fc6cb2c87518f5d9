// Types of `llm-baton/gateway`: the gateway (createGateway) and HealthState, on the gateway's wasm
// (a Baton is `llm-baton`'s: this wasm has the gateway, not the Baton's API).
import type * as baton from "./index.d.ts";
import type { BatonOptions, Config } from "./index.d.ts";

export type * from "./index.d.ts";
// The same classes, as values and types. Not `export { BatonError } from "./index.d.ts"`:
// TypeScript refuses a value export from a declaration file's path (TS2846) wherever skipLibCheck
// is off.
export declare const BatonError: typeof baton.BatonError;
export type BatonError = baton.BatonError;
export declare const HealthState: typeof baton.HealthState;
export type HealthState = baton.HealthState;

/**
 * An OpenAI- and Anthropic-compatible HTTP gateway: `POST /v1/chat/completions`,
 * `POST /v1/messages`, `GET /v1/models`, `GET /v1/health`. A standard fetch handler: `export default gateway` in a
 * Cloudflare Worker, `Deno.serve(gateway.fetch)` in Deno.
 */
export interface Gateway {
  fetch(request: Request): Promise<Response>;
}

/** `gateway.metrics`: serve `GET /metrics` in the Prometheus text format (docs/gateway.md, "Metrics"). */
export interface GatewayMetricsConfig {
  /**
   * The scraper's own key, sent as `Authorization: Bearer <key>`: 16 or more printable ASCII
   * characters without spaces, and not one of `apiKeys`.
   */
  apiKey: string;
}

/** The `gateway` section as createGateway reads it: the shared one, and `metrics`. */
export interface GatewayServerConfig extends baton.GatewayConfig {
  metrics?: GatewayMetricsConfig;
}

/** A config for createGateway: a Baton's, whose `gateway` section may also have `metrics`. */
export interface GatewayConfigDocument extends Omit<Config, "gateway"> {
  gateway?: GatewayServerConfig;
}

/**
 * Builds a gateway over the config's routes (a client's `model` names a route or a target).
 * Validates synchronously with no I/O and no timer, so it may run at a module's top level;
 * throws BatonError kind "config".
 */
export declare function createGateway(config: GatewayConfigDocument, options?: BatonOptions): Gateway;
