// Shared health between two tabs of one origin in headless Chromium (issue 13, "Done when"):
// each tab has its own Baton with `broadcastHealthStore()`, and what one tab learns about the
// primary keeps the other tab off it too. First the store itself in Node, where one process's
// BroadcastChannel reaches every store of the same name (and there is no Web Locks API).
//
// Both pages live in one browser context (one profile: BroadcastChannel and Web Locks are per
// storage partition, and playwright's browser.newPage() would give each page its own). A tiny
// static server serves pkg/ and a page whose import map points "llm-baton" at the browser entry.
// The scripted provider (tests/provider) counts what reached the primary; the test flips the
// primary from 503 to healthy by redefining its scenario between two requests, after reading
// the outage's log, so no request straddles the switch.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { spawnSync } from "node:child_process";
import { BatonError } from "../../pkg/node.js";
import { broadcastHealthStore } from "../../pkg/broadcast.js";
import { putScenario, startProvider } from "./provider.mjs";
import { launchChromium, startStaticServer } from "./chromium_page.mjs";
import { resolveEntry, BROWSER_CONDITIONS } from "./resolve.mjs";

const repo = fileURLToPath(new URL("../../", import.meta.url));
const entry = resolveEntry(BROWSER_CONDITIONS);

// The flapping primary: 503 for OUTAGE_MS, then healthy; REQUESTS calls SPACING_MS apart,
// alternating between the tabs. Two failures open the breaker (one from each tab, so only a
// shared view opens it that early) and a cooldown of 2 s fits probes inside the outage.
const OUTAGE_MS = 6000;
const SPACING_MS = 1200;
const REQUESTS = 10;
const HEALTH = { failures: 2, cooldownMs: 2000 };
/** Timers and the channel may deliver a little late on a loaded machine; never early. */
const SLACK_MS = 250;

// `window.harness` works without llm-baton (it checks the browser gives both tabs one channel
// and one lock manager); `window.tab` loads llm-baton and runs calls through this tab's Baton.
const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>llm-baton shared health</title>
<script type="importmap">${JSON.stringify({ imports: { "llm-baton": `/pkg/${entry.slice(2)}` } })}</script>
<script type="module">
  const heard = [];
  const channel = new BroadcastChannel("harness");
  channel.onmessage = (event) => heard.push(event.data);
  let release = null;
  window.harness = {
    post: (message) => channel.postMessage(message),
    heard: () => heard,
    hold: (name) => new Promise((granted) => {
      navigator.locks.request(name, () => { granted(true); return new Promise((r) => { release = r; }); });
    }),
    release: () => release?.(),
    tryLock: (name) => navigator.locks.request(name, { ifAvailable: true }, (lock) => lock !== null),
  };
  let baton = null;
  let store = null;
  window.tab = {
    async setup(config, health) {
      const { Baton, broadcastHealthStore } = await import("llm-baton");
      store?.close();
      store = broadcastHealthStore(undefined, { health });
      // A loaded machine may stall a page past the default 50 ms wait, and the Baton would then
      // fail open: the store answers within its own 25 ms lock wait anyway.
      baton = new Baton(config, { healthStore: store, healthWaitMs: 1000 });
    },
    async ask(route) {
      const events = [];
      const t0 = performance.now();
      try {
        const done = await baton.complete(route, { messages: [{ role: "user", content: "Say hello." }], maxTokens: 16 },
          { onEvent: (event) => events.push(event) });
        return { ok: true, target: done.target, legs: done.legs.map((l) => [l.target, l.outcome, l.status ?? null]),
          skips: events.filter((e) => e.type === "skip").map((e) => [e.target, e.reason]), ms: performance.now() - t0 };
      } catch (e) {
        return { ok: false, error: String((e && e.stack) || e), legs: e.legs, events };
      }
    },
    health: () => baton.health(),
  };
  window.pageReady = true;
