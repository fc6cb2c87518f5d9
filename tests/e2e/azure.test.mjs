// Azure OpenAI end to end against openai's own AzureOpenAI client: in Node, then Deno, workerd
// and Chromium, and through the Node gateway.
//
// A local Azure resource (tests/e2e/azure_server.mjs, a real HTTP/1.1 server on 127.0.0.1)
// checks each request's credential and URL as Azure does and answers in Azure's shapes. openai's
// AzureOpenAI client (and its OpenAI client on the v1 path, as Microsoft's examples use it),
// pointed at the same server, is the oracle: the URLs it sends are the ones llm-baton sends, and
// what it reads (text, tool calls, filter results whole and streamed, errors), llm-baton reads
// the same. The calls of azure_scenarios.mjs then run against the same server in every runtime.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import OpenAI, { AzureOpenAI } from "openai";
import { Baton, BatonError } from "llm-baton/clouds";
import { startAzure } from "./azure_server.mjs";
import { API_VERSION, ASK, AZURE_KEY, azureTarget, ENTRA_TOKEN, TOOLS } from "./azure_scenarios.mjs";
import { streamed } from "./calls.mjs";
import { spawnAnnounced, startProvider } from "./provider.mjs";
import { describeEverywhere } from "./everywhere.mjs";

const repo = fileURLToPath(new URL("../../", import.meta.url));

const MESSAGES = [{ role: "system", content: "Be brief." }, { role: "user", content: "Say hello" }];
const SDK_TOOLS = [{ type: "function", function: { name: "weather", description: "The weather", parameters: TOOLS.tools[0].parameters } }];

/** openai's AzureOpenAI client on the dated API (a key, or an Entra ID token provider), or its OpenAI client on the v1 path. */
function sdk(url, { entra = false, v1 = false, deployment } = {}) {
  if (v1) return new OpenAI({ baseURL: `${url}/openai/v1`, apiKey: AZURE_KEY, maxRetries: 0 });
  const auth = entra ? { azureADTokenProvider: async () => ENTRA_TOKEN } : { apiKey: AZURE_KEY };
  return new AzureOpenAI({ endpoint: url, apiVersion: API_VERSION, deployment, maxRetries: 0, ...auth });
}

const said = (v) => v && (Array.isArray(v) ? v.length > 0 : Object.keys(v).length > 0);

/** What the SDK reads from a Chat stream: text, tool calls, the finish, and the filter results in order. */
async function sdkStream(client, params) {
  const read = { text: "", calls: [], finish: null, filters: [] };
  for await (const chunk of await client.chat.completions.create({ ...params, stream: true })) {
    if (said(chunk.prompt_filter_results)) read.filters.push({ promptFilterResults: chunk.prompt_filter_results });
    const choice = chunk.choices[0];
    if (!choice) continue;
    if (said(choice.content_filter_results)) read.filters.push({ contentFilterResults: choice.content_filter_results });
    read.text += choice.delta?.content ?? "";
    for (const call of choice.delta?.tool_calls ?? []) {
      if (call.id) read.calls.push({ id: call.id, name: call.function.name, arguments: "" });
      read.calls.at(-1).arguments += call.function?.arguments ?? "";
    }
    read.finish = choice.finish_reason ?? read.finish;
  }
  return read;
}

const lastSent = (azure) => azure.seen.at(-1);
const urlOf = (r) => `${r.path}${r.query}`;

