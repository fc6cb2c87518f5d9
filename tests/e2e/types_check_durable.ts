// Compile-only check of pkg/durable.d.ts (llm-baton/durable), pulled into `deno check` by
// types_check.ts. Never run.
import { Baton } from "../../pkg/index.d.ts";
import { createGateway } from "../../pkg/gateway.d.ts";
import type { Config, HealthStore, HealthView } from "../../pkg/index.d.ts";
import { BatonHealthObject, durableHealthStore } from "../../pkg/durable.d.ts";
import type { HealthObjectNamespace } from "../../pkg/durable.d.ts";

declare const HEALTH: HealthObjectNamespace;
declare const config: Config;

export async function wire(): Promise<HealthView> {
  const store: HealthStore = durableHealthStore(HEALTH, { config: config.health, timeoutMs: 500, prefix: "staging:" });
  new Baton(config, { healthStore: store, healthWaitMs: 30 });
  createGateway(config, { healthStore: durableHealthStore(HEALTH) });
  durableHealthStore(HEALTH, { config: false });
  // @ts-expect-error: the store's options are config, timeoutMs and prefix
  durableHealthStore(HEALTH, { waitMs: 50 });
  const object = new BatonHealthObject({}, {});
  const res: Response = await object.fetch(new Request("https://h/snapshot"));
  void res;
  return await store.admit(["primary"]);
}
