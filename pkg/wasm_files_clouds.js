// Where the clouds' entries find their wasm (see wasm_files.js, whose place at the package's root
// this module shares): apart from it, so a bundler copies these files only into an app that
// imports llm-baton/clouds or llm-baton/gateway/clouds.
export const BATON_CLOUDS_WASM = new URL("./wasm/llm_baton_clouds_bg.wasm", import.meta.url);
export const GATEWAY_CLOUDS_WASM = new URL("./wasm/llm_baton_gateway_clouds_bg.wasm", import.meta.url);