describe("azure", () => {
  let azure;
  before(async () => {
    azure = await startAzure();
  });
  after(() => azure?.stop());

  test("the local resource's checks are Azure's: the official clients pass them, a wrong key and a wrong path fail them", async () => {
    for (const options of [{ deployment: "gpt-4o" }, { deployment: "gpt-4o", entra: true }, { v1: true }]) {
      const r = await sdk(azure.url, options).chat.completions.create({ model: "gpt-4o", messages: MESSAGES });
      assert.equal(r.choices[0].finish_reason, "stop");
    }
    const wrong = new AzureOpenAI({ endpoint: azure.url, apiVersion: API_VERSION, apiKey: "wrong", maxRetries: 0 });
    await assert.rejects(wrong.chat.completions.create({ model: "gpt-4o", messages: MESSAGES }), (e) => e.status === 401);
    const noVersion = new OpenAI({ baseURL: `${azure.url}/openai`, apiKey: AZURE_KEY, maxRetries: 0 });
    await assert.rejects(noVersion.chat.completions.create({ model: "gpt-4o", messages: MESSAGES }), (e) => e.status === 404);
  });

  test("the URLs and credential headers llm-baton sends are the ones the official clients send", async () => {
    const cases = [
      [sdk(azure.url, { deployment: "gpt-4o" }), {}, azureTarget(azure.url, "gpt-4o", { dated: true })],
      [sdk(azure.url, { deployment: "gpt-4o", entra: true }), {}, azureTarget(azure.url, "gpt-4o", { dated: true, entra: true })],
      [sdk(azure.url), { responses: true }, azureTarget(azure.url, "gpt-4o", { dated: true, format: "openai_responses" })],
      [sdk(azure.url, { v1: true }), {}, azureTarget(azure.url, "gpt-4o")],
      [sdk(azure.url, { v1: true }), { responses: true }, azureTarget(azure.url, "gpt-4o", { format: "openai_responses" })],
    ];
    for (const [client, { responses }, target] of cases) {
      if (responses) await client.responses.create({ model: "gpt-4o", input: "Say hello" });
      else await client.chat.completions.create({ model: "gpt-4o", messages: MESSAGES });
      const theirs = lastSent(azure);
      await new Baton({ targets: { a: target } }).complete("a", ASK);
      const ours = lastSent(azure);
      assert.equal(urlOf(ours), urlOf(theirs), JSON.stringify(target));
      // On the v1 path the OpenAI client sends the key as a bearer, which Azure takes there too;
      // llm-baton sends a key as api-key on both paths.
      if (!target.apiVersion && !target.entraToken) assert.deepEqual([theirs.credentials, ours.credentials], [["authorization"], ["api-key"]]);
      else assert.deepEqual(ours.credentials, theirs.credentials, JSON.stringify(target));
      assert.equal(ours.body.model, "gpt-4o");
    }
  });

  test("a whole Chat answer and its filter results read as the SDK reads them", async () => {
    const r = await sdk(azure.url, { deployment: "gpt-4o" }).chat.completions.create({ model: "gpt-4o", messages: MESSAGES });
    const out = await new Baton({ targets: { a: azureTarget(azure.url, "gpt-4o", { dated: true }) } }).complete("a", ASK);
    assert.equal(out.text, r.choices[0].message.content);
    assert.deepEqual(out.usage, { inputTokens: r.usage.prompt_tokens, outputTokens: r.usage.completion_tokens });
    assert.deepEqual(out.contentFilter, { promptFilterResults: r.prompt_filter_results, contentFilterResults: r.choices[0].content_filter_results });
  });

  test("a Chat stream (its first chunk with empty choices and the prompt's results) reads as the SDK reads it", async () => {
    const oracle = await sdkStream(sdk(azure.url, { deployment: "gpt-4o" }), { model: "gpt-4o", messages: MESSAGES, stream_options: { include_usage: true } });
    const read = await streamed(new Baton({ targets: { a: azureTarget(azure.url, "gpt-4o", { dated: true }) } }), "a", ASK);
    assert.equal(read.text, oracle.text);
    assert.equal(oracle.finish, "stop");
    assert.equal(read.done.finishReason, "stop");
    assert.deepEqual(read.filters, oracle.filters);
    assert.ok(read.pieces > 1, "text arrives as it streams");
  });

  test("tool calls, whole and streamed, read as the SDK reads them", async () => {
    const client = sdk(azure.url, { deployment: "tools" });
    const whole = await client.chat.completions.create({ model: "tools", messages: MESSAGES, tools: SDK_TOOLS });
    const oracle = await sdkStream(client, { model: "tools", messages: MESSAGES, tools: SDK_TOOLS });
    const baton = new Baton({ targets: { a: azureTarget(azure.url, "tools", { dated: true }) } });
    const out = await baton.complete("a", TOOLS);
    const call = whole.choices[0].message.tool_calls[0];
    assert.deepEqual(out.toolCalls.map(({ id, name, arguments: a }) => ({ id, name, arguments: a })), [{ id: call.id, name: call.function.name, arguments: call.function.arguments }]);
    const read = await streamed(baton, "a", TOOLS);
    assert.deepEqual(read.done.toolCalls.map(({ id, name, arguments: a }) => ({ id, name, arguments: a })), oracle.calls);
    assert.equal(read.done.finishReason, "tool_calls");
    assert.equal(oracle.finish, "tool_calls");
  });

  test("Responses, whole and streamed, read as the SDK reads them", async () => {
    const client = sdk(azure.url);
    const whole = await client.responses.create({ model: "gpt-4o", input: "Say hello" });
    let streamedText = "";
    for await (const ev of await client.responses.create({ model: "gpt-4o", input: "Say hello", stream: true })) {
      if (ev.type === "response.output_text.delta") streamedText += ev.delta;
    }
    const baton = new Baton({ targets: { a: azureTarget(azure.url, "gpt-4o", { dated: true, format: "openai_responses" }) } });
    const out = await baton.complete("a", ASK);
    assert.equal(out.text, whole.output_text);
    assert.deepEqual(out.usage, { inputTokens: whole.usage.input_tokens, outputTokens: whole.usage.output_tokens });
    assert.equal((await streamed(baton, "a", ASK)).text, streamedText);
  });

  test("the content filter's 400 and a 429 read as the SDK reads them; the filter's results are on the error", async () => {
    const client = sdk(azure.url, { deployment: "filtered" });
    const theirs = await client.chat.completions.create({ model: "filtered", messages: MESSAGES }).then(() => null, (e) => e);
    const ours = await new Baton({ targets: { a: azureTarget(azure.url, "filtered", { dated: true }) } }).complete("a", ASK).then(() => null, (e) => e);
    assert.ok(ours instanceof BatonError);
    assert.deepEqual([ours.status, ours.code, ours.class], [theirs.status, theirs.code, "content_filter"]);
    assert.equal(ours.message.replace(/^HTTP 400: /, ""), theirs.error.message);
    assert.deepEqual(ours.contentFilter, { contentFilterResults: theirs.error.innererror.content_filter_result });

    const busy = `busy-once-${Math.random().toString(36).slice(2)}`;
    const limited = await sdk(azure.url, { deployment: busy }).chat.completions.create({ model: busy, messages: MESSAGES }).then(() => null, (e) => e);
    const second = `busy-once-${Math.random().toString(36).slice(2)}`;
    const ours429 = await new Baton({ targets: { a: azureTarget(azure.url, second) } }).complete("a", ASK).then(() => null, (e) => e);
    assert.deepEqual([ours429.status, ours429.class, ours429.retryAfterMs], [limited.status, "rate_limit", Number(limited.headers.get("retry-after-ms"))]);
  });

  test("the Node gateway serves an Azure member to a Chat client, whole and streamed", async () => {
    const dir = `${repo}tests/e2e/artifacts/azure`;
    mkdirSync(dir, { recursive: true });
    const config = `${dir}/gateway.json`;
    writeFileSync(config, JSON.stringify({ targets: { azure: azureTarget(azure.url, "gpt-4o") }, routes: { chat: { fallback: ["azure"] } }, gateway: { apiKeys: ["gw-azure-key"] } }));
    const gateway = await spawnAnnounced(process.execPath, [`${repo}pkg/bin/llm-baton-gateway.js`, "--config", config, "--host", "127.0.0.1", "--port", "0", "--log", "off"], { name: "the gateway", variable: "GATEWAY_URL" });
    try {
      const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: "gw-azure-key", maxRetries: 0 });
      const whole = await client.chat.completions.create({ model: "chat", messages: MESSAGES });
      assert.equal(whole.choices[0].message.content, "Hello from Azure, filtered and fine.");
      let text = "";
      for await (const chunk of await client.chat.completions.create({ model: "chat", messages: MESSAGES, stream: true })) text += chunk.choices[0]?.delta?.content ?? "";
      assert.equal(text, "Hello from Azure, filtered and fine.");
      assert.ok(azure.seen.at(-1).credentials.includes("api-key"), "the gateway's member sent the Azure key");
    } finally {
      gateway.stop();
    }
  });
});

let everywhere;
describeEverywhere("azure in every runtime", {
  file: "azure_scenarios.mjs",
  exportName: "azureScenarios",
  subpath: "./clouds",
  setup: async () => {
    everywhere = { azure: await startAzure(), provider: await startProvider() };
    return { url: everywhere.azure.url, providerUrl: everywhere.provider.url };
  },
  teardown: () => {
    everywhere?.azure.stop();
    everywhere?.provider.stop();
  },
});
