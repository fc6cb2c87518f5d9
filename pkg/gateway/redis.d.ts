// Types of `llm-baton/gateway/redis`: breakers and the retry budget shared through Redis (or
// Valkey) by every Node gateway process and host that names the same server (docs/health.md).
import type { HealthConfig, HealthStore, HealthView, LegEvent, HealthSnapshot } from "../index.d.ts";

export interface RedisHealthStoreOptions {
  /** The config's `health` section (default: the defaults): the policy of this process's replica. */
  health?: HealthConfig | false;
  /**
   * The longest `admit` waits for Redis before deciding on this process's replica alone
   * (default 40, below the Baton's `healthWaitMs` of 50). From 1 to 60000.
   */
  waitMs?: number;
  /**
   * The longest one Redis command may take before the connection counts as failed (default
   * 1000): it is closed, and opened again after a backoff (0.25 s doubling to 2 s). From 1 to 60000.
   */
  timeoutMs?: number;
  /** Keys are `prefix + "legs"` (a stream) and `prefix + "probe:" + target` (default "llm-baton-health:"). */
  prefix?: string;
  /** Where the warnings go (Redis unreachable, reachable again); default console.warn. Never holds a password. */
  onWarning?: (message: string) => void;
}

/** A HealthStore over Redis; `where` names the server without credentials. */
export interface RedisHealthStore extends HealthStore {
  admit(targets: string[]): Promise<HealthView>;
  report(events: LegEvent[]): void;
  /** This process's replica: every target it has heard of, as `baton.health()` shows them. */
  snapshot(): HealthSnapshot;
  /** Sends the legs that wait, then closes the connection; resolves once closed. */
  close(): Promise<void>;
  /** The server as `redis://host:port/db`. */
  readonly where: string;
}

/**
 * A HealthStore shared through the Redis at `url` (`redis://[user:password@]host[:port][/db]`,
 * `rediss://` for TLS), for `createGateway(config, { healthStore })` on Node. Each process keeps a
 * replica of the breakers fed by every process's legs (a Redis stream), and a half-open target's
 * probe takes a lock in Redis, so one probe per cooldown leaves all the processes together. Fails
 * open: Redis down or slow leaves each process with its own breakers. Throws BatonError kind
 * "config" naming a bad argument (never repeating the URL).
 */
export declare function redisHealthStore(url: string, options?: RedisHealthStoreOptions): RedisHealthStore;
