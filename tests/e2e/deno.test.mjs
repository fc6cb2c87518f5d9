// The scenarios in Deno (`deno test`), importing "llm-baton" by name. With the repo's
// package.json and node_modules/ present and no deno.json, Deno resolves bare specifiers the
// npm way (its "manual" node_modules mode): node_modules/llm-baton links to pkg/, and Deno
// applies the package's "exports" with its conditions ("deno", "node", "import", "default").
// "deno" is listed before "node", so this must land on pkg/deno.js.
import { Baton, BatonError, createGateway } from "llm-baton";
import { scenarios } from "./scenarios.mjs";
import { hostile } from "./hostile.mjs";
import { startProvider } from "./provider.mjs";

const provider = await startProvider();
const env = { Baton, BatonError, providerUrl: provider.url, runtime: "deno" };
const hostileEnv = { ...env, createGateway, inspect: (v) => Deno.inspect(v, { depth: 10 }) };
const all = { ...scenarios, ...hostile };
const names = Object.keys(all);
let pending = names.length + 1;
const done = () => {
  pending -= 1;
  if (pending === 0) provider.stop();
};

Deno.test("llm-baton resolves to the deno entry", () => {
  try {
    const resolved = import.meta.resolve("llm-baton");
    if (!/\/pkg\/deno\.js$/.test(resolved)) throw new Error(`llm-baton resolved to ${resolved}, expected .../pkg/deno.js`);
  } finally {
    done();
  }
});

for (const name of names) {
  Deno.test({
    name,
    // Timers and sockets of an aborted attempt may outlive the test by a tick; the provider
    // checks that every connection really closed.
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async () => {
      try {
        await all[name](name in hostile ? hostileEnv : env);
      } finally {
        done();
      }
    },
  });
}
