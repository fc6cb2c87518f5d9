// The floor under any gateway on Node, for the gateway bench: a proxy on node:http that forwards the
// client's path and body to UPSTREAM over a keep-alive node:http agent and writes each chunk of the
// answer back as it arrives, parsing and deciding nothing. What llm-baton's Node gateway costs above
// this is its own work; what this costs is Node's (two HTTP exchanges, their parsers and sockets).
// Prints GATEWAY_URL=... once listening.
//
//   UPSTREAM=http://127.0.0.1:PORT/ok node bench/lib/gateway-floor-node.mjs
import { Agent, createServer, request } from "node:http";

const upstream = new URL(process.env.UPSTREAM);
const agent = new Agent({ keepAlive: true });

const server = createServer((req, res) => {
  const forward = request({
    host: upstream.hostname, port: upstream.port, path: `${upstream.pathname}${req.url}`, method: req.method, agent,
    headers: { "content-type": req.headers["content-type"] ?? "application/json", ...(req.headers["content-length"] ? { "content-length": req.headers["content-length"] } : {}) },
  }, (answer) => {
    res.writeHead(answer.statusCode, { "content-type": answer.headers["content-type"] ?? "application/octet-stream" });
    answer.on("data", (chunk) => res.write(chunk));
    answer.on("end", () => res.end());
  });
  forward.on("error", () => res.destroy());
  req.pipe(forward);
});
server.listen(0, "127.0.0.1", () => console.log(`GATEWAY_URL=http://127.0.0.1:${server.address().port}`));
