// Types of llm-baton/gateway/clouds: the same API as llm-baton/gateway (for TypeScript
// resolutions that do not read package.json "exports").
export * from "../../gateway.js";
