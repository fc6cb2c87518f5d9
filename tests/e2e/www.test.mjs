// The chat page (www/) in headless Chromium, against the servers `make demo` starts (www/serve.mjs:
// the static server and the scripted provider). What a person would check by hand: an answer
// streams in, each demo fault shows its notice, its timeline rows and its outcome, a stream that
// breaks mid-answer is continued (or restarted) and reads as one answer, a circuit breaker that
// opens makes the next message skip its target (and the Targets card counts down), Stop really
// closes the provider's connection, a config error lands on its line, keys stay out of storage,
// the page fits a phone, an image attached by the picker or dropped on the composer shows in the
// thread and reaches each format in its own shape (and a file that is not one is refused), axe-core
// finds no WCAG 2.2 AA violation in any state (desktop and phone, light and dark, before and after
// an answer, Settings open), the `<h1>` stays, the intro says where the attempts are, and the
// console stays clean. Screenshots of the main states go to tests/e2e/artifacts/www/ for a reviewer.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { crc32, deflateSync } from "node:zlib";
import { startDemo } from "../../www/serve.mjs";
import { launchChromium } from "./chromium_page.mjs";

const ARTIFACTS = fileURLToPath(new URL("./artifacts/www/", import.meta.url));
const ANSWER_MS = 15_000; // the slowest answer: a 3 s header stall, then ~2.5 s of streaming
// axe-core as pinned in the root lockfile, and the rules' tags for WCAG 2.0, 2.1 and 2.2 A and AA.
const AXE = fileURLToPath(new URL("../../node_modules/axe-core/axe.min.js", import.meta.url));
const WCAG_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

/** A `size`×`size` RGB PNG whose colour runs from `from` to `to` across it. */
function png(size, from, to) {
  const chunk = (type, data) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length);
    head.write(type, 4, "latin1");
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])));
    return Buffer.concat([head, data, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits per channel, RGB, no interlace
  const rows = [];
  for (let y = 0; y < size; y++) {
    const row = [0]; // filter: none
    for (let x = 0; x < size; x++) row.push(...from.map((c, i) => Math.round(c + ((to[i] - c) * (x + y)) / (2 * size))));
    rows.push(...row);
  }
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk("IHDR", header), chunk("IDAT", deflateSync(Buffer.from(rows))), chunk("IEND", Buffer.alloc(0))]);
}
const SUNSET = png(48, [255, 140, 0], [120, 40, 200]);
const SEA = png(48, [0, 160, 200], [10, 40, 120]);

