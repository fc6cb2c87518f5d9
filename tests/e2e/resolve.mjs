// Resolves "llm-baton" from pkg/package.json "exports" the way a bundler does for a platform:
// walk the conditions object in its own key order and take the first key the platform accepts
// ("default" always). workerd and the browser have no package resolution of their own
// (wrangler's esbuild and the app's bundler do it), so their runners use this with the
// condition sets those tools use, and so check that pkg/package.json lists the conditions in an
// order that picks the right entry (workerd also accepts "browser").
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const pkgDir = fileURLToPath(new URL("../../pkg/", import.meta.url));

/** wrangler bundles Workers with esbuild conditions ["workerd", "worker", "browser"] + import/module. */
export const WORKERD_CONDITIONS = ["workerd", "worker", "browser", "import", "module"];
/**
 * How wrangler loads a Worker's modules, for Miniflare: our own rules replace its defaults, so
 * .mjs must be listed too (else .js would be CommonJS), and .wasm is a compiled module (workerd
 * refuses to compile wasm from bytes).
 */
export const WORKERD_MODULE_RULES = [
  { type: "ESModule", include: ["**/*.js", "**/*.mjs"] },
  { type: "CompiledWasm", include: ["**/*.wasm"] },
];
/** Browser bundlers (esbuild platform browser, Vite): "browser" + import/module. */
export const BROWSER_CONDITIONS = ["browser", "import", "module"];

/**
 * The entry file (relative to pkg/, e.g. "./workerd.js") chosen for these conditions, for the
 * package itself or a subpath such as "./durable".
 */
export function resolveEntry(conditions, subpath = ".") {
  const manifest = JSON.parse(readFileSync(`${pkgDir}package.json`, "utf8"));
  let target = subpath === "." ? (manifest.exports?.["."] ?? manifest.exports) : manifest.exports?.[subpath];
  while (target !== null && typeof target === "object") {
    const key = Object.keys(target).find((k) => k === "default" || conditions.includes(k));
    if (key === undefined) throw new Error(`pkg/package.json exports["${subpath}"] has no entry for conditions ${conditions.join(", ")}`);
    target = target[key];
  }
  if (typeof target !== "string") throw new Error(`pkg/package.json has no usable "exports" for "${subpath}"`);
  return target;
}
