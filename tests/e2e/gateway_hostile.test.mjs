// The gateway against hostile upstreams and hostile clients (issue 10), in workerd, Deno and Node
// like gateway.test.mjs (which imports this file, so all run in one node:test run):
// an upstream that echoes the gateway's upstream key in its error bodies and in-stream errors,
// an upstream that refuses the gateway's credentials, a text/plain POST (a cross-site form),
// a preflight asking for headers the gateway does not take, `cors: ["*"]`, and an open gateway
// (no apiKeys), which must say so once when it is created.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createGateway } from "llm-baton/gateway";
import { putScenario, startProvider } from "./provider.mjs";
import { startDenoGateway, startNodeGateway, startWorkerdGateway } from "./gateway_hosts.mjs";

const repo = fileURLToPath(new URL("../../", import.meta.url));
const KEY = "gw-hostile-client-key";
const TAG = Math.random().toString(36).slice(2, 12);
const UPSTREAM_KEY = `sk-gw-hostile-${TAG}`;
const UPSTREAM_HEADER = `xs-gw-hostile-header-${TAG}`;
const SECRETS = [UPSTREAM_KEY, UPSTREAM_HEADER, TAG];
const ASK = [{ role: "user", content: "Say hello" }];
const HOSTS = { workerd: startWorkerdGateway, deno: startDenoGateway, node: startNodeGateway };

function hostileConfig(providerUrl, host, gateway) {
  const at = (name) => `${providerUrl}/s/${host}-h-${name}/v1`;
  const secret = { apiKey: UPSTREAM_KEY, headers: { "x-gateway-api-key": UPSTREAM_HEADER } };
  return {
    targets: {
      echo_oa: { format: "openai_chat", baseUrl: at("echo_oa"), model: "m", ...secret },
      echo_an: { format: "anthropic_messages", baseUrl: at("echo_an"), model: "m", ...secret },
      refused: { format: "openai_chat", baseUrl: at("refused"), model: "m", ...secret },
      plain: { format: "openai_chat", baseUrl: at("plain"), model: "m" },
    },
    deadlineMs: 5000,
    // health: false: every echo case is an error answer from the same target, and an open
    // breaker would keep the later cases from the upstream whose echo they check.
    health: false,
    gateway,
  };
}

