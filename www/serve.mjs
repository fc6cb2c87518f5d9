// Serves the chat page for `make demo` and the browser tests: www/ at /, pkg/ at /pkg/ (the page
// imports ../pkg/browser.js, so no bundler or import map is needed), and /config.json, which tells
// the page where the scripted provider listens. The provider runs alongside so the page works
// with no API key. Static files only: the page itself calls the provider, or a gateway.
//
//   node www/serve.mjs [--port N]     (default 8600, a free port if that one is taken)
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { extname, normalize, sep } from "node:path";
import { startProvider } from "../tests/e2e/provider.mjs";

const repo = fileURLToPath(new URL("../", import.meta.url));
const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".wasm": "application/wasm",
  ".json": "application/json",
  ".svg": "image/svg+xml",
};

/** Maps a URL path to a file under www/ or pkg/, or null. */
function fileFor(urlPath) {
  const rel = normalize(decodeURIComponent(urlPath)).replace(/^[/\\]+/, "");
  if (rel.split(sep).includes("..")) return null;
  if (rel === "" || rel === "index.html") return `${repo}www/index.html`;
  if (rel.startsWith(`pkg${sep}`)) return repo + rel;
  return `${repo}www/${rel}`;
}

function handler(providerUrl) {
  return async (req, res) => {
    const headers = { "cache-control": "no-store", "x-content-type-options": "nosniff" };
    const path = new URL(req.url, "http://x").pathname;
    if (req.method !== "GET" && req.method !== "HEAD") return res.writeHead(405, headers).end();
    if (path === "/config.json") {
      res.writeHead(200, { ...headers, "content-type": TYPES[".json"] });
      return res.end(JSON.stringify({ providerUrl }));
    }
    const file = fileFor(path);
    const type = file && TYPES[extname(file)];
    if (!type || file.endsWith("serve.mjs")) return res.writeHead(404, headers).end();
    try {
      const body = await readFile(file);
      res.writeHead(200, { ...headers, "content-type": type });
      res.end(req.method === "HEAD" ? undefined : body);
    } catch {
      res.writeHead(404, headers).end();
    }
  };
}

function listen(server, port) {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/** Starts the provider and the static server. Resolves to `{ url, providerUrl, close }`. */
export async function startDemo({ port = 0 } = {}) {
  const provider = await startProvider();
  const server = createServer(handler(provider.url));
  try {
    await listen(server, port);
  } catch (e) {
    if (e.code !== "EADDRINUSE" || port === 0) {
      provider.stop();
      throw e;
    }
    await listen(server, 0);
  }
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    providerUrl: provider.url,
    close: () => {
      server.closeAllConnections();
      server.close();
      provider.stop();
    },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const i = process.argv.indexOf("--port");
  const demo = await startDemo({ port: i > 0 ? Number(process.argv[i + 1]) : 8600 });
  console.log(`\nChat UI: ${demo.url}   (scripted provider at ${demo.providerUrl}; Ctrl-C to stop)`);
  const stop = () => {
    demo.close();
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