describe("www chat page", () => {
  let demo;
  let browser;
  let page;
  const consoleErrors = [];

  const shot = (name, options = {}) => page.screenshot({ path: `${ARTIFACTS}${name}.png`, ...options });
  const busy = () => page.evaluate(() => document.body.classList.contains("busy"));
  const idle = () => page.waitForFunction(() => !document.body.classList.contains("busy"), null, { timeout: ANSWER_MS });
  const last = () => page.locator(".msg.assistant").last();
  const scenario = (id) => fetch(`${demo.providerUrl}/_scenarios/${id}`).then((r) => r.json());

  /** Arms a demo fault (or none), sends a message on `p` and waits until the answer has ended. */
  async function ask(text, fault, p = page) {
    if (fault) await p.click(`[data-fault="${fault}"]`);
    await p.fill("#prompt", text);
    await p.press("#prompt", "Enter");
    await p.waitForFunction(() => document.body.classList.contains("busy"), null, { timeout: 2000 });
    await p.waitForFunction(() => !document.body.classList.contains("busy"), null, { timeout: ANSWER_MS });
  }

  /** The timeline as "1. primary | OpenAI Chat | http 503" strings. */
  const rows = () => page.$$eval("#timeline .row", (els) => els.map((el) =>
    [".row-target", ".row-format", ".row-outcome"].map((s) => el.querySelector(s).textContent).join(" | ")));
  const notices = () => last().locator(".notice").allTextContents();
  const result = () => page.locator("#result").innerText();

  /** A new page on the chat UI whose console errors count; `setup` runs before it loads. */
  async function open(setup = async () => {}) {
    const p = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    p.on("console", (m) => {
      // Chromium logs every HTTP error status a fetch receives; the scripted ones are the point.
      const scripted = m.location().url.startsWith(demo.providerUrl) && m.text().startsWith("Failed to load resource");
      if (m.type() === "error" && !scripted) consoleErrors.push(m.text());
    });
    p.on("pageerror", (e) => consoleErrors.push(`pageerror: ${e.stack || e}`));
    await setup(p);
    await p.goto(demo.url);
    await p.waitForSelector("body[data-ready=true]", { timeout: 15_000 });
    return p;
  }

  before(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    demo = await startDemo();
    browser = await launchChromium();
    page = await open();
    await shot("01-empty");
  });

  after(async () => {
    await browser?.close();
    demo?.close();
  });

  test("an answer streams in token by token", async () => {
    await page.fill("#prompt", "What does llm-baton do?");
    await page.press("#prompt", "Enter");
    await page.waitForFunction(() => document.querySelector(".msg.assistant .text")?.textContent.length > 100, null, { timeout: 5000 });
    const partial = await last().locator(".text").textContent();
    assert.ok(await busy(), "the answer was still streaming");
    await shot("02-streaming");
    await idle();
    const full = await last().locator(".text").textContent();
    assert.ok(full.length > partial.length && full.startsWith(partial), `the text grew: ${JSON.stringify(partial)} -> ${JSON.stringify(full)}`);
    assert.match(full, /You wrote: “What does llm-baton do\?”/);
    assert.match(await last().locator(".meta").textContent(), /^primary · gpt-4o-mini · .* · 3 in \/ \d+ out tokens$/);
    assert.deepEqual(await rows(), ["1. primary | OpenAI Chat | ok"]);
    assert.match(await result(), /Outcome\s+ok, finish stop[\s\S]*Served by\s+primary \(gpt-4o-mini\)/);
  });

  test("stall before headers: the primary times out and the backup answers", async () => {
    await ask("Are you there?", "stall-headers");
    const [fault, failover, ...more] = await notices();
    assert.equal(fault, "Demo fault on primary: Stall before headers");
    assert.deepEqual(more, []);
    assert.match(failover, /^Primary timed out after 3 s \(no response headers\), switching to backup\s*3\.\d\d s$/);
    assert.deepEqual(await rows(), ["1. primary | OpenAI Chat | timeout headers", "2. backup | Anthropic Messages | ok"]);
    assert.match(await result(), /Outcome\s+ok, finish stop[\s\S]*Served by\s+backup \(claude-haiku-4-5\)/);
    assert.equal((await scenario("primary")).clientClosed, 1, "the stalled request was aborted upstream");
    await shot("03-failover-after-stall");
  });

  /** Applies the config in the settings dialog after `edit(parsed)`; "Restore defaults" when `edit` is null. */
  async function reconfigure(edit) {
    await page.click("#open-settings");
    if (edit) {
      const parsed = JSON.parse(await page.inputValue("#config-text"));
      edit(parsed);
      await page.fill("#config-text", JSON.stringify(parsed, null, 2));
    } else {
      await page.click("#reset-config");
    }
    await page.click("#apply-settings");
    await page.locator("#settings").waitFor({ state: "hidden" });
  }

  const answerText = () => last().locator(".text").textContent();

  /** The words of the prefill (the final assistant message) a logged Anthropic request carried. */
  function prefillWords(request) {
    const prefill = request.body.messages.at(-1);
    assert.equal(prefill.role, "assistant", JSON.stringify(prefill));
    return prefill.content.split(" ").length;
  }

  test("without afterStart, a stall mid-answer ends with the partial text and the error", async () => {
    await reconfigure((config) => delete config.routes.chat.afterStart);
    try {
      await ask("Tell me a story", "stall-mid");
      const [, ending] = await notices();
      assert.match(ending, /^Failed: the stream went quiet for 2 s\. The answer had already started, so it was not retried/);
      const partial = await answerText();
      assert.equal(partial.trim().split(/\s+/).length, 20, `the partial answer stays on screen: ${JSON.stringify(partial)}`);
      assert.deepEqual(await rows(), ["1. primary | OpenAI Chat | timeout idle"]);
      assert.match(await result(), /Outcome\s+failed: timeout idle/);
      assert.equal((await scenario("backup")).requests, 0);
      await shot("04-stall-mid-answer");
    } finally {
      await reconfigure(null);
    }
  });

  test("stall after 20 words: the backup continues the answer, which reads once", async () => {
    await ask("Tell me a story");
    const whole = await answerText();
    await ask("Tell me a story", "stall-mid");
    const list = await notices();
    assert.equal(list.length, 2, JSON.stringify(list));
    assert.match(list[1], /^Primary stalled after 20 words; continued on backup\s*\d\.\d\d s$/);
    assert.equal(await answerText(), whole, "the full text, exactly once");
    const [request] = (await scenario("backup")).log;
    assert.equal(prefillWords(request), 20, "the prefill is the 20 words shown");
    assert.ok(whole.startsWith(request.body.messages.at(-1).content));
    assert.deepEqual(await rows(), ["1. primary | OpenAI Chat | timeout idle", "2. backup | Anthropic Messages | ok"]);
    assert.match(await page.locator("#timeline .row-times").last().textContent(), /continues attempt 1$/);
    // The answer's tokens: the primary's input once, both members' output. The prompt was billed twice.
    const out = whole.split(" ").length;
    assert.match(await last().locator(".meta").textContent(), new RegExp(`^primary \\+ backup · claude-haiku-4-5 · .* · 3 in / ${out} out tokens$`));
    assert.match(await result(), new RegExp(`Served by\\s+primary, then backup \\(claude-haiku-4-5\\)[\\s\\S]*Tokens\\s+3 in · ${out} out\\s+Billed\\s+6 in · ${out} out`));
    await shot("04b-stall-continued");
  });

  test("cut mid-answer: the backup continues the answer", async () => {
    await ask("Go on");
    const whole = await answerText();
    await ask("Go on", "cut-mid");
    const [, resumed] = await notices();
    assert.match(resumed, /^Primary was cut after 20 words; continued on backup\s*\d/);
    assert.equal(await answerText(), whole);
    assert.equal(prefillWords((await scenario("backup")).log[0]), 20, "the notice counts what the backup continued");
    assert.deepEqual(await rows(), ["1. primary | OpenAI Chat | transport", "2. backup | Anthropic Messages | ok"]);
  });

  test("a backup that refuses the prefill restarts: the partial answer is cleared and says why", async () => {
    await ask("Once more", "cut-no-prefill");
    const [, resumed, refused, reset, ...more] = await notices();
    assert.deepEqual(more, []);
    assert.match(resumed, /^Primary was cut after 20 words; continued on backup\s*\d/);
    assert.match(refused, /^Backup answered HTTP 400 instead of continuing; restarting on backup\s*\d/);
    assert.match(reset, /^Discarded \d+ characters from primary \(the connection was cut\); backup answers afresh\s*\d/);
    const [refusedRequest, freshRequest] = (await scenario("backup")).log;
    assert.equal(prefillWords(refusedRequest), 20);
    assert.equal(freshRequest.body.messages.at(-1).role, "user", "the restart asks afresh");
    const text = await answerText();
    assert.match(text, /^This answer was streamed by the backup target \(Anthropic Messages, model claude-haiku-4-5\)/);
    assert.ok(!text.includes("primary"), `nothing of the discarded answer is left: ${JSON.stringify(text)}`);
    assert.equal(text.split("This answer was").length, 2, "one answer");
    const discarded = Number(/Discarded (\d+)/.exec(reset)[1]);
    assert.ok(discarded > 80, `the primary's 20 words were discarded: ${discarded} characters`);
    assert.deepEqual(await rows(), [
      "1. primary | OpenAI Chat | transport", "2. backup | Anthropic Messages | http 400", "3. backup | Anthropic Messages | ok",
    ]);
    assert.match(await last().locator(".meta").textContent(), /^backup · claude-haiku-4-5 · /);
    await shot("04c-restarted");
  });

  test("429 with Retry-After: the wait the provider asked for, then the primary again", async () => {
    await ask("Busy?", "429");
    assert.match((await notices())[1], /^Primary is busy \(HTTP 429\), retrying \(2\/4\) in 1 s, as its Retry-After asked/);
    assert.deepEqual(await rows(), ["1. primary | OpenAI Chat | http 429", "2. primary | OpenAI Chat | ok"]);
    assert.match(await result(), /Served by\s+primary/);
  });

  test("503 twice: two retries with backoff, then success", async () => {
    await ask("Overloaded?", "503x2");
    const [, first, second] = await notices();
    assert.match(first, /^Primary answered HTTP 503, retrying \(2\/4\) in [\d.]+ s/);
    assert.match(second, /^Primary answered HTTP 503, retrying \(3\/4\) in [\d.]+ s/);
    assert.deepEqual(await rows(), ["1. primary | OpenAI Chat | http 503", "2. primary | OpenAI Chat | http 503", "3. primary | OpenAI Chat | ok"]);
    assert.match(await result(), /Outcome\s+ok[\s\S]*Attempts\s+3/);
    await shot("05-retries-503");
  });

  test("400: never retried, the backup takes over at once", async () => {
    await ask("Bad request?", "400");
    const list = await notices();
    assert.equal(list.length, 2, `one fault notice and one failover notice: ${JSON.stringify(list)}`);
    assert.match(list[1], /^Primary answered HTTP 400, switching to backup/);
    assert.deepEqual(await rows(), ["1. primary | OpenAI Chat | http 400", "2. backup | Anthropic Messages | ok"]);
    assert.equal((await scenario("primary")).requests, 1);
  });

  /** The Targets card as "primary | open | reopens in 29.5 s · …" strings. */
  const breakers = () => page.$$eval("#targets .breaker", (els) => els.map((el) =>
    [".breaker-target", ".breaker-state", ".breaker-detail"].map((s) => el.querySelector(s)?.textContent ?? "").join(" | ")));

  test("a 503 with Retry-After opens the primary's breaker: the next message skips it, and the card counts down", async () => {
    await reconfigure(null); // a new Baton: breakers that earlier tests' faults taught nothing
    try {
      assert.deepEqual(await breakers(), ["backup | closed | ", "primary | closed | "]);
      await ask("Down?", "503-retry-after");
      const [, failover, ...more] = await notices();
      assert.match(failover, /^Primary answered HTTP 503, switching to backup/);
      assert.deepEqual(more, []);
      assert.deepEqual(await rows(), ["1. primary | OpenAI Chat | http 503", "2. backup | Anthropic Messages | ok"]);
      const [, opened] = await breakers();
      assert.match(opened, /^primary \| open \| reopens in (2\d|30)(\.\d)? s · last failure HTTP 503 · 1 of 1 outcome failed$/);

      await ask("Still down?");
      const [skip, ...rest] = await notices();
      assert.match(skip, /^Skipped primary: its circuit breaker is open after HTTP 503; it reopens in 2\d(\.\d)? s\s*\d+ ms$/);
      assert.deepEqual(rest, []);
      assert.deepEqual(await rows(), ["1. backup | Anthropic Messages | ok"]);
      assert.match(await result(), /Served by\s+backup/);
      assert.equal((await scenario("primary")).requests, 0, "the primary was not asked");
      const reopens = async () => parseFloat(/reopens in ([\d.]+) s/.exec((await breakers())[1])[1]);
      const before = await reopens();
      await page.waitForFunction((was) => {
        const m = /reopens in ([\d.]+) s/.exec(document.querySelectorAll("#targets .breaker")[1].textContent);
        return m && parseFloat(m[1]) <= was - 1;
      }, before, { timeout: 3000 });
      assert.match((await breakers())[0], /^backup \| closed \| 0 of 2 outcomes failed$/);
      await shot("05b-breaker-open");
    } finally {
      await reconfigure(null);
    }
    assert.deepEqual(await breakers(), ["backup | closed | ", "primary | closed | "], "a new config starts with closed breakers");
  });

  test("a tab whose timers wake late still shows the real time left", async () => {
    // Playwright's fake clock stands in for a hidden tab: 5 s pass while no timer fires, then
    // every due timer fires once, late. The page must count from the clock, not from its ticks.
    const late = await open((p) => p.clock.install());
    try {
      await late.click('[data-fault="stall-headers"]');
      await late.fill("#prompt", "Still there?");
      await late.press("#prompt", "Enter");
      await late.waitForSelector("#timeline .row");
      // A little ahead of the page's clock, which keeps running between these two calls (by
      // more than 1 ms on a loaded machine, and pausing in the past is an error).
      await late.clock.pauseAt((await late.evaluate(() => Date.now())) + 250);
      await late.clock.fastForward(5000);
      await late.clock.resume();
      await late.waitForSelector("#timeline .row:nth-child(2)");
      const left = parseFloat(await late.textContent("#deadline-text"));
      assert.ok(left > 13 && left <= 15, `the countdown shows the real time left after the wake: ${left} s`);
      await late.waitForFunction(() => !document.body.classList.contains("busy"), null, { timeout: ANSWER_MS });
      assert.match(await late.locator("#timeline .row-outcome").first().textContent(), /^timeout headers$/);
      const spent = parseFloat(/Time\s+([\d.]+) s/.exec(await late.locator("#result").innerText())[1]);
      assert.ok(spent >= 5, `the report counts the time the tab slept: ${spent} s`);
    } finally {
      await late.close();
    }
  });

  test("Stop ends the answer at once and closes the provider's connection", async () => {
    await page.fill("#prompt", "A long answer, please");
    await page.press("#prompt", "Enter");
    await page.waitForFunction(() => document.querySelector(".msg.assistant:last-child .text")?.textContent.length > 20, null, { timeout: 5000 });
    const clicked = Date.now();
    await page.click("#stop");
    await idle();
    const stoppedIn = Date.now() - clicked;
    assert.ok(stoppedIn < 1000, `stopped in ${stoppedIn} ms`);
    assert.match((await notices()).at(-1), /^Stopped\. The request was aborted upstream\./);
    assert.deepEqual(await rows(), ["1. primary | OpenAI Chat | cancelled"]);
    assert.match(await result(), /Outcome\s+stopped by you/);
    let seen;
    for (const until = Date.now() + 3000; Date.now() < until;) {
      seen = await scenario("primary");
      if (seen.clientClosed === 1) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(seen.clientClosed, 1, `the provider saw the client close: ${JSON.stringify({ ...seen, log: undefined })}`);
    assert.equal(seen.completed, 0);
    await shot("06-stopped");
  });

  test("a config error is shown on the line of the field it names", async () => {
    await page.click("#open-settings");
    const text = await page.inputValue("#config-text");
    const broken = text.replace('"idleMs": 2000', '"idleMs": 0');
    assert.notEqual(broken, text);
    await page.fill("#config-text", broken);
    await page.click("#apply-settings");
    const error = page.locator("#config-error");
    await error.waitFor({ state: "visible" });
    const line = broken.slice(0, broken.indexOf('"idleMs": 0')).split("\n").length;
    assert.equal(await error.getAttribute("data-path"), "targets.primary.timeouts.idleMs");
    assert.equal(await error.getAttribute("data-line"), String(line));
    assert.match(await error.innerText(), new RegExp(`^Line ${line}\\s+targets\\.primary\\.timeouts\\.idleMs must be a positive number of milliseconds \\(got 0\\)`));
    assert.equal(await page.locator("#gutter-lines .bad").textContent(), String(line));
    assert.ok(await page.locator("#settings").evaluate((d) => d.open), "the dialog stays open");
    await shot("07-config-error");

    await page.fill("#config-text", text.replace('"backup"\n', '"spare"\n'));
    await page.click("#apply-settings");
    assert.match(await error.innerText(), /routes\.chat\.fallback\[1\]/);
    await page.click("#cancel-settings");
  });

  test("a key typed in reaches its provider and no storage", async () => {
    await page.click("#open-settings");
    await page.fill("#key-primary", "sk-test-not-a-real-key");
    await page.click("#apply-settings");
    await ask("With a key");
    const [request] = (await scenario("primary")).log;
    assert.equal(request.auth, "bearer");
    const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + location.href);
    assert.ok(!stored.includes("sk-test"), stored);
  });

  /** Drops `files` ({ name, mimeType, buffer }) on the composer as a person would; true when the page took the drop. */
  async function drop(files) {
    const taken = await page.evaluate((files) => {
      const transfer = new DataTransfer();
      for (const f of files) transfer.items.add(new File([Uint8Array.from(atob(f.data), (c) => c.charCodeAt(0))], f.name, { type: f.mimeType }));
      const target = document.getElementById("prompt");
      return ["dragenter", "dragover", "drop"].map((type) => !target.dispatchEvent(new DragEvent(type, { dataTransfer: transfer, bubbles: true, cancelable: true })));
    }, files.map((f) => ({ name: f.name, mimeType: f.mimeType, data: f.buffer.toString("base64") })));
    return taken.every(Boolean);
  }

  const staged = () => page.$$eval("#attachments .attachment", (els) => els.map((el) =>
    `${el.querySelector("img").alt} | ${el.querySelector(".attachment-size").textContent} | ${el.querySelector("button").ariaLabel}`));
  const attachError = async () => ((await page.isVisible("#attach-error")) ? page.textContent("#attach-error") : null);
  /** The user messages of a logged request that carry a list of parts. */
  const withParts = (request) => request.body.messages.filter((m) => m.role === "user" && Array.isArray(m.content)).map((m) => m.content);
  const dataUrlOf = (buffer) => `data:image/png;base64,${buffer.toString("base64")}`;

  test("an image attached with the picker shows in the thread and is sent as an image part", async () => {
    await page.setInputFiles("#attach-input", { name: "sunset.png", mimeType: "image/png", buffer: SUNSET });
    await page.waitForSelector("#attachments .attachment");
    assert.deepEqual(await staged(), [`sunset.png | ${SUNSET.length} bytes | Remove sunset.png`]);
    assert.match(await page.textContent("#announcer"), /^Attached sunset\.png \(\d+ bytes\)\. 1 image will go with the next message\.$/);
    assert.equal(await attachError(), null);
    await page.fill("#prompt", "What colour is this?");
    await shot("10-image-staged");
    await page.press("#prompt", "Enter");
    await page.waitForFunction(() => document.body.classList.contains("busy"), null, { timeout: 2000 });
    await idle();

    assert.deepEqual(await staged(), [], "the composer is empty again");
    const thumb = page.locator(".msg.user").last().locator("img.thumb");
    assert.equal(await thumb.getAttribute("alt"), "sunset.png");
    assert.equal(await thumb.evaluate((img) => img.complete && img.naturalWidth), 48, "the thumbnail loaded (the page's CSP lets data: images in)");
    assert.equal(await page.locator(".msg.user").last().locator(".bubble-text").textContent(), "What colour is this?");
    assert.match(await answerText(), /You wrote: “What colour is this\?” with 1 image \(sunset\.png\)\./);
    const [request] = (await scenario("primary")).log;
    assert.deepEqual(withParts(request), [[
      { type: "image_url", image_url: { url: dataUrlOf(SUNSET) } },
      { type: "text", text: "What colour is this?" },
    ]], "OpenAI Chat: the image as a data URL, then the text");
    await shot("11-image-sent");
  });

  test("an image dropped on the composer goes to the backup after a failover, and past images go again", async () => {
    assert.ok(await drop([{ name: "sea.png", mimeType: "image/png", buffer: SEA }]), "the composer took the drop");
    await page.waitForSelector("#attachments .attachment");
    assert.deepEqual(await staged(), [`sea.png | ${SEA.length} bytes | Remove sea.png`]);
    assert.ok(!(await page.locator("#composer").evaluate((el) => el.classList.contains("dropping"))), "the drop highlight is gone");
    await ask("And this one?", "400");
    assert.deepEqual(await rows(), ["1. primary | OpenAI Chat | http 400", "2. backup | Anthropic Messages | ok"]);
    assert.equal(await page.locator(".msg.user").last().locator("img.thumb").getAttribute("alt"), "sea.png");

    const [refused] = (await scenario("primary")).log;
    assert.deepEqual(withParts(refused), [
      [{ type: "image_url", image_url: { url: dataUrlOf(SUNSET) } }, { type: "text", text: "What colour is this?" }],
      [{ type: "image_url", image_url: { url: dataUrlOf(SEA) } }, { type: "text", text: "And this one?" }],
    ], "the earlier turn keeps its image");
    const [served] = (await scenario("backup")).log;
    const image = (buffer) => ({ type: "image", source: { type: "base64", media_type: "image/png", data: buffer.toString("base64") } });
    assert.deepEqual(withParts(served), [
      [image(SUNSET), { type: "text", text: "What colour is this?" }],
      [image(SEA), { type: "text", text: "And this one?" }],
    ], "Anthropic Messages: base64 image blocks");
  });

  test("a file that is not an image the providers read, or too large, is refused with the reason, and nothing is sent", async () => {
    const messages = await page.locator(".msg.user").count();
    const requests = (await scenario("primary")).requests;
    /** Waits until the refusal names `name`. */
    const refusedFile = (name) => page.waitForFunction((name) => {
      const box = document.getElementById("attach-error");
      return !box.hidden && box.textContent.includes(name);
    }, name, { timeout: 5000 });
    const refusals = [
      [{ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("not a picture") },
        /^“notes\.txt” is not an image \(text\/plain\), so it was not attached: attach a PNG, JPEG or WebP image\.$/],
      [{ name: "fake.png", mimeType: "image/png", buffer: Buffer.from("not a picture either") },
        /^“fake\.png” is named as a PNG image but its content is not a PNG, JPEG or WebP image, so it was not attached\.$/],
      [{ name: "logo.svg", mimeType: "image/svg+xml", buffer: Buffer.from("<svg xmlns='http://www.w3.org/2000/svg'/>") },
        /^“logo\.svg” is an image of type image\/svg\+xml, which not every provider reads, so it was not attached: attach a PNG, JPEG or WebP image/],
      [{ name: "huge.png", mimeType: "image/png", buffer: Buffer.concat([SUNSET, Buffer.alloc(4 * 1024 * 1024 - SUNSET.length)]) },
        /^“huge\.png” is 4 MB, above the 3\.75 MB an image may be \(5 MB once base64-encoded, the most Anthropic takes per image\), so it was not attached: attach a smaller image\.$/],
    ];
    for (const [file, message] of refusals) {
      await page.setInputFiles("#attach-input", file);
      await refusedFile(file.name);
      assert.match(await attachError(), message);
      assert.deepEqual(await staged(), [], `${file.name} was not attached`);
      if (file.name === "notes.txt") await shot("12-refused");
    }
    assert.equal(await page.getAttribute("#attach-error", "role"), "alert", "a screen reader says it at once");
    assert.ok(await drop([{ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("dropped text") }]));
    await refusedFile("notes.txt");
    assert.match(await attachError(), /^“notes\.txt” is not an image/);
    await page.press("#prompt", "Enter"); // no text, no image: nothing to send
    assert.ok(!(await busy()));
    assert.equal(await page.locator(".msg.user").count(), messages, "no message was added");
    assert.equal((await scenario("primary")).requests, requests, "nothing reached the provider");
  });

  test("a pasted image is staged too, and a staged image can be removed from the keyboard", async () => {
    await page.setInputFiles("#attach-input", { name: "sunset.png", mimeType: "image/png", buffer: SUNSET });
    const pasted = await page.evaluate((data) => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([Uint8Array.from(atob(data), (c) => c.charCodeAt(0))], "sea.png", { type: "image/png" }));
      return !document.getElementById("prompt").dispatchEvent(new ClipboardEvent("paste", { clipboardData: transfer, bubbles: true, cancelable: true }));
    }, SEA.toString("base64"));
    assert.ok(pasted, "the page took the paste");
    await page.waitForFunction(() => document.querySelectorAll("#attachments .attachment").length === 2);
    assert.equal(await page.inputValue("#prompt"), "", "the image's name was not pasted as text");
    assert.equal(await attachError(), null, "a good file clears the last refusal");
    await page.focus('#attachments button[aria-label="Remove sunset.png"]');
    await page.keyboard.press("Enter");
    assert.deepEqual((await staged()).map((row) => row.split(" | ")[0]), ["sea.png"]);
    assert.equal(await page.textContent("#announcer"), "Removed sunset.png.");
    assert.equal(await page.evaluate(() => document.activeElement.ariaLabel), "Remove sea.png", "focus moves to the next remove button");
    await page.keyboard.press("Enter");
    assert.deepEqual(await staged(), []);
    assert.ok(await page.isHidden("#attachments"));
    assert.equal(await page.evaluate(() => document.activeElement.id), "prompt");
    assert.equal(await page.getAttribute("#attach", "aria-label"), "Attach an image");
    assert.equal(await page.getAttribute("#attach-input", "accept"), "image/png,image/jpeg,image/webp");
  });

  test("the page fits a phone-width screen", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), "no horizontal scrolling");
    await page.evaluate(() => document.getElementById("log").scrollTo(0, 1e6));
    await shot("08-phone", { fullPage: true });
    await page.click("#open-settings");
    await shot("09-phone-settings");
    await page.click("#cancel-settings");
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  /**
   * axe-core's WCAG 2.2 AA violations on `p` as it is now, one line per failing element: the
   * rule's id and impact, the element (a CSS selector), the rule's summary and what failed. axe is
   * evaluated through the DevTools protocol, which the page's CSP (no inline script) does not
   * govern, so the page is checked under its real CSP.
   */
  async function axeViolations(p) {
    // A colour change (a switch to dark mode, a hover) fades in over 0.12 s: check the settled colours.
    await p.waitForFunction(() => !document.getAnimations().some((a) => a instanceof CSSTransition && a.playState === "running"));
    if (!(await p.evaluate(() => typeof window.axe === "object"))) await p.evaluate(await readFile(AXE, "utf8"));
    const violations = await p.evaluate((tags) => window.axe.run(document, { runOnly: { type: "tag", values: tags } })
      .then((r) => r.violations.map((v) => ({
        id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.map((n) => ({ target: n.target.join(" "), summary: n.failureSummary })),
      }))), WCAG_AA);
    return violations.flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}) at ${n.target}: ${v.help}. ${n.summary.replace(/\s+/g, " ")}`));
  }

  /** The one `<h1>`'s accessible name, failing if the page has none or several. */
  async function h1(p) {
    assert.equal(await p.locator("h1").count(), 1, "one <h1>");
    return p.getByRole("heading", { level: 1 }).evaluate((el) => el.textContent.replace(/\s+/g, " ").trim());
  }

  /** Where the panel is against the conversation, and which of the intro's two sentences shows. */
  const layout = (p) => p.evaluate(() => {
    const box = (sel) => document.querySelector(sel).getBoundingClientRect();
    const shown = (sel) => document.querySelector(sel).checkVisibility();
    const [chat, panel] = [box(".chat"), box("#panel")];
    return {
      panel: panel.left >= chat.right - 1 ? "right" : panel.top >= chat.bottom - 1 ? "below" : "overlapping",
      says: shown(".intro .wide-only") && !shown(".intro .narrow-only") ? "on the right"
        : shown(".intro .narrow-only") && !shown(".intro .wide-only") ? "below the conversation" : "both or neither",
    };
  });

  test("axe-core finds no WCAG 2.2 AA violation: desktop and phone, light and dark, before, during and after an answer, Settings open", async (t) => {
    const fresh = await open();
    const found = {};
    /** Checks `fresh` as it is now under `name`, with a screenshot of what axe saw. */
    const check = async (name, options = {}) => {
      const violations = await axeViolations(fresh);
      t.diagnostic(`${name}: ${violations.length} violation(s)`);
      if (violations.length > 0) found[name] = violations;
      await fresh.screenshot({ path: `${ARTIFACTS}a11y-${name}.png`, ...options });
    };
    const inSettings = async (name) => {
      await fresh.click("#open-settings");
      const clipped = await fresh.$$eval("#settings button, #settings input", (els) => {
        const dialog = document.getElementById("settings").getBoundingClientRect();
        return els.map((el) => [el.id || el.textContent, el.getBoundingClientRect()])
          .filter(([, box]) => box.left < dialog.left || box.right > dialog.right).map(([id]) => id);
      });
      assert.deepEqual(clipped, [], `${name}: controls cut off at the dialog's edge`);
      await check(name);
      await fresh.click("#cancel-settings");
    };
    /** Settings showing a config error on its line (the red gutter number and message). */
    const withConfigError = async (name) => {
      await fresh.click("#open-settings");
      await fresh.fill("#config-text", (await fresh.inputValue("#config-text")).replace('"idleMs": 2000', '"idleMs": 0'));
      await fresh.click("#apply-settings");
      await fresh.locator("#config-error").waitFor({ state: "visible" });
      await check(name);
      await fresh.click("#cancel-settings");
    };
    try {
      assert.equal(await h1(fresh), "llm-baton chat");
      assert.deepEqual(await layout(fresh), { panel: "right", says: "on the right" });
      await check("desktop-empty");
      await fresh.click('[data-fault="503x2"]');
      await check("desktop-fault-armed");
      await fresh.click('[data-fault="503x2"]');
      await inSettings("desktop-settings");
      await withConfigError("desktop-settings-config-error");
      await fresh.setViewportSize(PHONE);
      assert.deepEqual(await layout(fresh), { panel: "below", says: "below the conversation" });
      await check("phone-empty", { fullPage: true });
      // The intro's link brings the panel up, its first card clear of the sticky top bar.
      await fresh.click(".intro .narrow-only a");
      await fresh.waitForFunction(() => document.querySelector("#faults-card").getBoundingClientRect().top < 844);
      const card = await fresh.locator("#faults-card").boundingBox();
      const bar = await fresh.locator(".topbar").boundingBox();
      assert.ok(card.y >= bar.y + bar.height, `the Demo faults card (top ${card.y}) is not under the top bar (bottom ${bar.y + bar.height})`);
      await inSettings("phone-settings");
      await fresh.setViewportSize(DESKTOP);

      // A real answer (checked while it streams: the Stop button, a live attempt), then one through
      // a failover: the badges of every outcome are on screen.
      await fresh.fill("#prompt", "Is this page accessible?");
      await fresh.press("#prompt", "Enter");
      await fresh.waitForFunction(() => document.querySelector(".msg.assistant .text")?.textContent.length > 20, null, { timeout: 5000 });
      await check("desktop-streaming");
      await fresh.waitForFunction(() => !document.body.classList.contains("busy"), null, { timeout: ANSWER_MS });
      await ask("And after a failover?", "400", fresh);
      assert.equal(await fresh.locator("#intro").count(), 0, "the intro is gone once the conversation starts");
      assert.equal(await h1(fresh), "llm-baton chat", "the <h1> stays after the first message");
      assert.deepEqual(await fresh.$$eval("#timeline .row-outcome, #targets .breaker-state", (els) => els.map((el) => el.textContent)),
        ["http 400", "ok", "closed", "closed"]);
      await check("desktop-answered");
      await fresh.setViewportSize(PHONE);
      await fresh.evaluate(() => document.getElementById("log").scrollTo(0, 1e6));
      await check("phone-answered", { fullPage: true });
      await inSettings("phone-answered-settings");
      await fresh.setViewportSize(DESKTOP);

      await fresh.emulateMedia({ colorScheme: "dark" });
      await check("dark-desktop-answered");
      await inSettings("dark-desktop-settings");
      await withConfigError("dark-desktop-settings-config-error");
      await fresh.setViewportSize(PHONE);
      await check("dark-phone-answered", { fullPage: true });
    } finally {
      await fresh.close();
    }
    assert.deepEqual(found, {}, `axe-core found violations:\n${Object.entries(found).map(([name, lines]) => `${name}:\n  ${lines.join("\n  ")}`).join("\n")}`);
  });

  test("no console errors", () => {
    assert.deepEqual(consoleErrors, []);
  });
});
