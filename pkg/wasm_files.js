// Where every entry finds its wasm: in wasm/ beside this module. One module at the package's root
// names the default builds' two files (wasm_files_clouds.js, beside it, the clouds' two, so a
// bundler copies those only into an app that imports llm-baton/clouds), so in a bundle, where import.meta.url is the bundle's (or its chunk's) URL,
// every entry looks in one place, wasm/ beside the bundle. Vite (and any bundler that follows
// `new URL("…", import.meta.url)`) copies the files and rewrites these URLs itself; esbuild
// leaves them as they are, so its users copy the package's wasm/ folder next to the bundle.
// Each URL is written out whole: a bundler only follows a literal string.
export const BATON_WASM = new URL("./wasm/llm_baton_bg.wasm", import.meta.url);
export const GATEWAY_WASM = new URL("./wasm/llm_baton_gateway_bg.wasm", import.meta.url);
