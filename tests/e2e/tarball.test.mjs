// The package as users get it: `make package`'s tarball (scripts/package.mjs, packed here into a
// temporary folder), installed with npm into a fresh project that never saw this repository, with
// no registry and an empty npm cache, then run there on every Node the machine has (20, and the
// 22 and 24 of tests/node-versions) and in Deno. Also: its file list, README, licenses and metadata, its size,
// and what publint and @arethetypeswrong/cli (the pinned devDependencies) say of it.
//
// ESM only, as the README says: the package ships ES modules and no CommonJS build. Node 20.19+,
// 22.12+ and 24 load it from CommonJS anyway (`require(esm)`, which works because no module of the
// Node entries awaits at the top level); where that is off (older Node, or
// --no-experimental-require-module) `require` fails with ERR_REQUIRE_ESM, and `await import()`
// works everywhere. The last tests hold each of these statements on each Node.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { publint } from "publint";
import { formatMessage } from "publint/utils";
import { absoluteLinks, buildPackage, packageReadme, repo, repositoryUrl } from "../../scripts/package.mjs";
import { startProvider } from "./provider.mjs";
import { chatSseText } from "./calls.mjs";
import { startBedrock } from "./local_bedrock.mjs";
import { API_KEY, CLAUDE, CLAUDE_TEXT, REGION } from "./bedrock_scenarios.mjs";

const execFileAsync = promisify(execFile);

/**
 * Every file the tarball holds, and nothing else (no tests, no source maps, no wasm-bindgen
 * .d.ts, no stale build output). A file added to pkg/ that users need goes here and into
 * pkg/package.json "files".
 */
const PACKAGE_FILES = [
  "LICENSE-APACHE",
  "LICENSE-MIT",
  "README.md",
  "ai-sdk.d.ts",
  "bin/llm-baton-gateway.js",
  "ai-sdk.js",
  "broadcast.js",
  "browser.js",
  "clouds/browser.js",
  "clouds/deno.js",
  "clouds/index.d.ts",
  "clouds/node.js",
  "clouds/workerd.js",
  "core.js",
  "deno.js",
  "durable.d.ts",
  "durable.js",
  "gateway.d.ts",
  "gateway.js",
  "gateway/api.js",
  "gateway/browser.js",
  "gateway/clouds/browser.js",
  "gateway/clouds/deno.js",
  "gateway/clouds/index.d.ts",
  "gateway/clouds/node.js",
  "gateway/clouds/workerd.js",
  "gateway/cluster.js",
  "gateway/deno.js",
  "gateway/env.d.ts",
  "gateway/env.js",
  "gateway/json-text.js",
  "gateway/metrics-link.js",
  "gateway/metrics.js",
  "gateway/node-exchange.js",
  "gateway/node-fetch.js",
  "gateway/node-server.d.ts",
  "gateway/node-server.js",
  "gateway/node.js",
  "gateway/redis.d.ts",
  "gateway/redis.js",
  "gateway/resp.js",
  "gateway/workerd.js",
  "host.js",
  "index.d.ts",
  "node.js",
  "package.json",
  "telemetry.js",
  "wasm/llm_baton.js",
  "wasm/llm_baton_bg.wasm",
  "wasm/llm_baton_clouds.js",
  "wasm/llm_baton_clouds_bg.wasm",
  "wasm/llm_baton_gateway.js",
  "wasm/llm_baton_gateway_bg.wasm",
  "wasm/llm_baton_gateway_clouds.js",
  "wasm/llm_baton_gateway_clouds_bg.wasm",
  "wasm_files.js",
  "wasm_files_clouds.js",
  "workerd.js",
];