</script>
`;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

describe("broadcastHealthStore in Node", () => {
  const health = { failures: 1, cooldownMs: 300 };
  const failed = (target) => ({
    leg: { target, attempt: 1, startMs: 0, endMs: 1, outcome: "http", status: 503 },
    cause: { kind: "http", status: 503, message: "scripted 503" },
  });
  const view = async (store, target) => (await store.admit([target])).targets[0];
  /** Long enough for a message between two channels of one process to arrive, if it were sent. */
  const DELIVERY_MS = 50;
  /**
   * Resolves once a store's message of this `type` went out on channel `name` (as a third
   * listener hears it), and the other listeners had a moment to take it too.
   */
  function sent(name, type) {
    const spy = new BroadcastChannel(name);
    return new Promise((resolve) => {
      spy.onmessage = (event) => {
        if (event.data?.type !== type) return;
        spy.close();
        setTimeout(resolve, 10);
      };
    });
  }
  const stores = [];
  const open = (name, options = { health }) => {
    const store = broadcastHealthStore(name, options);
    stores.push(store);
    return store;
  };
  after(() => stores.forEach((store) => store.close()));

  test("what one store learns, every store of the same name knows, and no other", async () => {
    const [a, b, other] = [open("node-learn"), open("node-learn"), open("node-learn-other")];
    const delivered = sent("node-learn", "reports");
    a.report([failed("primary")]);
    assert.equal((await view(a, "primary")).state, "open");
    await delivered;
    const seen = await view(b, "primary");
    assert.equal(seen.state, "open", JSON.stringify(seen));
    assert.ok(seen.reopensInMs > 0 && seen.reopensInMs <= health.cooldownMs, JSON.stringify(seen));
    assert.equal((await view(other, "primary")).state, "closed");
    assert.equal((await view(b, "backup")).state, "closed");
  });

  test("a probe one store holds, the others skip for its lease", async () => {
    const [a, b] = [open("node-probe"), open("node-probe")];
    const delivered = sent("node-probe", "reports");
    a.report([failed("primary")]);
    await delivered;
    await sleep(health.cooldownMs + 20);
    const announced = sent("node-probe", "probe");
    assert.equal((await view(a, "primary")).probe, true, "the first store to ask probes");
    await announced;
    const skipped = await view(b, "primary");
    assert.equal(skipped.probe, false, JSON.stringify(skipped));
    // The lease counts from when b heard of the probe, a moment after a took it.
    assert.ok(skipped.reopensInMs > 0 && skipped.reopensInMs < health.cooldownMs, JSON.stringify(skipped));
  });

  test("a probe stands only with its Web Lock, held for the lease; a slow or refusing lock manager", async (t) => {
    // Fake lock managers, as navigator.locks: what `request(name, {ifAvailable}, callback)` does.
    const managers = {
      "grants it": { probe: true, held: true, request: (name, options, callback) => Promise.resolve(callback({ name })) },
      "holds it elsewhere": { probe: false, request: (name, options, callback) => Promise.resolve(callback(null)) },
      "answers after 100 ms": { probe: false, held: false, request: (name, options, callback) => sleep(100).then(() => callback({ name })) },
      "refuses (an opaque origin)": { probe: true, request: () => Promise.reject(new DOMException("denied", "SecurityError")) },
    };
    const saved = Object.getOwnPropertyDescriptor(globalThis, "navigator");
    t.after(() => (saved ? Object.defineProperty(globalThis, "navigator", saved) : delete globalThis.navigator));
    for (const [what, manager] of Object.entries(managers)) {
      const asked = [];
      let kept; // what the store's callback returned: a held lock's lease, or nothing
      let grantedAt;
      const locks = { request: (name, options, callback) => {
        asked.push([name, options.ifAvailable]);
        return manager.request(name, options, (lock) => {
          grantedAt = performance.now();
          return (kept = callback(lock));
        });
      } };
      Object.defineProperty(globalThis, "navigator", { value: { locks }, configurable: true });
      const store = open(`node-lock-${what}`);
      store.report([failed("primary")]);
      await sleep(health.cooldownMs + 20); // timers may fire a little early on the wasm clock
      const seen = await view(store, "primary");
      assert.equal(seen.probe, manager.probe, `${what}: ${JSON.stringify(seen)}`);
      if (!seen.probe) assert.equal(seen.reopensInMs, health.cooldownMs, `${what}: skip for a lease`);
      assert.deepEqual(asked, [[`node-lock-${what}:primary`, true]], what);
      if (manager.held === undefined) continue;
      await sleep(110);
      assert.equal(kept instanceof Promise, manager.held, `${what}: the lock is ${manager.held ? "held" : "let go at once"}`);
      if (manager.held) {
        // The lease's timer is unref()'d: this test's own timer keeps Node running meanwhile.
        const releasedAt = await Promise.race([kept.then(() => performance.now()), sleep(health.cooldownMs + 500).then(() => Infinity)]);
        const heldMs = releasedAt - grantedAt;
        assert.ok(heldMs >= health.cooldownMs - 5 && heldMs < health.cooldownMs + 250,
          `${what}: held ${heldMs} ms, for a lease of ${health.cooldownMs}`);
      }
    }
  });

  test("news in another shape on the channel is ignored", async () => {
    const store = open("node-noise");
    const noise = new BroadcastChannel("node-noise");
    const ours = { protocol: "llm-baton-health/1" };
    const messages = [
      null,
      "reports",
      { type: "reports", reports: [failed("primary")] },
      { ...ours, type: "reports", reports: "x" },
      { ...ours, type: "reports", reports: [null, 1, { leg: { target: 5 } }, failed("primary").leg] },
      { ...ours, type: "probe", target: "primary" },
    ];
    for (const message of messages) {
      noise.postMessage(message);
    }
    // Messages from one channel arrive in order: once this one is in, so is all the noise.
    noise.postMessage({ ...ours, type: "reports", reports: [failed("sentinel")] });
    while ((await view(store, "sentinel")).state !== "open") await sleep(5);
    noise.close();
    assert.deepEqual(await view(store, "primary"), await view(open("node-noise-clean"), "primary"));
  });

  test("without BroadcastChannel, a store is a private replica", async () => {
    const saved = globalThis.BroadcastChannel;
    let a;
    let b;
    try {
      delete globalThis.BroadcastChannel;
      [a, b] = [open("node-alone"), open("node-alone")];
    } finally {
      globalThis.BroadcastChannel = saved;
    }
    a.report([failed("primary")]);
    await sleep(DELIVERY_MS);
    assert.equal((await view(a, "primary")).state, "open");
    assert.equal((await view(b, "primary")).state, "closed");
  });

  test("a wrong name or option is a config error naming it", () => {
    const cases = [
      [[""], "name"],
      [["-reserved"], "name"],
      [[42], "name"],
      [["ok", "health"], "options"],
      [["ok", { healthy: {} }], "options.healthy"],
      [["ok", { health: { cooldownMs: -1 } }], "options.health.cooldownMs"],
      // A getter on the prototype (JSON.stringify in the message below skips it): read once, by the store.
      [["ok", new (class { get health() { throw new Error("no health here"); } })()], "options.health"],
    ];
    for (const [args, path] of cases) {
      const named = (e) => e instanceof BatonError && e.kind === "config" && e.path === path && e.message.startsWith(path);
      assert.throws(() => broadcastHealthStore(...args), named,
        `broadcastHealthStore(${JSON.stringify(args)}) names ${path}`);
    }
  });

  test("a store never keeps Node running", () => {
    const code = `import "./pkg/node.js"; import { broadcastHealthStore } from "./pkg/broadcast.js";
      const store = broadcastHealthStore("node-exit"); store.report([{ leg: { target: "p", attempt: 1, startMs: 0, endMs: 1, outcome: "ok" } }]);
      await store.admit(["p"]);`;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", code], { cwd: repo, timeout: 10_000, encoding: "utf8" });
    assert.equal(run.status, 0, `node exited with ${run.status} (signal ${run.signal}): ${run.stderr}`);
  });
});

describe("shared health in Chromium: two tabs, one broadcastHealthStore", () => {
  let provider;
  let server;
  let browser;
  let tabs;
  const pageLog = [];

  /** Defines (or redefines, with an empty log) the scenario `id` on the provider. */
  const script = (id, steps) => putScenario(provider.url, id, steps);
  const scenario = (id) => fetch(`${provider.url}/_scenarios/${id}`).then((r) => r.json());

  function config(primaryId, backupId) {
    const target = (id) => ({
      format: "openai_chat",
      baseUrl: `${provider.url}/s/${id}/v1`,
      model: "scripted-model",
      apiKey: "sk-test-not-a-secret",
    });
    return {
      targets: { primary: target(primaryId), backup: target(backupId) },
      routes: { main: { fallback: ["primary", "backup"] } },
      health: HEALTH,
    };
  }

  /** A call through tab `i`'s Baton; fails the test with the page's account if it fails. */
  async function ask(i) {
    const out = await tabs[i].evaluate(() => window.tab.ask("main"));
    if (!out.ok) throw new Error(`tab ${i}: the call failed: ${out.error}\nlegs: ${JSON.stringify(out.legs)}\n${pageLog.join("\n")}`);
    return out;
  }

  before(async () => {
    provider = await startProvider();
    server = await startStaticServer(PAGE, ["pkg/"]);
    browser = await launchChromium();
    const context = await browser.newContext();
    tabs = [await context.newPage(), await context.newPage()];
    for (const [i, page] of tabs.entries()) {
      page.on("console", (m) => pageLog.push(`tab ${i} console.${m.type()}: ${m.text()}`));
      page.on("pageerror", (e) => pageLog.push(`tab ${i} pageerror: ${e.stack || e}`));
      await page.goto(`http://127.0.0.1:${server.address().port}/`);
      await page.waitForFunction(() => window.pageReady === true, null, { timeout: 15_000 });
    }
  });

  after(async () => {
    await browser?.close();
    server?.close();
    provider?.stop();
  });

  test("the two tabs share one BroadcastChannel and one Web Lock manager", async () => {
    await tabs[0].evaluate(() => window.harness.post("from tab 0"));
    await tabs[1].waitForFunction(() => window.harness.heard().includes("from tab 0"), null, { timeout: 2000 });
    assert.equal(await tabs[0].evaluate(() => window.harness.hold("harness-lock")), true);
    assert.equal(await tabs[1].evaluate(() => window.harness.tryLock("harness-lock")), false, "tab 1 got a lock tab 0 holds");
    await tabs[0].evaluate(() => window.harness.release());
    await tabs[1].waitForFunction(() => window.harness.tryLock("harness-lock"), null, { timeout: 2000, polling: 50 });
  });

  test("a flapping primary: the tabs together send it at most one probe per cooldown, and return within one", async () => {
    const stamp = Date.now().toString(36);
    const p = `bc-flap-primary-${stamp}`;
    const b = `bc-flap-backup-${stamp}`;
    await script(p, [{ status: 503 }]);
    await script(b, [{ text: "backup here" }]);
    for (const page of tabs) {
      await page.evaluate(([c, h]) => window.tab.setup(c, h), [config(p, b), HEALTH]);
    }

    const calls = [];
    let outage = null; // the provider's log of the primary while it answered 503
    let recoveredAt = null;
    const t0 = performance.now();
    for (let i = 0; i < REQUESTS; i++) {
      await sleep(t0 + i * SPACING_MS - performance.now());
      if (outage === null && i * SPACING_MS >= OUTAGE_MS) {
        outage = await scenario(p);
        await script(p, [{ text: "primary is back" }]);
        recoveredAt = performance.now() - t0;
      }
      const at = performance.now() - t0;
      calls.push({ i, tab: i % 2, at, ...(await ask(i % 2)) });
    }
    const back = await scenario(p);
    const timeline = calls.map((c) => `#${c.i} tab ${c.tab} at ${c.at.toFixed(0)} ms -> ${c.target} (${c.ms.toFixed(0)} ms)` +
      ` legs ${JSON.stringify(c.legs)} skips ${JSON.stringify(c.skips)}`);
    const hitsAt = outage.log.map((e) => e.startedMs).join(", ");
    const detail = `\ntimeline:\n${timeline.join("\n")}\nprimary hits during the outage at (provider ms): ${hitsAt}`;
    console.log(`# broadcast flap:${detail}`);

    for (const c of calls.filter((c) => c.at < recoveredAt)) {
      assert.equal(c.target, "backup", `request #${c.i} during the outage was served by ${c.target}${detail}`);
    }
    // The first HEALTH.failures hits open the breaker; after that, each hit is a probe, and two
    // probes are at least one cooldown apart. Unshared, each tab would need its own two failures.
    const hits = outage.log.map((e) => e.startedMs);
    assert.ok(hits.length >= HEALTH.failures, `the primary saw ${hits.length} request(s) during the outage${detail}`);
    const probes = hits.slice(HEALTH.failures - 1);
    for (let k = 1; k < probes.length; k++) {
      const gap = probes[k] - probes[k - 1];
      assert.ok(gap >= HEALTH.cooldownMs - 20,
        `two requests reached the down primary ${gap} ms apart, less than one cooldown (${HEALTH.cooldownMs} ms)${detail}`);
    }
    assert.ok(hits.length <= HEALTH.failures + Math.floor(OUTAGE_MS / HEALTH.cooldownMs),
      `the primary saw ${hits.length} requests during the outage: ` +
        `more than ${HEALTH.failures} to open the breaker and one probe per cooldown${detail}`);

    const firstBack = calls.find((c) => c.at >= recoveredAt && c.target === "primary");
    assert.ok(firstBack, `no request reached the recovered primary${detail}`);
    assert.ok(firstBack.at - recoveredAt <= HEALTH.cooldownMs + SLACK_MS,
      `traffic came back to the primary ${(firstBack.at - recoveredAt).toFixed(0)} ms after it recovered, more than one cooldown${detail}`);
    for (const c of calls.filter((c) => c.i > firstBack.i)) {
      assert.equal(c.target, "primary", `request #${c.i} after the primary came back went to ${c.target}${detail}`);
    }
    assert.equal(back.requests, calls.filter((c) => c.at >= recoveredAt && c.legs.some(([t]) => t === "primary")).length,
      `the provider and the legs disagree on the requests after recovery${detail}`);
  });

  test("two tabs asking at once when the primary is half-open: one probe between them", async () => {
    const stamp = Date.now().toString(36);
    const p = `bc-race-primary-${stamp}`;
    const b = `bc-race-backup-${stamp}`;
    await script(p, [{ status: 503 }]);
    await script(b, [{ text: "backup here" }]);
    for (const page of tabs) {
      await page.evaluate(([c, h]) => window.tab.setup(c, h), [config(p, b), HEALTH]);
    }
    // Open the breaker from both tabs, then wait out the cooldown.
    await ask(0);
    await ask(1);
    const opened = (await scenario(p)).requests;
    assert.equal(opened, HEALTH.failures, `opening the breaker took ${opened} requests`);
    await sleep(HEALTH.cooldownMs + SLACK_MS);
    // Three calls from each tab at once: one of them probes, the others go to the backup.
    const burst = await Promise.all([0, 0, 0, 1, 1, 1].map((i) => ask(i)));
    const probes = (await scenario(p)).requests - opened;
    const detail = `\nburst: ${JSON.stringify(burst.map((c) => [c.target, c.legs, c.skips]))}`;
    console.log(`# broadcast race: ${probes} probe(s) reached the primary${detail}`);
    // One, unless both tabs' lock requests took longer than the store waits (a probe delayed).
    assert.ok(probes <= 1, `the half-open primary got ${probes} probes from two tabs at once${detail}`);
    assert.ok(burst.every((c) => c.target === "backup"), `every call was served by the backup${detail}`);
  });
});
