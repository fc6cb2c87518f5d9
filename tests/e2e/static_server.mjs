// The loopback web server the Chromium runners load their page from: the page at `/`, and the
// repo's files under the given prefixes (the browser entry and its wasm under pkg/, scenario
// modules, bundles). Nothing else: a path outside them, or of a type not served, is a 404.
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { normalize } from "node:path";
import { fileURLToPath } from "node:url";

const repo = fileURLToPath(new URL("../../", import.meta.url));

const TYPES = {
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".wasm": "application/wasm",
  ".json": "application/json",
  ".html": "text/html; charset=utf-8",
  ".ts": "text/plain; charset=utf-8",
};

/** Listens on 127.0.0.1 (a free port); resolves with the http.Server. */
export function startStaticServer(page, prefixes) {
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    if (path === "/" || path === "/index.html") {
      res.writeHead(200, { "content-type": TYPES[".html"], "cache-control": "no-store" });
      res.end(page);
      return;
    }
    const rel = normalize(path).replace(/^\/+/, "");
    const type = TYPES[rel.slice(rel.lastIndexOf("."))];
    if (!prefixes.some((p) => rel.startsWith(p)) || rel.includes("..") || !type) {
      res.writeHead(404).end();
      return;
    }
    try {
      const body = await readFile(repo + rel);
      res.writeHead(200, { "content-type": type, "cache-control": "no-store" });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}