/**
 * Bytes: the .tgz a user downloads, and what it unpacks to in node_modules. A little above today's
 * (867.7 KB packed, 2,151.8 KB unpacked, 58 files, with issue 40's Node path without WHATWG
 * objects (node-exchange.js, node-fetch.js); 860.9 KB packed, 2,129.8 KB unpacked, 53 files, with issue 39's clouds in two more wasm builds
 * (an app loads one of the four; the clouds' code is in two), issue 40's /metrics, workers and
 * Redis store; 423.1 KB packed, 1,072.8 KB unpacked, 35 files, with issue 38's drop-in surfaces and the gateway's
 * /healthz, preflight reasons and access log; 409.8 / 1,044.0
 * KB before them, 410.7 / 1,042.8 KB before read buffers were kept
 * from body to body and one reader served the providers' whole answers, 420.3 / 1,069.1 KB before
 * the gateway's wasm left the Baton's API out, 423.7 / 1,076.7 KB before the task loop's HashMap
 * became a list by id, 430.1 / 1,093.4 KB before four BTreeMap types became sorted lists, 433.0 /
 * 1,100.3 KB before short import names and the float parser built for size, 452.6 / 1,110.6 KB
 * before the float parser's table left both wasm files, 427.7 / 1,084.2 KB before the gateway's
 * clients got reasoning state and the AI SDK model kept it); most of it is the two wasm files,
 * which package_size.test.mjs holds too. Lower them as the package shrinks.
 */
const BUDGET = { packed: 869_000, unpacked: 2_153_000 };

/** The Node binaries to install and run the package on: this one, then 22 and 24 where present. */
const NODES = [
  process.execPath,
  ...[22, 24].map((v) => join(repo, `tests/node-versions/node_modules/node${v}/bin/node`)).filter((bin) => existsSync(bin)),
];

/** A first user's program: the README's fallback chain, through a Baton and through the gateway. */
const APP = `import { Baton, BatonError } from "llm-baton";
import { createGateway } from "llm-baton/gateway";

const provider = process.env.PROVIDER_URL;
const config = {
  targets: {
    primary: { format: "openai_chat", baseUrl: provider + "/s/" + process.env.PRIMARY + "/v1", model: "gpt-4o-mini" },
    backup: { format: "anthropic_messages", baseUrl: provider + "/s/" + process.env.BACKUP + "/v1", model: "claude-haiku-4-5" },
  },
  routes: { chat: { fallback: [{ retry: "primary", attempts: 1 }, "backup"] } },
  deadlineMs: 10000,
  gateway: { apiKeys: [process.env.GATEWAY_KEY] },
};

const baton = new Baton(config);
const c = await baton.complete("chat", { messages: [{ role: "user", content: "Ping" }], maxTokens: 32 });

const gateway = createGateway(config);
const res = await gateway.fetch(new Request("http://localhost/v1/chat/completions", {
  method: "POST",
  headers: { "content-type": "application/json", authorization: "Bearer " + process.env.GATEWAY_KEY },
  body: JSON.stringify({ model: "chat", messages: [{ role: "user", content: "Ping" }] }),
}));
const answer = await res.json();

console.log(JSON.stringify({
  entries: [import.meta.resolve("llm-baton"), import.meta.resolve("llm-baton/gateway")],
  batonError: typeof BatonError,
  text: c.text,
  target: c.target,
  legs: c.legs.map((leg) => leg.target + " " + leg.outcome),
  gateway: [res.status, answer.choices?.[0]?.message?.content],
}));
`;

/**
 * A user of the clouds: Claude on Bedrock (a Bedrock API key, against the local Bedrock) through
 * llm-baton/clouds and llm-baton/gateway/clouds, in a process of its own.
 */
const CLOUDS_APP = `import { Baton } from "llm-baton/clouds";
import { createGateway } from "llm-baton/gateway/clouds";

const config = {
  targets: { claude: { format: "anthropic_messages", cloud: "bedrock", region: process.env.REGION, baseUrl: process.env.BEDROCK_URL, model: process.env.MODEL, apiKey: process.env.BEDROCK_KEY } },
};
const c = await new Baton(config).complete("claude", { messages: [{ role: "user", content: "Say hello" }] });
const res = await createGateway(config).fetch(new Request("http://localhost/v1/messages", {
  method: "POST",
  headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
  body: JSON.stringify({ model: "claude", max_tokens: 64, messages: [{ role: "user", content: "Say hello" }] }),
}));
const answer = await res.json();
console.log(JSON.stringify({
  entries: [import.meta.resolve("llm-baton/clouds"), import.meta.resolve("llm-baton/gateway/clouds")],
  text: c.text,
  gateway: [res.status, answer.content?.map((b) => b.text).join("")],
}));
`;

