// Calls to the local Azure OpenAI resource of tests/e2e/azure_server.mjs that run the same in
// every runtime (Node, Deno, workerd, Chromium): only fetch and the llm-baton API. Each is
// `async ({ Baton, url, providerUrl }) => void` and throws saying what it expected and what it
// saw. The expected values are what openai's AzureOpenAI client reads from the same server
// (azure.test.mjs checks that in Node).

import { eq, streamed } from "./calls.mjs";

export const AZURE_KEY = "azure-resource-key-0123456789abcdef";
export const ENTRA_TOKEN = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.entra-id-token-for-the-local-test";
export const API_VERSION = "2024-10-21";
export const TEXT = "Hello from Azure, filtered and fine.";
export const CALL = { id: "call_AZ1", name: "weather", arguments: JSON.stringify({ city: "Paris", days: [1, 2] }) };
export const ASK = { messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Say hello" }] };
export const TOOLS = {
  messages: [{ role: "user", content: "Weather in Paris?" }],
  tools: [{ name: "weather", description: "The weather", parameters: { type: "object", properties: { city: { type: "string" } } } }],
};

const severity = (filtered, level) => ({ filtered, severity: level });
/** Microsoft's example results: every category safe; the prompt's with a jailbreak check too. */
export const SAFE = { hate: severity(false, "safe"), self_harm: severity(false, "safe"), sexual: severity(false, "safe"), violence: severity(false, "safe") };
export const PROMPT_RESULTS = [{ prompt_index: 0, content_filter_results: { ...SAFE, jailbreak: { filtered: false, detected: false } } }];
/** An answer the filter cut: violence at medium. */
export const CUT_RESULTS = { ...SAFE, violence: severity(true, "medium") };
/** The prompt the filter refused (the 400's innererror.content_filter_result): hate at high. */
export const REFUSED_RESULTS = { ...SAFE, hate: severity(true, "high") };

/** The Azure target styles: the v1 API (the default) and the dated one, with a key or an Entra ID token. */
export function azureTarget(url, model, { format = "openai_chat", dated = false, entra = false, deployment } = {}) {
  const t = { format, cloud: "azure", baseUrl: url, model };
  if (entra) t.entraToken = ENTRA_TOKEN;
  else t.apiKey = AZURE_KEY;
  if (dated) t.apiVersion = API_VERSION;
  if (deployment) t.deployment = deployment;
  return t;
}

const STYLES = [{}, { entra: true }, { dated: true }, { dated: true, entra: true }];

const calls = (toolCalls) => toolCalls.map(({ id, name, arguments: a }) => ({ id, name, arguments: a }));

async function rejection(promise) {
  return promise.then(() => null, (e) => e);
}

export const azureScenarios = {
  "Chat on the v1 and the dated API, with a key or an Entra ID token: whole and streamed, with the filter results": async ({ Baton, url }) => {
    for (const style of STYLES) {
      const what = JSON.stringify(style);
      const baton = new Baton({ targets: { a: azureTarget(url, "gpt-4o", style) } });
      const out = await baton.complete("a", ASK);
      eq([out.text, out.finishReason, out.usage], [TEXT, "stop", { inputTokens: 12, outputTokens: 6 }], `whole answer ${what}`);
      eq(out.contentFilter, { promptFilterResults: PROMPT_RESULTS, contentFilterResults: SAFE }, `whole answer's filter results ${what}`);
      const s = await streamed(baton, "a", ASK);
      eq([s.text, s.done?.finishReason, s.done?.usage], [TEXT, "stop", { inputTokens: 12, outputTokens: 6 }], `stream ${what}`);
      if (s.pieces < 2) throw new Error(`the text arrived in ${s.pieces} piece(s), not as it streamed`);
      eq(s.filters[0], { promptFilterResults: PROMPT_RESULTS }, `the first chunk's prompt results ${what}`);
      for (const f of s.filters.slice(1)) eq(f, { contentFilterResults: SAFE }, `each text chunk's results ${what}`);
      eq(s.done.contentFilter, { promptFilterResults: PROMPT_RESULTS, contentFilterResults: SAFE }, `the streamed answer's filter results ${what}`);
    }
  },

  "Responses on the v1 and the dated API: whole and streamed": async ({ Baton, url }) => {
    for (const style of STYLES) {
      const what = JSON.stringify(style);
      const baton = new Baton({ targets: { a: azureTarget(url, "gpt-4o", { format: "openai_responses", ...style }) } });
      const out = await baton.complete("a", ASK);
      eq([out.text, out.finishReason, out.usage], [TEXT, "stop", { inputTokens: 12, outputTokens: 6 }], `whole answer ${what}`);
      const s = await streamed(baton, "a", ASK);
      eq([s.text, s.done?.finishReason], [TEXT, "stop"], `stream ${what}`);
    }
  },

  "tool calls, whole and streamed, in both APIs": async ({ Baton, url }) => {
    for (const format of ["openai_chat", "openai_responses"]) {
      const baton = new Baton({ targets: { a: azureTarget(url, "tools", { format, dated: true }) } });
      const out = await baton.complete("a", TOOLS);
      eq([out.finishReason, calls(out.toolCalls)], ["tool_calls", [CALL]], `${format} whole`);
      const s = await streamed(baton, "a", TOOLS);
      eq([s.done.finishReason, calls(s.done.toolCalls)], ["tool_calls", [CALL]], `${format} streamed`);
    }
  },

  "the content filter: a refused prompt is a terminal content_filter error; a cut answer finishes content_filter with its results": async ({ Baton, url }) => {
    const baton = new Baton({
      targets: { filtered: azureTarget(url, "filtered"), backup: azureTarget(url, "gpt-4o") },
      routes: { main: { fallback: [{ retry: "filtered", attempts: 3, backoff: { initialMs: 10, jitter: "none" } }, "backup"] } },
    });
    for (const stream of [false, true]) {
      const e = await rejection(stream ? streamed(baton, "main", ASK) : baton.complete("main", ASK));
      eq([e?.kind, e?.status, e?.code, e?.class, e?.target], ["http", 400, "content_filter", "content_filter", "filtered"], `the refused prompt (stream: ${stream})`);
      eq(e.legs.map((l) => l.target), ["filtered"], "neither retried nor sent on to the backup");
      eq(e.contentFilter, { contentFilterResults: REFUSED_RESULTS }, "the refusal's filter results");
      if (!/content management policy/.test(e.message)) throw new Error(`Azure's words are kept: ${e.message}`);
    }
    const cut = new Baton({ targets: { a: azureTarget(url, "cut-by-filter", { dated: true, deployment: "cut-by-filter" }) } });
    const out = await cut.complete("a", ASK);
    eq([out.text, out.finishReason, out.contentFilter], ["", "content_filter", { promptFilterResults: PROMPT_RESULTS, contentFilterResults: CUT_RESULTS }], "a cut answer");
    const s = await streamed(cut, "a", ASK);
    eq([s.done.finishReason, s.filters.at(-1)], ["content_filter", { contentFilterResults: CUT_RESULTS }], "a cut stream");
  },

  "a wrong key is an auth failure that shows no credential": async ({ Baton, url }) => {
    const wrong = { ...azureTarget(url, "gpt-4o"), apiKey: "not-the-azure-key-0123456789" };
    const e = await rejection(new Baton({ targets: { a: wrong } }).complete("a", ASK));
    eq([e?.status, e?.class], [401, "auth"], "a wrong key");
    if (`${e.message}${JSON.stringify(e)}`.includes("not-the-azure-key")) throw new Error(`the key is shown: ${e.message}`);
  },

  "OpenAI then Azure: fails over on 429, and Azure's 429 is retried after its retry-after-ms, not its retry-after": async ({ Baton, url, providerUrl }) => {
    const id = `azure-failover-${Math.random().toString(36).slice(2, 10)}`;
    const put = await fetch(`${providerUrl}/_scenarios/${id}`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ steps: [{ status: 429, message: "Rate limit reached for gpt-4o", headers: { "retry-after": "30" } }] }),
    });
    if (put.status !== 200) throw new Error(`scripting the provider: ${put.status} ${await put.text()}`);
    const busy = `busy-once-${id}`;
    const baton = new Baton({
      targets: {
        openai: { format: "openai_chat", baseUrl: `${providerUrl}/s/${id}/v1`, model: "gpt-4o", apiKey: "sk-test-not-a-secret" },
        azure: azureTarget(url, busy),
      },
      routes: { main: { fallback: ["openai", { retry: "azure", attempts: 2, backoff: { initialMs: 10, jitter: "none" } }] } },
    });
    const t0 = performance.now();
    const out = await baton.complete("main", ASK);
    const ms = performance.now() - t0;
    eq(out.text, TEXT, "Azure's answer");
    eq(out.legs.map((l) => [l.target, l.status ?? null, l.retryAfterMs ?? null]), [["openai", 429, 30000], ["azure", 429, 300], ["azure", null, null]], "legs");
    if (!(ms >= 280 && ms < 5000)) throw new Error(`took ${ms.toFixed(0)} ms: expected Azure's retry-after-ms (300 ms), not its retry-after (1 s) nor OpenAI's 30 s`);
  },
};
