// Deno side of bench/accuracy.mjs: deno run --allow-net --allow-read lib/accuracy-deno.mjs URL CALLS LIMIT
import { Baton } from "../../pkg/deno.js";
import { accuracy } from "./accuracy-probe.mjs";
const [url, calls, limit] = Deno.args;
console.log(JSON.stringify(await accuracy({ Baton, providerUrl: url, runtime: "deno", calls: Number(calls), limitMs: Number(limit) })));