/** The same target given to llm-baton, which has no cloud code: the config error a user sees. */
const LEAN_APP = `import { Baton, BatonError } from "llm-baton";

try {
  new Baton({ targets: { claude: { format: "anthropic_messages", cloud: "bedrock", region: "us-east-1", model: "m", apiKey: "k" } } });
  console.log(JSON.stringify({ refused: false }));
} catch (e) {
  console.log(JSON.stringify({ refused: e instanceof BatonError, kind: e.kind, path: e.path, message: e.message }));
}
`;

/**
 * A TypeScript user's file (`.mts`: an ES module in a project without "type"). The
 * `@ts-expect-error` lines fail the check if the types were `any`. llm-baton/ai-sdk is left out: its
 * types need @ai-sdk/provider, which this offline project lacks (types_check_ai_sdk.ts checks them).
 */
const TYPED = `import { Baton, BatonError, type Completion, type Config } from "llm-baton";
import { BatonError as GatewayBatonError, createGateway, HealthState, type Gateway } from "llm-baton/gateway";
import * as gatewayEntry from "llm-baton/gateway";
import { durableHealthStore } from "llm-baton/durable";

const config: Config = { targets: { t: { format: "openai_chat", baseUrl: "http://127.0.0.1:1/v1", model: "m" } }, deadlineMs: 1000 };
export const answer: Promise<Completion> = new Baton(config).complete("t", { messages: [{ role: "user", content: "hi" }] });
export const gateway: Gateway = createGateway(config);
export const shared = new HealthState().snapshot();
// @ts-expect-error: a Baton is llm-baton's; llm-baton/gateway's wasm has the gateway only
export const noBaton = gatewayEntry.Baton;
export const kind = (e: unknown) => (e instanceof BatonError || e instanceof GatewayBatonError ? e.kind : undefined);
export const store = durableHealthStore;
// @ts-expect-error: no such format
export const wrong: Config = { targets: { t: { format: "smoke_signals", baseUrl: "http://x", model: "m" } } };
// @ts-expect-error: complete() takes a route name and a request
new Baton(config).complete({ messages: [] });
`;

/** Runs `command ...args` in `cwd`; returns `{ status, stdout, stderr }`. */
function run(command, args, { cwd, env = {} }) {
  const r = spawnSync(command, args, { cwd, env: { ...process.env, NODE_OPTIONS: "", ...env }, encoding: "utf8", timeout: 60_000 });
  return { status: r.status, stdout: r.stdout.trim(), stderr: r.stderr.trim() };
}

/** `run` without blocking this process, whose own servers (the local Bedrock) the command calls. */
async function runAsync(command, args, { cwd, env = {} }) {
  const options = { cwd, env: { ...process.env, NODE_OPTIONS: "", ...env }, encoding: "utf8", timeout: 60_000 };
  return execFileAsync(command, args, options).then(
    ({ stdout, stderr }) => ({ status: 0, stdout: stdout.trim(), stderr: stderr.trim() }),
    (e) => ({ status: e.code ?? 1, stdout: String(e.stdout ?? "").trim(), stderr: String(e.stderr ?? e.message).trim() }),
  );
}

const version = (node) => execFileSync(node, ["--version"], { encoding: "utf8" }).trim();

