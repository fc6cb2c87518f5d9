// What a browser downloads for each entry of the package: the JavaScript an app's bundler emits
// for the import (esbuild, browser conditions, minified, code splitting on, so a dynamic import
// is its own chunk fetched only when it runs), plus the entry's wasm, each gzipped at level 9.
// `make test` holds these to the budgets (package_size.test.mjs) and `make bench` prints them.
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import * as esbuild from "esbuild";
import { fileURLToPath } from "node:url";
import { BROWSER_CONDITIONS, pkgDir } from "./resolve.mjs";

const repo = fileURLToPath(new URL("../../", import.meta.url));

/** The entries a browser app imports, what it imports from each, and the wasm each loads at once. */
export const ENTRIES = [
  { name: "llm-baton (Baton)", code: `export { Baton } from "llm-baton";`, wasm: "wasm/llm_baton_bg.wasm" },
  { name: "llm-baton/gateway (createGateway)", code: `export { createGateway } from "llm-baton/gateway";`, wasm: "wasm/llm_baton_gateway_bg.wasm" },
  { name: "llm-baton/clouds (Baton)", code: `export { Baton } from "llm-baton/clouds";`, wasm: "wasm/llm_baton_clouds_bg.wasm" },
  { name: "llm-baton/gateway/clouds (createGateway)", code: `export { createGateway } from "llm-baton/gateway/clouds";`, wasm: "wasm/llm_baton_gateway_clouds_bg.wasm" },
];

const gzipped = (bytes) => gzipSync(bytes, { level: 9 }).length;

/**
 * Each entry's download: `{ name, jsRaw, jsGzip, wasmRaw, wasmGzip, totalGzip, lazyGzip, eagerInputs, wasmClasses }`,
 * where `lazyGzip` is the JavaScript of chunks loaded only by a dynamic import (not in the total),
 * `eagerInputs` the source files bundled into the rest (paths as esbuild names them) and
 * `wasmClasses` the wasm classes the rest builds by name (core.js's `rebuildable`: "WasmBaton"...).
 */
export async function entrySizes() {
  const sizes = [];
  for (const entry of ENTRIES) {
    const result = await esbuild.build({
      // Resolved by name through the repo's node_modules/llm-baton (a link to pkg/), as an app's is.
      stdin: { contents: entry.code, resolveDir: repo, sourcefile: "app.mjs" },
      bundle: true,
      minify: true,
      splitting: true,
      format: "esm",
      platform: "browser",
      conditions: BROWSER_CONDITIONS,
      target: "es2022",
      outdir: "/size",
      write: false,
      metafile: true,
      logLevel: "silent",
    });
    const outputs = result.metafile.outputs;
    const text = new Map(result.outputFiles.map((f) => [f.path, f.contents]));
    const byName = (name) => [...text.keys()].find((p) => p.endsWith(`/${name}`));
    const entryName = Object.keys(outputs).find((o) => outputs[o].entryPoint !== undefined);
    // The entry chunk and every chunk it imports statically: fetched before the import resolves.
    const eager = new Set();
    const visit = (name) => {
      if (eager.has(name)) return;
      eager.add(name);
      for (const i of outputs[name].imports) if (i.kind === "import-statement" && !i.external) visit(i.path);
    };
    visit(entryName);
    let jsRaw = 0;
    let jsGzip = 0;
    let lazyGzip = 0;
    const eagerInputs = [];
    const wasmClasses = new Set();
    for (const name of Object.keys(outputs).filter((o) => o.endsWith(".js"))) {
      const bytes = text.get(byName(name.split("/").pop()));
      if (eager.has(name)) {
        jsRaw += bytes.length;
        jsGzip += gzipped(bytes);
        eagerInputs.push(...Object.keys(outputs[name].inputs));
        for (const [, wasmClass] of new TextDecoder().decode(bytes).matchAll(/"(Wasm[A-Za-z]+)"/g)) wasmClasses.add(wasmClass);
      } else lazyGzip += gzipped(bytes);
    }
    const wasm = readFileSync(`${pkgDir}${entry.wasm}`);
    const wasmGzip = gzipped(wasm);
    sizes.push({ name: entry.name, jsRaw, jsGzip, wasmRaw: wasm.length, wasmGzip, totalGzip: jsGzip + wasmGzip, lazyGzip, eagerInputs, wasmClasses: [...wasmClasses].sort() });
  }
  return sizes;
}
