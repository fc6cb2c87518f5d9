// The scenarios in headless Chromium, driven from node:test through playwright-core.
//
// A tiny static server on 127.0.0.1 serves pkg/ and tests/e2e/ (wasm as application/wasm, which
// streaming compilation requires) and a page whose import map points "llm-baton" at the entry a
// browser bundler would pick (resolve.mjs, conditions browser/import/module). The page imports
// it, so the browser entry's top-level `await init(...)` really fetches and compiles the wasm.
// Scenarios run at most CONCURRENCY at a time: a page holds 6 connections per origin, and a
// request queued behind that limit would distort the timings.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { scenarios } from "./scenarios.mjs";
import { hostile, runsAlone, RunAlone } from "./hostile.mjs";
import { startProvider } from "./provider.mjs";
import { launchChromium, openPage, startStaticServer } from "./chromium_page.mjs";
import { resolveEntry, BROWSER_CONDITIONS } from "./resolve.mjs";

const CONCURRENCY = Math.min(4, Number(process.env.BATON_E2E_CONCURRENCY ?? 4));
const entry = resolveEntry(BROWSER_CONDITIONS);

const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>llm-baton e2e</title>
<script type="importmap">${JSON.stringify({ imports: { "llm-baton": `/pkg/${entry.slice(2)}`, "llm-baton/gateway": `/pkg/${resolveEntry(BROWSER_CONDITIONS, "./gateway").slice(2)}` } })}</script>
<script type="module">
  import { Baton, BatonError } from "llm-baton";
  import { createGateway } from "llm-baton/gateway";
  import { scenarios } from "/tests/e2e/scenarios.mjs";
  import { hostile } from "/tests/e2e/hostile.mjs";
  window.runScenario = async (name, providerUrl) => {
    try {
      await (scenarios[name] ?? hostile[name])({ Baton, BatonError, createGateway, providerUrl, runtime: "browser" });
      return { ok: true };
    } catch (e) {
      return { ok: false, error: String((e && e.stack) || e) };
    }
  };
  window.batonReady = true;
</script>
`;

describe("browser", { concurrency: CONCURRENCY }, () => {
  let provider;
  let server;
  let browser;
  let page;
  const pageLog = [];
  before(async () => {
    provider = await startProvider();
    server = await startStaticServer(PAGE, ["pkg/", "tests/e2e/"]);
    browser = await launchChromium();
    page = await openPage(browser, `http://127.0.0.1:${server.address().port}/`, "batonReady", pageLog, "llm-baton");
  });
  after(async () => {
    await browser?.close();
    server?.close();
    provider?.stop();
  });

  test("llm-baton resolves to the browser entry", () => {
    assert.equal(entry, "./browser.js");
  });

  const alone = new RunAlone();
  for (const name of [...Object.keys(scenarios), ...Object.keys(hostile)]) {
    test(name, () => alone.run(runsAlone(name), async () => {
      const out = await page.evaluate(([n, url]) => window.runScenario(n, url), [name, provider.url]);
      if (!out.ok) throw new Error(`in Chromium: ${out.error}${pageLog.length ? `\npage log:\n${pageLog.join("\n")}` : ""}`);
    }));
  }
});
