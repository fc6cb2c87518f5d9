// The scenarios in Node, importing "llm-baton" by name: the root package.json has it as a
// file: dependency, so node_modules/llm-baton links to pkg/ and Node resolves the package's
// "exports" with its own conditions ("node", "import"), which must land on pkg/node.js.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { inspect } from "node:util";
import { Baton, BatonError } from "llm-baton";
import { createGateway } from "llm-baton/gateway";
import { scenarios } from "./scenarios.mjs";
import { hostile, runsAlone, RunAlone } from "./hostile.mjs";
import { startProvider } from "./provider.mjs";

const CONCURRENCY = Number(process.env.BATON_E2E_CONCURRENCY ?? 4);

const alone = new RunAlone();

describe("node", { concurrency: CONCURRENCY }, () => {
  let provider;
  before(async () => {
    provider = await startProvider();
  });
  after(() => provider?.stop());

  test("llm-baton resolves to the node entry", () => {
    assert.match(import.meta.resolve("llm-baton"), /\/pkg\/node\.js$/);
  });

  for (const [name, run] of Object.entries(scenarios)) {
    test(name, () => alone.run(runsAlone(name), () => run({ Baton, BatonError, createGateway, providerUrl: provider.url, runtime: "node" })));
  }

  // The hostile scenarios also get Node's inspect and a watch on unhandled errors.
  for (const [name, run] of Object.entries(hostile)) {
    const env = () => ({ Baton, BatonError, createGateway, providerUrl: provider.url, runtime: "node", inspect: (v) => inspect(v, { depth: 10 }), watchProcess });
    test(name, () => alone.run(runsAlone(name), () => run(env())));
  }
});

/** Counts unhandled rejections and uncaught exceptions until the returned function is called. */
function watchProcess() {
  const seen = [];
  const onRejection = (reason) => seen.push(`unhandledRejection: ${reason?.stack ?? reason}`);
  const onException = (error) => seen.push(`uncaughtException: ${error?.stack ?? error}`);
  process.on("unhandledRejection", onRejection);
  process.on("uncaughtException", onException);
  return () => {
    process.off("unhandledRejection", onRejection);
    process.off("uncaughtException", onException);
    return seen;
  };
}
