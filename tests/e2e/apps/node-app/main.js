// A small Node program on llm-baton, as a user bundles one for a server or a function host:
// tests/e2e/bundlers.test.mjs builds it with `esbuild --bundle --platform=node --format=esm` and
// runs the bundle with node. It asks the route "chat" of the config given as its argument (JSON)
// once whole and once through `baton.fetch` (the gateway's wasm, loaded on that call), and prints
// one JSON line with the results.
import { Baton } from "llm-baton";

const config = JSON.parse(process.argv[2]);
const messages = [{ role: "user", content: "Say hello." }];

const answer = await new Baton(config).complete("chat", { messages });
const response = await new Baton(config).fetch("https://llm-baton.invalid/v1/chat/completions", {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ model: "chat", messages }),
});
const body = await response.json();
console.log(JSON.stringify({
  complete: { text: answer.text, target: answer.target },
  fetch: { status: response.status, target: response.headers.get("x-baton-target"), text: body.choices?.[0]?.message?.content },
}));