test("the packed README's links: relative ones made absolute, the rest left alone", () => {
  const base = "https://github.com/llm-baton/llm-baton";
  const isDirectory = (path) => ["examples/gateway", "docs"].includes(path);
  const cases = [
    ["[Config](docs/config.md#timeouts)", `[Config](${base}/blob/main/docs/config.md#timeouts)`],
    ["[the Worker](./examples/gateway/)", `[the Worker](${base}/tree/main/examples/gateway)`],
    ['![results](bench/results.svg "the bench")', `![results](https://raw.githubusercontent.com/llm-baton/llm-baton/main/bench/results.svg "the bench")`],
    ["[`code` in the text](/wire/src/lib.rs)", `[\`code\` in the text](${base}/blob/main/wire/src/lib.rs)`],
    ["[errors]: docs/errors.md", `[errors]: ${base}/blob/main/docs/errors.md`],
    ['<img src="www/shot.png"> <a href="#resume">', `<img src="https://raw.githubusercontent.com/llm-baton/llm-baton/main/www/shot.png"> <a href="#resume">`],
    ["[Resume](#resume), [AI SDK](https://ai-sdk.dev), [mail](mailto:a@b.c)", "[Resume](#resume), [AI SDK](https://ai-sdk.dev), [mail](mailto:a@b.c)"],
    ['`baton[Symbol.for("x")](docs)` and `[a](b.md)`', '`baton[Symbol.for("x")](docs)` and `[a](b.md)`'],
    ["```js\n[not](a-link.md)\n```\n[a](b.md)", `\`\`\`js\n[not](a-link.md)\n\`\`\`\n[a](${base}/blob/main/b.md)`],
  ];
  for (const [markdown, expected] of cases) assert.equal(absoluteLinks(markdown, { base, isDirectory }), expected, markdown);
  assert.throws(() => absoluteLinks("[up](../other/README.md)", { base }), /README\.md links to \.\.\/other\/README\.md, outside the repository/);
});

