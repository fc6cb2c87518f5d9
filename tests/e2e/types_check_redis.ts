// Compile-only check of pkg/gateway/redis.d.ts (`deno check`, strict), imported by
// types_check.ts: a Node program sharing its gateway's breakers through Redis type-checks.
import { createGateway } from "../../pkg/gateway.d.ts";
import { redisHealthStore } from "../../pkg/gateway/redis.d.ts";
import type { RedisHealthStore } from "../../pkg/gateway/redis.d.ts";

export async function shared(url: string): Promise<string> {
  const health = { failures: 3, cooldownMs: 5000 };
  const store: RedisHealthStore = redisHealthStore(url, { health, waitMs: 40, timeoutMs: 1000, prefix: "app:", onWarning: (m: string) => console.warn(m) });
  const gateway = createGateway({ targets: {}, health }, { healthStore: store });
  const view = await store.admit(["primary"]);
  store.report([]);
  const open: number = store.snapshot().targets.filter((t) => t.state === "open").length;
  // @ts-expect-error: the URL is a string
  redisHealthStore(new URL(url));
  // @ts-expect-error: waitMs is a number of milliseconds
  redisHealthStore(url, { waitMs: "40" });
  await store.close();
  return `${store.where} ${view.targets.length} ${open} ${typeof gateway.fetch}`;
}
