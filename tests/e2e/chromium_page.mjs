// What the Chromium runners share: Debian's Chromium launched headless, the loopback web server
// their page comes from (the page at `/`, and the repo's files under the given prefixes: the
// browser entry and its wasm under pkg/, scenario modules, bundles; anything else is a 404), and
// a page opened once it says it is ready.
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const repo = fileURLToPath(new URL("../../", import.meta.url));

const TYPES = {
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".wasm": "application/wasm",
  ".json": "application/json",
  ".html": "text/html; charset=utf-8",
  ".ts": "text/plain; charset=utf-8",
};

/**
 * Listens on 127.0.0.1 (a free port); resolves with the http.Server. Files are read from `root`
 * (the repo, or a bundler's output folder).
 */
export function startStaticServer(page, prefixes, root = repo) {
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
      const body = await readFile(`${root.replace(/\/$/, "")}/${rel}`);
      res.writeHead(200, { "content-type": type, "cache-control": "no-store" });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

/** Chromium (CHROMIUM_PATH, else Debian's), headless, making no connections of its own. */
export function launchChromium() {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/**
 * A new page of `browser` at `url`, once `window[ready]` is true; its console and errors go to
 * `log`. A page that never gets ready fails with `what` it did not load, and the log.
 */
export async function openPage(browser, url, ready, log, what) {
  const page = await browser.newPage();
  page.on("console", (m) => log.push(`console.${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => log.push(`pageerror: ${e.stack || e}`));
  await page.goto(url);
  try {
    await page.waitForFunction((flag) => window[flag] === true, ready, { timeout: 15_000 });
  } catch (e) {
    throw new Error(`the page did not load ${what}: ${e.message}\n${log.join("\n")}`);
  }
  return page;
}