describe("the tarball", () => {
  let dir;
  let tarball;
  let project;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "llm-baton-tarball-"));
    ({ tarball } = buildPackage({ outDir: join(dir, "dist") }));
    // A CommonJS project ("type" absent), as `npm init -y` makes, installing the tarball offline:
    // a bogus registry and an empty cache, so nothing could come from anywhere else.
    project = join(dir, "first-install");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "first-install", version: "1.0.0", private: true }));
    const offline = ["--offline", "--registry=http://127.0.0.1:9/", `--cache=${join(dir, "npm-cache")}`, "--no-audit", "--no-fund"];
    execFileSync("npm", ["install", ...offline, tarball], { cwd: project, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const installed = (file) => join(project, "node_modules/llm-baton", file);
  const installedFiles = (sub = "") =>
    readdirSync(join(project, "node_modules/llm-baton", sub), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? installedFiles(`${sub}${e.name}/`) : [`${sub}${e.name}`],
    );

  test("is dist/llm-baton-<version>.tgz, as make package names it", () => {
    const { version } = JSON.parse(readFileSync(join(repo, "pkg/package.json"), "utf8"));
    assert.equal(tarball, join(dir, "dist", `llm-baton-${version}.tgz`));
  });

  test("holds exactly the package's files", () => {
    const listed = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).trim().split("\n");
    const files = listed.map((f) => f.replace(/^package\//, "")).sort();
    const extra = files.filter((f) => !PACKAGE_FILES.includes(f));
    const missing = PACKAGE_FILES.filter((f) => !files.includes(f));
    assert.deepEqual({ extra, missing }, { extra: [], missing: [] }, "the tarball's files differ from PACKAGE_FILES");
    assert.ok(listed.every((f) => f.startsWith("package/")), "every entry is under package/");
    assert.deepEqual(installedFiles().sort(), [...PACKAGE_FILES].sort(), "npm installed the same files");
  });

  test("stays within its size budget", () => {
    const packed = statSync(tarball).size;
    const unpacked = PACKAGE_FILES.reduce((sum, f) => sum + statSync(installed(f)).size, 0);
    console.log(`${tarball}: ${packed} bytes packed, ${unpacked} bytes unpacked, ${PACKAGE_FILES.length} files (budget ${BUDGET.packed} / ${BUDGET.unpacked})`);
    assert.ok(packed <= BUDGET.packed, `the tarball is ${packed} bytes, over its budget of ${BUDGET.packed}`);
    assert.ok(unpacked <= BUDGET.unpacked, `the package unpacks to ${unpacked} bytes, over its budget of ${BUDGET.unpacked}`);
  });

  test("carries the root's licenses, and its README with links that work off GitHub", () => {
    for (const f of ["LICENSE-MIT", "LICENSE-APACHE"]) assert.equal(readFileSync(installed(f), "utf8"), readFileSync(join(repo, f), "utf8"), f);
    const manifest = JSON.parse(readFileSync(installed("package.json"), "utf8"));
    const base = repositoryUrl(manifest);
    const readme = readFileSync(installed("README.md"), "utf8");
    assert.equal(readme, packageReadme(manifest), "the README is the root's");
    // Outside code, every link is an anchor or absolute; each into the repository names a path it has.
    const prose = readme.replace(/^ {0,3}(`{3,}|~{3,})[^]*?^ {0,3}\1\s*$/gm, "").replace(/(`+)[^`][^]*?\1/g, "");
    const targets = [...prose.matchAll(/\]\(\s*<?([^)\s>]+)/g), ...prose.matchAll(/^ {0,3}\[[^\]]+\]:\s*(\S+)/gm)].map((m) => m[1]);
    const relative = targets.filter((t) => !/^([a-z][a-z0-9+.-]*:|#)/i.test(t));
    assert.deepEqual(relative, [], "relative links left in the packed README");
    const raw = base.replace("https://github.com/", "https://raw.githubusercontent.com/");
    const repoPath = (t) => {
      const m = t.startsWith(`${base}/`) ? /^(?:blob|tree)\/[^/]+\/?(.*)$/.exec(t.slice(base.length + 1))
        : t.startsWith(`${raw}/`) ? /^[^/]+\/(.*)$/.exec(t.slice(raw.length + 1)) : null;
      return m?.[1] ?? null;
    };
    const dead = targets.map((t) => t.replace(/[?#].*$/, "")).filter((t) => repoPath(t) !== null && !existsSync(join(repo, repoPath(t))));
    assert.deepEqual(dead, [], "README links into the repository that name no file of it");
  });

  test("package.json says what the package is, where it lives, and that it is ESM", () => {
    const manifest = JSON.parse(readFileSync(installed("package.json"), "utf8"));
    assert.equal(manifest.type, "module");
    assert.equal(manifest.license, "MIT OR Apache-2.0");
    assert.deepEqual(manifest.repository, { type: "git", url: "git+https://github.com/llm-baton/llm-baton.git", directory: "pkg" });
    assert.equal(manifest.homepage, "https://github.com/llm-baton/llm-baton#readme");
    assert.deepEqual(manifest.bugs, { url: "https://github.com/llm-baton/llm-baton/issues" });
    assert.ok(manifest.author && manifest.description && manifest.keywords?.length, "author, description and keywords");
    assert.ok(manifest.engines?.node, "engines.node");
    // Every file that exports, types and sideEffects name is in the package.
    const named = [manifest.types, ...manifest.sideEffects];
    const walk = (v) => (typeof v === "string" ? named.push(v) : Object.values(v).forEach(walk));
    walk(manifest.exports);
    const absent = named.filter((f) => !existsSync(installed(f)));
    assert.deepEqual(absent, [], "files package.json names that the package lacks");
    for (const [subpath, target] of Object.entries(manifest.exports)) {
      if (subpath === "./package.json") continue;
      assert.equal(Object.keys(target)[0], "types", `exports["${subpath}"] lists "types" first, as TypeScript needs`);
    }
  });

  test("publint finds nothing to say", async () => {
    const { messages, pkg } = await publint({ pack: { tarball: new Uint8Array(readFileSync(tarball)).buffer }, level: "suggestion", strict: true });
    const lines = messages.map((m) => `${m.type}: ${formatMessage(m, pkg)}`);
    console.log(`publint: ${lines.length ? lines.join("\n") : "no messages"}`);
    assert.deepEqual(lines, []);
  });

  test("@arethetypeswrong/cli: types for every entry and resolution; from CommonJS only the ESM-only warning", () => {
    // The package ships its own types: no @types/llm-baton to look up (nor any registry to ask).
    const attw = (...args) => spawnSync(join(repo, "node_modules/.bin/attw"), ["--no-definitely-typed", ...args, tarball], { encoding: "utf8" });
    const strict = attw("--format", "json");
    const { analysis } = JSON.parse(strict.stdout);
    // The one warning of the default ("strict") profile: under TypeScript's node16 resolution a
    // CommonJS file may import the package only with import(); TypeScript (5.6, attw's) does not
    // model Node's require(esm). It is what "ESM only" means, so it is expected, once per entry,
    // and any other problem fails here.
    const entries = [".", "./clouds", "./gateway", "./gateway/clouds", "./gateway/env", "./gateway/node-server", "./gateway/redis", "./durable", "./ai-sdk"];
    assert.deepEqual(Object.keys(analysis.entrypoints), [...entries, "./package.json"], "the entries attw found");
    assert.deepEqual(
      analysis.problems,
      entries.map((entrypoint) => ({ kind: "CJSResolvesToESM", entrypoint, resolutionKind: "node16-cjs" })),
    );
    // The profile for an ESM-only package: no problem at all, and every resolution has types.
    const esmOnly = attw("--profile", "esm-only", "--format", "ascii");
    console.log(esmOnly.stdout);
    assert.equal(esmOnly.status, 0, `attw --profile esm-only failed:\n${esmOnly.stdout}${esmOnly.stderr}`);
    for (const name of entries) {
      const entry = analysis.entrypoints[name];
      for (const kind of ["node10", "node16-cjs", "node16-esm", "bundler"]) {
        assert.ok(entry.resolutions[kind]?.resolution?.isTypeScript, `attw: "${name}" under ${kind} resolves to its .d.ts`);
      }
    }
  });

  test("TypeScript (strict, skipLibCheck off) type-checks a program against it, with bundler and node16 resolution", async () => {
    writeFileSync(join(project, "typed.mts"), TYPED);
    const check = (moduleResolution) => {
      const module = moduleResolution === "bundler" ? "esnext" : moduleResolution;
      const compilerOptions = { module, moduleResolution, target: "es2022", lib: ["es2022", "dom"], types: [], strict: true, noEmit: true, skipLibCheck: false };
      writeFileSync(join(project, `tsconfig.${moduleResolution}.json`), JSON.stringify({ compilerOptions, files: ["typed.mts"] }));
      // The TypeScript that @arethetypeswrong/cli brings (5.6, pinned through the lockfile).
      return execFileAsync(process.execPath, [join(repo, "node_modules/typescript/bin/tsc"), "-p", `tsconfig.${moduleResolution}.json`], { cwd: project })
        .then(() => null, (e) => `${moduleResolution}: ${e.stdout}${e.stderr}`);
    };
    const failures = (await Promise.all(["bundler", "node16"].map(check))).filter(Boolean);
    assert.deepEqual(failures, [], "tsc reported errors");
  });

  describe("installed in a fresh CommonJS project, run from a .mjs file", () => {
    let provider;
    before(async () => {
      provider = await startProvider();
      writeFileSync(join(project, "app.mjs"), APP);
    });
    after(() => provider?.stop());

    let serial = 0;
    const scenario = async (steps) => {
      const id = `tarball-${process.pid}-${++serial}`;
      const res = await fetch(`${provider.url}/_scenarios/${id}`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ steps }),
      });
      assert.equal(res.status, 200, await res.text());
      return id;
    };

    // Each runtime that resolves "llm-baton" from node_modules by itself, and the entry it must pick.
    const runtimes = [
      ...NODES.map((node) => ({ name: `Node ${version(node)}`, command: [node, "app.mjs"], entry: "node.js" })),
      {
        name: "Deno (npm's node_modules, no npm: specifier)",
        command: [join(repo, "node_modules/.bin/deno"), "run", "--no-lock", "--allow-net=127.0.0.1", "--allow-read", "--allow-env", "app.mjs"],
        entry: "deno.js",
        env: { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
      },
    ];
    for (const { name, command, entry, env: runtimeEnv } of runtimes) {
      test(`on ${name}: llm-baton/clouds reaches Claude on Bedrock, through a Baton and the gateway; llm-baton refuses it naming that entry`, async () => {
        writeFileSync(join(project, "clouds.mjs"), CLOUDS_APP);
        writeFileSync(join(project, "lean.mjs"), LEAN_APP);
        const bedrock = await startBedrock();
        try {
          const env = { ...runtimeEnv, BEDROCK_URL: bedrock.url, BEDROCK_KEY: API_KEY, REGION, MODEL: CLAUDE };
          const r = await runAsync(command[0], [...command.slice(1, -1), "clouds.mjs"], { cwd: project, env });
          assert.equal(r.status, 0, `clouds.mjs exited ${r.status}:\n${r.stderr}`);
          const entries = [`file://${installed(`clouds/${entry}`)}`, `file://${installed(`gateway/clouds/${entry}`)}`];
          assert.deepEqual(JSON.parse(r.stdout), { entries, text: CLAUDE_TEXT, gateway: [200, CLAUDE_TEXT] });
          assert.equal(bedrock.seen.filter((s) => s.path.endsWith("/invoke")).length, 2, "the Baton's and the gateway's request reached Bedrock");
        } finally {
          bedrock.stop();
        }
        const lean = run(command[0], [...command.slice(1, -1), "lean.mjs"], { cwd: project, env: runtimeEnv });
        assert.equal(lean.status, 0, lean.stderr);
        const refusal = JSON.parse(lean.stdout);
        assert.deepEqual([refusal.refused, refusal.kind, refusal.path], [true, "config", "targets.claude.cloud"]);
        assert.match(refusal.message, /import from "llm-baton\/clouds"/);
      });

      test(`on ${name}: a Baton call fails over, and the gateway answers`, async () => {
        const env = {
          ...runtimeEnv,
          PROVIDER_URL: provider.url,
          GATEWAY_KEY: "first-install-key",
          PRIMARY: await scenario([{ status: 503, message: "overloaded" }]),
          BACKUP: await scenario([{ text: "Pong." }]),
        };
        const r = run(command[0], command.slice(1), { cwd: project, env });
        assert.equal(r.status, 0, `app.mjs exited ${r.status}:\n${r.stderr}`);
        assert.equal(r.stderr, "", "no warning");
        const out = JSON.parse(r.stdout);
        const entries = [`file://${installed(entry)}`, `file://${installed(`gateway/${entry}`)}`];
        assert.deepEqual(out.entries, entries, "resolved into the installed package");
        const expected = { batonError: "function", text: "Pong.", target: "backup", legs: ["primary http", "backup ok"], gateway: [200, "Pong."] };
        assert.deepEqual(out, { entries, ...expected });
      });
    }
  });

  // The README's gateway command, as a user runs it in the project: npm runs the bin under
  // `sh -c`. A supervisor's SIGTERM goes to npm alone, and ends npm and the shell but never reaches
  // node, which watches for its parent's exit; Ctrl-C in a terminal sends SIGINT to the whole
  // foreground process group, node included.
  describe("`npx llm-baton-gateway`, stopped as a supervisor and a terminal stop it", () => {
    let provider;
    before(async () => {
      provider = await startProvider();
    });
    after(() => provider?.stop());

    const stops = [
      // A worker per core: the one serving the stream says so (a single process, without "(worker N)").
      ["SIGTERM to npx's process", "SIGTERM", false, /llm-baton-gateway( \(worker \d+\))?: npm \(process \d+\) exited: no longer accepting connections; finishing 1 request\(s\) in flight/],
      ["Ctrl-C: SIGINT to its process group", "SIGINT", true, /llm-baton-gateway( \(worker \d+\))?: SIGINT: no longer accepting connections; finishing 1 request\(s\) in flight/],
    ];
    for (const [how, signal, group, said] of stops) {
      test(`${how}: the gateway stops accepting, finishes the stream in flight and exits`, async () => {
        const key = "npx-key";
        const id = `tarball-npx-${signal}-${process.pid}`;
        const words = Array.from({ length: 20 }, (_, i) => `w${i}`).join(" ");
        const put = await fetch(`${provider.url}/_scenarios/${id}`, { method: "PUT", body: JSON.stringify({ steps: [{ text: words, chunks: 20, chunkDelayMs: 60 }] }) });
        assert.equal(put.status, 200, await put.text());
        const target = { format: "openai_chat", baseUrl: `${provider.url}/s/${id}/v1`, model: "m", apiKey: "sk-npx" };
        writeFileSync(join(project, "baton.json"), JSON.stringify({ targets: { slow: target }, gateway: { apiKeys: [key] }, health: false }));
        const env = { PATH: process.env.PATH, HOME: process.env.HOME, npm_config_update_notifier: "false", npm_config_cache: join(project, ".npm-cache"), npm_config_offline: "true" };
        const npx = spawn("npx", ["llm-baton-gateway", "--config", "baton.json", "--port", "0"], { cwd: project, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
        // Its own process group, so that nothing of it (npm, the shell, the gateway) outlives the test.
        const killAll = () => {
          try {
            process.kill(-npx.pid, "SIGKILL");
          } catch {}
        };
        process.once("exit", killAll);
        let stdout = "";
        let stderr = "";
        npx.stderr.setEncoding("utf8").on("data", (c) => (stderr += c));
        // Closed once every process holding it (npm, its shell, the gateway's node) has exited.
        const closed = new Promise((resolve) => npx.stdout.on("close", () => resolve(performance.now())));
        const url = await new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no GATEWAY_URL line within 20 s: ${stdout} ${stderr}`)), 20_000);
          npx.stdout.setEncoding("utf8").on("data", (c) => {
            stdout += c;
            const m = /^GATEWAY_URL=(http:\/\/\S+)\n/m.exec(stdout);
            if (!m) return;
            clearTimeout(timer);
            resolve(m[1]);
          });
        });
        const res = await fetch(`${url}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "slow", stream: true, messages: [{ role: "user", content: "hi" }] }),
        });
        assert.equal(res.status, 200);
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let raw = (await reader.read()).value;
        if (group) process.kill(-npx.pid, signal);
        else npx.kill(signal);
        await new Promise((resolve) => setTimeout(resolve, 600));
        const refused = await fetch(`${url}/v1/models`).then(() => "answered", (e) => e.cause?.code ?? String(e));
        assert.equal(refused, "ECONNREFUSED", `a new connection after ${how}`);
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) raw += chunk.value;
        const ended = performance.now();
        const { text, done } = chatSseText(raw);
        assert.equal(text, words, "the stream in flight finished whole");
        assert.ok(done, "and ended with [DONE]");
        const exitedAt = await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 5000, Infinity))]);
        killAll();
        assert.ok(exitedAt - ended < 2000, `the gateway exited ${(exitedAt - ended).toFixed(0)} ms after its last stream ended`);
        assert.match(stderr, said);
      });
    }
  });

  describe("ESM only, from CommonJS", () => {
    before(() => {
      const required = [
        `const { Baton, BatonError } = require("llm-baton");`,
        `const { createGateway } = require("llm-baton/gateway");`,
        `console.log(typeof Baton, typeof BatonError, typeof createGateway);`,
      ];
      writeFileSync(join(project, "required.cjs"), required.join("\n") + "\n");
      writeFileSync(join(project, "imported.cjs"), `import("llm-baton").then(({ Baton }) => console.log(typeof Baton));\n`);
      writeFileSync(join(project, "index.js"), `import { Baton } from "llm-baton";\nconsole.log(typeof Baton);\n`);
    });

    for (const node of NODES) {
      const v = version(node);
      test(`on Node ${v}: require() loads it through require(esm), and fails with ERR_REQUIRE_ESM without it`, () => {
        const r = run(node, ["required.cjs"], { cwd: project });
        assert.equal(r.status, 0, `require("llm-baton") failed on Node ${v}:\n${r.stderr}`);
        assert.equal(r.stdout, "function function function");
        assert.equal(r.stderr, "", "no warning");
        const off = run(node, ["--no-experimental-require-module", "required.cjs"], { cwd: project });
        assert.notEqual(off.status, 0);
        const refused = /Error \[ERR_REQUIRE_ESM\]: require\(\) of ES Module .*node_modules\/llm-baton\/node\.js from .*required\.cjs not supported/;
        assert.match(off.stderr, refused);
      });

      test(`on Node ${v}: import() from CommonJS works; import syntax in a .js file of a CommonJS project runs with Node's reparse warning`, () => {
        const imported = run(node, ["imported.cjs"], { cwd: project });
        assert.deepEqual([imported.status, imported.stdout, imported.stderr], [0, "function", ""]);
        const js = run(node, ["index.js"], { cwd: project });
        assert.equal(js.status, 0, js.stderr);
        assert.equal(js.stdout, "function");
        assert.match(js.stderr, /MODULE_TYPELESS_PACKAGE_JSON/, "Node warns that the project's package.json has no \"type\"");
      });
    }
  });
});
