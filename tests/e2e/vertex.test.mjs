// Google Vertex AI, end to end against Google's and Anthropic's own code: in Node, then Deno,
// workerd and Chromium.
//
// The local Vertex (local_vertex.mjs) verifies each service account's JWT with
// google-auth-library against the public half of a key pair made at test time, and takes only
// the tokens it minted. @anthropic-ai/vertex-sdk, pointed at the same server, is the oracle for
// Anthropic on Vertex: what it sends passes the server's checks of the body and the URL, and what
// it reads, llm-baton reads the same, whole and streamed. The calls of vertex_scenarios.mjs then
// run against the same server in Node, Deno and workerd, and those with an access token in
// Chromium (a page must never hold a service account's key: docs/vertex.md).
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { AnthropicVertex } from "@anthropic-ai/vertex-sdk";
import { Baton, BatonError } from "llm-baton/clouds";
import { createGateway } from "llm-baton/gateway/clouds";
import { ACCESS_TOKEN, PROJECT, REGION, startVertex } from "./local_vertex.mjs";
import { ASK, CLAUDE_MODEL, CLAUDE_TEXT, freshAccount, mints, tokenScenarios, vertexTarget } from "./vertex_scenarios.mjs";
import { describeEverywhere } from "./everywhere.mjs";
import { chatSseText } from "./calls.mjs";

/** The SDK against the local Vertex with the fixed token (its googleAuth stands in for ADC). */
function sdk(vertex) {
  const authClient = { getRequestHeaders: async () => new Headers({ authorization: `Bearer ${ACCESS_TOKEN}` }) };
  return new AnthropicVertex({ baseURL: vertex.origin, region: REGION, projectId: PROJECT, authClient, maxRetries: 0 });
}

