// The fake OpenAI upstream of the gateway bench, in its own process so its CPU is neither the
// gateway's nor the load generator's: POST /ok/v1/chat/completions answers at once, whole or as
// a stream of DELTAS content deltas written in one go (GATEWAY_BENCH_WRITES=each: one write
// per event); POST /down/v1/chat/completions answers 503.
// GET /_counts says how many requests each path received. Prints UPSTREAM_URL=... once listening.
import { createServer } from "node:http";

const DELTAS = 60;
const MODEL = "bench-model";
const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1700000000, model: MODEL, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const EVENTS = [chunk({ role: "assistant", content: "" }), ...Array.from({ length: DELTAS }, (_, i) => chunk({ content: `tok${i} ` })), chunk({}, "stop"), "data: [DONE]\n\n"];
const STREAM = Buffer.from(EVENTS.join(""));
/** GATEWAY_BENCH_WRITES=each: one write per event, each on its own turn, as a provider sends tokens. */
const EACH = process.env.GATEWAY_BENCH_WRITES === "each";
const WHOLE = Buffer.from(JSON.stringify({
  id: "chatcmpl-bench", object: "chat.completion", created: 1700000000, model: MODEL,
  choices: [{ index: 0, message: { role: "assistant", content: Array.from({ length: DELTAS }, (_, i) => `tok${i} `).join("") }, finish_reason: "stop" }],
  usage: { prompt_tokens: 5, completion_tokens: DELTAS, total_tokens: DELTAS + 5 },
}));
const DOWN = Buffer.from(JSON.stringify({ error: { message: "bench: the primary is down", type: "server_error", code: null } }));
const counts = { ok: 0, down: 0 };

const server = createServer((req, res) => {
  if (req.method === "GET" && req.url === "/_counts") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(counts));
    return;
  }
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    if (req.url === "/down/v1/chat/completions") {
      counts.down += 1;
      res.writeHead(503, { "content-type": "application/json", "content-length": DOWN.length }).end(DOWN);
      return;
    }
    if (req.url !== "/ok/v1/chat/completions") {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
      return;
    }
    counts.ok += 1;
    let stream = false;
    try {
      stream = JSON.parse(Buffer.concat(chunks).toString("utf8")).stream === true;
    } catch {}
    if (!stream) {
      res.writeHead(200, { "content-type": "application/json", "content-length": WHOLE.length }).end(WHOLE);
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    if (!EACH) return res.end(STREAM);
    let next = 0;
    const write = () => {
      if (next === EVENTS.length) return res.end();
      res.write(EVENTS[next++]);
      setImmediate(write);
    };
    write();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => console.log(`UPSTREAM_URL=http://127.0.0.1:${server.address().port}`));
process.on("SIGTERM", () => process.exit(0));
