// Deno side of bench/load.mjs: deno run --allow-net --allow-read lib/load-deno.mjs URL
import { Baton } from "../../pkg/deno.js";
import { deadlinesUnderLoad } from "./load-probe.mjs";
console.log(JSON.stringify(await deadlinesUnderLoad({ Baton, providerUrl: Deno.args[0], runtime: "deno" })));