describe("vertex", () => {
  let vertex;
  before(async () => {
    vertex = await startVertex();
  });
  after(() => vertex?.stop());

  test("Anthropic on Vertex reads as @anthropic-ai/vertex-sdk reads it, and sends what the SDK sends, whole and streamed", async () => {
    const params = { model: CLAUDE_MODEL, max_tokens: 1024, system: "Be brief.", messages: [{ role: "user", content: "Say hello" }] };
    const whole = await sdk(vertex).messages.create(params);
    const sdkSent = vertex.seen.at(-1);
    const baton = new Baton({ targets: { c: vertexTarget(vertex.url, "anthropic_messages", CLAUDE_MODEL, { accessToken: ACCESS_TOKEN }) } });
    const out = await baton.complete("c", ASK);
    const batonSent = vertex.seen.at(-1);
    assert.equal(out.text, whole.content.map((b) => b.text).join(""));
    assert.equal(out.finishReason, "stop");
    assert.deepEqual(out.usage, { inputTokens: whole.usage.input_tokens, outputTokens: whole.usage.output_tokens });
    assert.equal(batonSent.path, sdkSent.path, "the SDK's URL: projects/…/publishers/anthropic/models/{model}:rawPredict");
    // Google's documented version; the SDK sends its own API version there, which Vertex takes too.
    assert.equal(batonSent.body.anthropic_version, "vertex-2023-10-16");
    assert.match(sdkSent.body.anthropic_version, /^\d{4}-\d\d-\d\d$/);
    assert.ok(!("model" in batonSent.body) && !("model" in sdkSent.body), "the model is in the URL only");
    assert.equal(batonSent.anthropicVersionHeader, undefined, "no anthropic-version header on Vertex");
    assert.deepEqual(batonSent.body.messages, sdkSent.body.messages);

    const stream = await sdk(vertex).messages.create({ ...params, stream: true });
    const sdkStreamSent = vertex.seen.at(-1);
    let sdkText = "";
    let stopReason;
    for await (const ev of stream) {
      if (ev.type === "content_block_delta") sdkText += ev.delta.text;
      if (ev.type === "message_delta") stopReason = ev.delta.stop_reason;
    }
    let text = "";
    let done;
    for await (const ev of baton.stream("c", ASK)) {
      if (ev.type === "text") text += ev.text;
      if (ev.type === "done") done = ev;
    }
    assert.equal(text, sdkText);
    assert.equal(sdkText, CLAUDE_TEXT);
    assert.equal([stopReason, done.finishReason].join(), "end_turn,stop");
    assert.equal(vertex.seen.at(-1).path, sdkStreamSent.path, ":streamRawPredict");
  });

  test("the local token endpoint's check is google-auth-library's: a key it did not issue is refused", async () => {
    const { generateKeyPairSync } = await import("node:crypto");
    const stranger = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" });
    const account = { ...freshAccount(vertex.serviceAccount()), private_key: stranger };
    const events = [];
    const baton = new Baton({ targets: { g: vertexTarget(vertex.url, "gemini", "gemini-2.5-flash", { serviceAccount: account }) } });
    const err = await baton.complete("g", ASK, { onEvent: (e) => events.push(e) }).then(() => null, (e) => e);
    assert.ok(err instanceof BatonError);
    assert.deepEqual([err.status, err.class, err.code], [400, "auth", "invalid_grant"]);
    assert.match(err.message, /token endpoint refused the service account's JWT with HTTP 400: invalid_grant: Invalid JWT Signature/);
    const shown = `${err.message} ${JSON.stringify(err)} ${JSON.stringify(events)}`;
    assert.ok(!shown.includes("PRIVATE KEY") && !shown.includes(stranger.split("\n")[1]), shown);
    assert.equal(await mints(vertex.url, account), 0);
  });

  test("a malformed key is a config error naming its field, never its value", () => {
    const key = vertex.serviceAccount();
    const body = key.private_key.split("\n")[2];
    const cases = [
      [{ ...key, private_key: key.private_key.replace("BEGIN PRIVATE KEY", "BEGIN RSA PRIVATE KEY").replace("END PRIVATE KEY", "END RSA PRIVATE KEY") }, "targets.v.serviceAccount.private_key", /PKCS#1/],
      [{ ...key, private_key: key.private_key.replace(body, `${body.slice(0, 10)}*${body.slice(11)}`) }, "targets.v.serviceAccount.private_key", /base64/],
      [{ ...key, client_email: undefined }, "targets.v.serviceAccount.client_email", /missing/],
      [JSON.stringify(key).slice(0, 300), "targets.v.serviceAccount", /not JSON/],
    ];
    for (const [serviceAccount, path, words] of cases) {
      const thrown = (() => {
        try {
          new Baton({ targets: { v: vertexTarget(vertex.url, "gemini", "g", { serviceAccount }) } });
        } catch (e) {
          return e;
        }
      })();
      assert.equal(thrown?.path, path, String(thrown?.message));
      assert.match(thrown.message, words);
      assert.ok(!thrown.message.includes(body.slice(0, 16)), thrown.message);
    }
  });

  test("a route Claude on Vertex overloaded, then exhausted, then Gemini on Vertex: the gateway serves it streamed", async () => {
    const account = freshAccount(vertex.serviceAccount());
    const config = {
      targets: {
        overloaded: vertexTarget(vertex.url, "anthropic_messages", "overloaded", { serviceAccount: account }),
        exhausted: vertexTarget(vertex.url, "anthropic_messages", "exhausted", { serviceAccount: account }),
        gemini: vertexTarget(vertex.url, "gemini", "gemini-2.5-flash", { serviceAccount: account }),
      },
      routes: { main: { fallback: ["overloaded", "exhausted", "gemini"] } },
      gateway: { apiKeys: ["gw-key"] },
    };
    const gateway = createGateway(config);
    const res = await gateway.fetch(new Request("http://gateway.local/v1/chat/completions", {
      method: "POST",
      headers: { authorization: "Bearer gw-key", "content-type": "application/json" },
      body: JSON.stringify({ model: "main", stream: true, messages: [{ role: "user", content: "Say hello" }] }),
    }));
    assert.equal(res.status, 200);
    const { text } = chatSseText(await res.text());
    assert.equal(text, "Hello from Gemini on Vertex.");
    assert.equal(res.headers.get("x-baton-attempts"), "3");
    assert.equal(await mints(vertex.url, account), 1, "the gateway's wasm mints once for the three members");
  });
});

// A page runs the access-token scenarios only: it must never hold a service account's key.
let everywhere;
describeEverywhere("vertex in every runtime", {
  file: "vertex_scenarios.mjs",
  exportName: "vertexScenarios",
  subpath: "./clouds",
  chromium: Object.keys(tokenScenarios),
  setup: async () => {
    everywhere = await startVertex();
    return { url: everywhere.url, key: everywhere.serviceAccount() };
  },
  teardown: () => everywhere?.stop(),
});