function post(url, path, body, headers = {}) {
  return fetch(`${url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** A client request in either format, whole or streamed. */
function ask(client, model, stream) {
  return client === "openai"
    ? ["/v1/chat/completions", { model, messages: ASK, stream }]
    : ["/v1/messages", { model, max_tokens: 32, messages: ASK, stream }];
}

function assertNoSecret(text, what) {
  for (const secret of SECRETS) assert.ok(!text.includes(secret), `${what}: an upstream secret reached the client: ${text.slice(0, 600)}`);
}

let provider;
before(async () => {
  provider = await startProvider();
});
after(() => provider?.stop());

for (const [host, start] of Object.entries(HOSTS)) {
  describe(`gateway in ${host}, hostile`, { concurrency: 1 }, () => {
    let gw;
    let star;
    const id = (name) => `${host}-h-${name}`;
    before(async () => {
      gw = await start(hostileConfig(provider.url, host, { apiKeys: [KEY], cors: ["https://app.example"] }));
      star = await start(hostileConfig(provider.url, `${host}-star`, { apiKeys: [KEY], cors: ["*"] }));
    });
    after(async () => {
      await gw?.stop();
      await star?.stop();
    });

    test("an upstream that echoes the gateway's key: no client ever sees it (error bodies, in-stream errors, both formats)", async () => {
      const steps = {
        "error body": [{ status: 500, message: "upstream broke", echoCredentials: true }],
        "error before content": [{ text: "never", echoCredentials: true, streamError: { afterEvents: 0, message: "upstream broke" } }],
        "error after content": [{ text: "partial answer", echoCredentials: true, streamError: { afterEvents: 1, message: "upstream broke" } }],
      };
      const problems = [];
      for (const upstream of ["echo_oa", "echo_an"]) {
        for (const client of ["openai", "anthropic"]) {
          for (const [label, step] of Object.entries(steps)) {
            for (const stream of label === "error body" ? [false, true] : [true]) {
              await putScenario(provider.url, id(upstream), step);
              const [path, body] = ask(client, upstream, stream);
              const res = await post(gw.url, path, body);
              const text = await res.text();
              const what = `${upstream} -> ${client} client, ${label}${stream ? ", streamed" : ""} (HTTP ${res.status})`;
              const r = await (await fetch(`${provider.url}/_scenarios/${id(upstream)}`)).json();
              assert.ok(r.log[0]?.auth, `${what}: the upstream saw no key, so nothing was echoed`);
              try {
                assertNoSecret(text, what);
                assertNoSecret(JSON.stringify([...res.headers]), `${what}, headers`);
                assert.ok(text.includes("upstream broke"), `${what}: the provider's words should still reach the client: ${text.slice(0, 400)}`);
              } catch (e) {
                problems.push(e.message);
              }
            }
          }
        }
      }
      assert.deepEqual(problems, [], `${problems.length} case(s) leaked or lost the provider's words:\n${problems.join("\n")}`);
    });

    test("an upstream 401/403 reaches the client as 502 upstream_credentials_refused, never as 401", async () => {
      for (const status of [401, 403]) {
        await putScenario(provider.url, id("refused"), [{ status, message: "invalid api key" }]);
        for (const stream of [false, true]) {
          const res = await post(gw.url, "/v1/chat/completions", { model: "refused", messages: ASK, stream });
          const json = await res.json();
          assert.equal(res.status, 502, `upstream ${status}, stream ${stream}: ${JSON.stringify(json)}`);
          assert.equal(json.error?.type, "upstream_error", JSON.stringify(json));
          assert.equal(json.error?.code, "upstream_credentials_refused", JSON.stringify(json));
        }
        const res = await post(gw.url, "/v1/messages", { model: "refused", max_tokens: 16, messages: ASK });
        const json = await res.json();
        assert.equal(res.status, 502, `Anthropic client, upstream ${status}: ${JSON.stringify(json)}`);
        assert.notEqual(json.error?.type, "authentication_error", JSON.stringify(json));
      }
    });

    test("a POST that is not application/json is refused with 415 (no cross-site form posts)", async () => {
      await putScenario(provider.url, id("plain"), [{ text: "must not be asked" }]);
      for (const client of ["openai", "anthropic"]) {
        const [path, body] = ask(client, "plain", false);
        for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
          const res = await post(gw.url, path, JSON.stringify(body), { "content-type": type });
          const text = await res.text();
          assert.equal(res.status, 415, `${path} with ${type}: ${text}`);
        }
        const ok = await post(gw.url, path, body, { "content-type": "application/json; charset=utf-8" });
        assert.equal(ok.status, 200, `${path} with application/json; charset=utf-8: ${await ok.text()}`);
      }
      const r = await (await fetch(`${provider.url}/_scenarios/${id("plain")}`)).json();
      assert.equal(r.requests, 2, "only the two JSON posts reached the upstream");
    });

    test("a preflight asking for x-evil is not granted x-evil", async () => {
      const pre = await fetch(`${gw.url}/v1/chat/completions`, {
        method: "OPTIONS",
        headers: { origin: "https://app.example", "access-control-request-method": "POST", "access-control-request-headers": "x-evil, authorization" },
      });
      await pre.arrayBuffer();
      const allowed = (pre.headers.get("access-control-allow-headers") ?? "").toLowerCase();
      assert.ok(!allowed.includes("x-evil"), `access-control-allow-headers: ${allowed}`);
      assert.ok(!allowed.split(",").map((h) => h.trim()).includes("*"), `access-control-allow-headers: ${allowed}`);
    });

    test('cors: ["*"] allows any origin', async () => {
      for (const origin of ["https://anything.example", "http://localhost:5173"]) {
        const pre = await fetch(`${star.url}/v1/chat/completions`, {
          method: "OPTIONS",
          headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" },
        });
        await pre.arrayBuffer();
        assert.equal(pre.status, 204, origin);
        assert.ok(["*", origin].includes(pre.headers.get("access-control-allow-origin")), `${origin}: ${pre.headers.get("access-control-allow-origin")}`);
        const models = await fetch(`${star.url}/v1/models`, { headers: { origin, authorization: `Bearer ${KEY}` } });
        await models.arrayBuffer();
        assert.ok(["*", origin].includes(models.headers.get("access-control-allow-origin")), `GET /v1/models from ${origin}`);
      }
    });
  });
}

describe("gateway without apiKeys, hostile", () => {
  const config = { targets: { t: { format: "openai_chat", baseUrl: "http://127.0.0.1:9/v1", model: "m" } } };

  test("Node: createGateway without apiKeys warns once; with apiKeys, not at all", () => {
    const warnings = [];
    const warn = console.warn;
    console.warn = (...args) => warnings.push(args.map(String).join(" "));
    try {
      createGateway(config);
      assert.equal(warnings.length, 1, `console.warn calls for an open gateway: ${JSON.stringify(warnings)}`);
      assert.match(warnings[0], /apiKeys/);
      createGateway({ ...config, gateway: { apiKeys: [KEY] } });
      assert.equal(warnings.length, 1, `a gateway with apiKeys warned: ${JSON.stringify(warnings.slice(1))}`);
    } finally {
      console.warn = warn;
    }
  });

  test("Deno: createGateway without apiKeys warns once; with apiKeys, not at all", () => {
    const entry = new URL("pkg/gateway/deno.js", `file://${repo}`).href;
    const code = `import { createGateway } from ${JSON.stringify(entry)};
const warnings = [];
console.warn = (...args) => warnings.push(args.map(String).join(" "));
const config = ${JSON.stringify(config)};
createGateway(config);
const open = warnings.length;
createGateway({ ...config, gateway: { apiKeys: ["k"] } });
console.log(JSON.stringify({ open, total: warnings.length, first: warnings[0] ?? null }));`;
    const out = execFileSync(`${repo}node_modules/.bin/deno`, ["eval", "--no-lock", "--no-check", code], {
      cwd: repo,
      env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
    }).toString();
    const seen = JSON.parse(out.trim().split("\n").at(-1));
    assert.equal(seen.open, 1, `console.warn calls for an open gateway in Deno: ${out}`);
    assert.match(seen.first, /apiKeys/);
    assert.equal(seen.total, 1, `a gateway with apiKeys warned in Deno: ${out}`);
  });
});
