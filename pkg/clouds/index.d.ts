// Types of llm-baton/clouds: the same API as llm-baton (for TypeScript resolutions that do not
// read package.json "exports").
export * from "../index.js";
