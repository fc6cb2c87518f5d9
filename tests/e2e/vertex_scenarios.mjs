// Calls to the local Vertex of tests/e2e/local_vertex.mjs that run the same in every runtime
// (Node, Deno, workerd; Chromium those with an access token only): only fetch and the llm-baton
// API. Each is `async ({ Baton, url, key }) => void`, where `url` is the local Vertex and `key` a
// service account's JSON key for it, and throws saying what it expected and what it saw. The
// expected values are what @anthropic-ai/vertex-sdk reads from the same server (vertex.test.mjs).

import { eq, streamed } from "./calls.mjs";

export const PROJECT = "baton-local";
export const REGION = "us-east5";
export const ACCESS_TOKEN = "ya29.local-fixed-access-token-0123456789";
export const GEMINI_TEXT = "Hello from Gemini on Vertex.";
export const CLAUDE_TEXT = "Hello from Claude on Vertex.";
export const CLAUDE_MODEL = "claude-sonnet-4-5@20250929";
export const GEMINI_MODEL = "gemini-2.5-flash";
export const USAGE = { inputTokens: 9, outputTokens: 6 };
export const ASK = { messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Say hello" }] };

/** A Vertex target on the local server: `format` "gemini" or "anthropic_messages". */
export function vertexTarget(url, format, model, auth) {
  return { format, cloud: "vertex", project: PROJECT, region: REGION, baseUrl: `${url}/v1`, model, ...auth };
}

/** The key under a new email, so the mints a scenario counts are its own (`short…`: 2 s tokens). */
export function freshAccount(key, prefix = "sa") {
  return { ...key, client_email: `${prefix}-${Math.random().toString(36).slice(2, 10)}@baton-local.iam.gserviceaccount.com` };
}

export async function mints(url, account) {
  const res = await fetch(`${url}/_test/mints?iss=${encodeURIComponent(account.client_email)}`);
  return (await res.json()).mints;
}

/** Gemini and Claude on Vertex, whole and streamed, through `baton`'s targets "gemini" and "claude". */
async function bothWholeAndStreamed(baton) {
  for (const [route, text] of [["gemini", GEMINI_TEXT], ["claude", CLAUDE_TEXT]]) {
    const out = await baton.complete(route, ASK);
    eq([out.text, out.finishReason, out.usage], [text, "stop", USAGE], `${route}, whole`);
    const s = await streamed(baton, route, ASK);
    eq([s.text, s.done?.finishReason, s.done?.usage], [text, "stop", USAGE], `${route}, streamed`);
    if (s.pieces < 2) throw new Error(`${route}: the text arrived in ${s.pieces} piece(s), not as it streamed`);
  }
}

const legs = (out) => out.legs.map((l) => [l.target, l.status ?? null, l.class ?? null]);

/** Scenarios with an access token only: what a browser page may hold (docs/vertex.md). */
export const tokenScenarios = {
  "an access token: Gemini and Claude, whole and streamed": async ({ Baton, url }) => {
    const auth = { accessToken: ACCESS_TOKEN };
    const baton = new Baton({ targets: { gemini: vertexTarget(url, "gemini", GEMINI_MODEL, auth), claude: vertexTarget(url, "anthropic_messages", CLAUDE_MODEL, auth) } });
    await bothWholeAndStreamed(baton);
  },

  "a refused access token is the member's auth failure, sent once and never shown": async ({ Baton, url }) => {
    const wrong = "ya29.wrong-token-that-must-not-show-0001";
    const events = [];
    const baton = new Baton({ targets: { g: vertexTarget(url, "gemini", GEMINI_MODEL, { accessToken: wrong }) } });
    const err = await baton.complete("g", ASK, { onEvent: (e) => events.push(e) }).then(() => null, (e) => e);
    eq([err?.status, err?.class, err?.code, events.filter((e) => e.type === "attempt").length], [401, "auth", "UNAUTHENTICATED", 1], "a refused token");
    const shown = `${err.message} ${JSON.stringify(err)} ${JSON.stringify(events)}`;
    if (shown.includes(wrong)) throw new Error(`the token shows: ${shown}`);
  },

  "RESOURCE_EXHAUSTED and UNAVAILABLE fail over to the next member": async ({ Baton, url }) => {
    const auth = { accessToken: ACCESS_TOKEN };
    const baton = new Baton({
      targets: {
        exhausted: vertexTarget(url, "gemini", "exhausted", auth),
        unavailable: vertexTarget(url, "anthropic_messages", "unavailable", auth),
        claude: vertexTarget(url, "anthropic_messages", CLAUDE_MODEL, auth),
      },
      routes: { main: { fallback: ["exhausted", "unavailable", "claude"] } },
    });
    const out = await baton.complete("main", ASK);
    eq([out.text, legs(out)], [CLAUDE_TEXT, [["exhausted", 429, "rate_limit"], ["unavailable", 503, null], ["claude", null, null]]], "failover");
    const s = await streamed(baton, "main", ASK);
    eq(s.text, CLAUDE_TEXT, "failover, streamed");
  },
};

/** Scenarios with a service account's key, which llm-baton mints tokens from (not in a browser). */
export const accountScenarios = {
  "a service account: one mint for many calls, concurrent ones too, whole and streamed": async ({ Baton, url, key }) => {
    const account = freshAccount(key);
    const auth = { serviceAccount: account };
    const baton = new Baton({ targets: { gemini: vertexTarget(url, "gemini", GEMINI_MODEL, auth), claude: vertexTarget(url, "anthropic_messages", CLAUDE_MODEL, auth) } });
    const at = await Promise.all(Array.from({ length: 5 }, (_, i) => baton.complete(i % 2 ? "gemini" : "claude", ASK)));
    eq(at.map((o) => o.text), [CLAUDE_TEXT, GEMINI_TEXT, CLAUDE_TEXT, GEMINI_TEXT, CLAUDE_TEXT], "concurrent calls");
    await bothWholeAndStreamed(baton);
    // Another Baton of the same isolate shares the cached token, its key given as text.
    const other = new Baton({ targets: { g: vertexTarget(url, "gemini", GEMINI_MODEL, { serviceAccount: JSON.stringify(account) }) } });
    eq((await other.complete("g", ASK)).text, GEMINI_TEXT, "another Baton");
    eq(await mints(url, account), 1, "mints for 10 calls");
  },

  "a token is minted again before it expires": async ({ Baton, url, key }) => {
    const account = freshAccount(key, "short");
    const baton = new Baton({ targets: { g: vertexTarget(url, "gemini", GEMINI_MODEL, { serviceAccount: account }) } });
    await baton.complete("g", ASK);
    await baton.complete("g", ASK);
    eq(await mints(url, account), 1, "mints while the 2 s token is young");
    // Renewed at half its short life (5 minutes early for an hour's token): before it expires.
    await new Promise((r) => setTimeout(r, 1100));
    const out = await baton.complete("g", ASK);
    eq([out.text, legs(out).length, await mints(url, account)], [GEMINI_TEXT, 1, 2], "after 1.1 s of a 2 s token");
  },

  "a revoked token (Vertex's 401) is minted again once and the attempt sent again, no failure counted": async ({ Baton, url, key }) => {
    const account = freshAccount(key);
    const events = [];
    const baton = new Baton({ targets: { c: vertexTarget(url, "anthropic_messages", CLAUDE_MODEL, { serviceAccount: account }) } });
    await baton.complete("c", ASK);
    await fetch(`${url}/_test/revoke?iss=${encodeURIComponent(account.client_email)}`, { method: "POST" });
    const out = await baton.complete("c", ASK, { onEvent: (e) => events.push(e) });
    eq([out.text, legs(out), await mints(url, account)], [CLAUDE_TEXT, [["c", null, null]], 2], "after a revocation");
    eq(events.map((e) => e.type).filter((t) => t !== "leg"), ["attempt"], "one attempt, nothing failed");
    await fetch(`${url}/_test/revoke?iss=${encodeURIComponent(account.client_email)}`, { method: "POST" });
    const s = await streamed(baton, "c", ASK);
    eq([s.text, await mints(url, account)], [CLAUDE_TEXT, 3], "streamed, after a revocation");
  },

  "a key the token endpoint refuses is the member's auth failure, and the route fails over": async ({ Baton, url, key }) => {
    const account = { ...freshAccount(key), client_email: "stranger@elsewhere.example" };
    const baton = new Baton({
      targets: { refused: vertexTarget(url, "gemini", GEMINI_MODEL, { serviceAccount: account }), ok: vertexTarget(url, "gemini", GEMINI_MODEL, { accessToken: ACCESS_TOKEN }) },
      routes: { main: { fallback: ["refused", "ok"] } },
    });
    const out = await baton.complete("main", ASK);
    eq([out.text, legs(out)], [GEMINI_TEXT, [["refused", 400, "auth"], ["ok", null, null]]], "a refused JWT");
    const err = await baton.complete("refused", ASK).then(() => null, (e) => e);
    if (!/token endpoint refused the service account's JWT with HTTP 400: invalid_scope/.test(err?.message ?? "")) throw new Error(`the refusal: ${err?.message}`);
    if (JSON.stringify(err).includes("PRIVATE KEY") || err.message.includes(account.private_key.slice(40, 80))) throw new Error("the key shows");
  },
};

export const vertexScenarios = { ...tokenScenarios, ...accountScenarios };
