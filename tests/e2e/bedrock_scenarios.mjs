// Calls to the local Bedrock (tests/e2e/local_bedrock.mjs) that run the same in every runtime
// (Node, Deno, workerd, Chromium): only fetch and the llm-baton API. Each is
// `async ({ Baton, url }) => void` and throws saying what it expected and what it saw. The expected
// values are what the official clients (the AWS SDK's Bedrock Runtime client for Converse,
// @anthropic-ai/bedrock-sdk for Anthropic on Bedrock) read from the same server: bedrock.test.mjs
// checks that in Node.

import { eq, streamed } from "./calls.mjs";

export const REGION = "us-west-2";
export const MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0";
/** The model Anthropic Messages on Bedrock (InvokeModel) answers with text. */
export const CLAUDE = "anthropic.claude-sonnet-4-5-20250929-v1:0";
/** Test-only keys the local Bedrock knows, by access key id. */
export const KEYS = {
  AKIABATONTEST0001: { secretAccessKey: "bedrock/secret+key/for-the-local-test-0001", sessionToken: undefined },
  ASIABATONTEMP0002: { secretAccessKey: "temporary/secret+key/local-test-0002", sessionToken: "IQoJb3JpZ2luX2VjEPT//session/token+local==" },
};
export const API_KEY = "ABSKbedrock-api-key-local-test-0123456789";
export const TEXT = "Hello from Bedrock, signed and framed.";
export const USAGE = { inputTokens: 11, outputTokens: 7, totalTokens: 18 };
export const ASK = { messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Say hello" }] };
export const TOOLS = {
  messages: [{ role: "user", content: "Weather in Paris?" }],
  tools: [{ name: "weather", description: "The weather", parameters: { type: "object", properties: { city: { type: "string" } } } }],
};

export function bedrockTarget(url, model, auth = { aws: { accessKeyId: "AKIABATONTEST0001", secretAccessKey: KEYS.AKIABATONTEST0001.secretAccessKey } }) {
  return { format: "bedrock_converse", region: REGION, baseUrl: url, model, ...auth };
}

/** Anthropic Messages on Bedrock: InvokeModel and InvokeModelWithResponseStream. */
export function anthropicOnBedrock(url, model, auth = { aws: { accessKeyId: "AKIABATONTEST0001", secretAccessKey: KEYS.AKIABATONTEST0001.secretAccessKey } }) {
  return { format: "anthropic_messages", cloud: "bedrock", region: REGION, baseUrl: url, model, ...auth };
}

/** What @anthropic-ai/bedrock-sdk reads from the local Bedrock's InvokeModel answers. */
export const CLAUDE_TEXT = "Hello from Claude on Bedrock, in Anthropic's own words.";
export const CLAUDE_USAGE = { inputTokens: 21, outputTokens: 13 };
export const CLAUDE_CALL = { id: "toolu_bdrk_01", name: "weather", arguments: JSON.stringify({ city: "Paris", days: [1, 2] }) };
export const CLAUDE_THINKING = { thinking: "The user wants a greeting; keep it short.", signature: "EqQBCkYIBxgCKkDbedrockSig0123456789==", text: "Hello, after some thought." };

export const bedrockScenarios = {
  "signed with keys, a session token or an API key: whole and streamed": async ({ Baton, url }) => {
    const temp = KEYS.ASIABATONTEMP0002;
    for (const auth of [undefined, { aws: { accessKeyId: "ASIABATONTEMP0002", ...temp } }, { apiKey: API_KEY }]) {
      const baton = new Baton({ targets: { b: bedrockTarget(url, MODEL, auth) } });
      const out = await baton.complete("b", ASK);
      eq([out.text, out.finishReason, out.usage], [TEXT, "stop", { inputTokens: 11, outputTokens: 7 }], "whole answer");
      const s = await streamed(baton, "b", ASK);
      eq([s.text, s.done?.finishReason, s.done?.usage], [TEXT, "stop", { inputTokens: 11, outputTokens: 7 }], "stream");
      if (s.pieces < 2) throw new Error(`the text arrived in ${s.pieces} piece(s), not as it streamed`);
    }
  },

  "tool calls, whole and streamed": async ({ Baton, url }) => {
    const baton = new Baton({ targets: { b: bedrockTarget(url, "tools-model") } });
    const call = { id: "tooluse_1", name: "weather", arguments: JSON.stringify({ city: "Paris", days: [1, 2] }) };
    const out = await baton.complete("b", TOOLS);
    eq([out.finishReason, out.toolCalls.map(({ id, name, arguments: a }) => ({ id, name, arguments: JSON.stringify(JSON.parse(a)) }))], ["tool_calls", [call]], "whole");
    const s = await streamed(baton, "b", TOOLS);
    eq([s.text, s.done.finishReason, s.done.toolCalls.map(({ id, name, arguments: a }) => ({ id, name, arguments: a }))], ["Checking.", "tool_calls", [call]], "streamed");
  },

  "throttled and unavailable members fail over; a throttle inside a stream fails it": async ({ Baton, url }) => {
    const baton = new Baton({
      targets: { throttled: bedrockTarget(url, "throttled"), unavailable: bedrockTarget(url, "unavailable"), b: bedrockTarget(url, MODEL) },
      routes: { main: { fallback: ["throttled", "unavailable", "b"] } },
    });
    const out = await baton.complete("main", ASK);
    eq([out.text, out.legs.map((l) => [l.target, l.status ?? null, l.class ?? null])], [TEXT, [["throttled", 429, "rate_limit"], ["unavailable", 503, "overloaded"], ["b", null, null]]], "failover");
    const mid = new Baton({ targets: { s: bedrockTarget(url, "stream-throttled") } });
    let text = "";
    const err = await (async () => {
      for await (const ev of mid.stream("s", ASK)) if (ev.type === "text") text += ev.text;
    })().then(() => null, (e) => e);
    eq([text, err?.status, err?.code, /in stream: Too many tokens/.test(err?.message ?? "")], ["Partial", 429, "ThrottlingException", true], "a throttle mid-stream");
  },

  "Anthropic on Bedrock, signed with keys, a session token or an API key: whole and streamed": async ({ Baton, url }) => {
    const temp = KEYS.ASIABATONTEMP0002;
    for (const auth of [undefined, { aws: { accessKeyId: "ASIABATONTEMP0002", ...temp } }, { apiKey: API_KEY }]) {
      const baton = new Baton({ targets: { c: anthropicOnBedrock(url, CLAUDE, auth) } });
      const out = await baton.complete("c", ASK);
      eq([out.text, out.finishReason, out.usage, out.model], [CLAUDE_TEXT, "stop", CLAUDE_USAGE, CLAUDE], "whole answer");
      const s = await streamed(baton, "c", ASK);
      eq([s.text, s.done?.finishReason, s.done?.usage], [CLAUDE_TEXT, "stop", CLAUDE_USAGE], "stream");
      if (s.pieces < 2) throw new Error(`the text arrived in ${s.pieces} piece(s), not as it streamed`);
    }
  },

  "Anthropic on Bedrock: tool calls and thinking with its signature, whole and streamed": async ({ Baton, url }) => {
    const baton = new Baton({ targets: { tools: anthropicOnBedrock(url, "claude-tools"), think: anthropicOnBedrock(url, "claude-thinking") } });
    const calls = (list) => list.map(({ id, name, arguments: a }) => ({ id, name, arguments: JSON.stringify(JSON.parse(a)) }));
    const out = await baton.complete("tools", TOOLS);
    eq([out.text, out.finishReason, calls(out.toolCalls)], ["Let me check.", "tool_calls", [CLAUDE_CALL]], "whole tool call");
    const s = await streamed(baton, "tools", TOOLS);
    eq([s.text, s.done.finishReason, calls(s.done.toolCalls)], ["Let me check.", "tool_calls", [CLAUDE_CALL]], "streamed tool call");
    const reasoning = (message) => message.content.filter((p) => p.type === "reasoning").map((p) => [p.text, p.state?.signature, p.state?.format, p.state?.model]);
    const expected = [[CLAUDE_THINKING.thinking, CLAUDE_THINKING.signature, "anthropic_messages", "claude-thinking"]];
    const thought = await baton.complete("think", { ...ASK, reasoning: { effort: "low" } });
    eq([thought.text, thought.reasoning, reasoning(thought.message)], [CLAUDE_THINKING.text, CLAUDE_THINKING.thinking, expected], "whole thinking");
    let streamedThinking = "";
    let done;
    for await (const ev of baton.stream("think", { ...ASK, reasoning: { effort: "low" } })) {
      if (ev.type === "reasoning") streamedThinking += ev.text;
      if (ev.type === "done") done = ev;
    }
    eq([streamedThinking, done.text, reasoning(done.message)], [CLAUDE_THINKING.thinking, CLAUDE_THINKING.text, expected], "streamed thinking");
  },

  "Anthropic on Bedrock: throttled, unavailable and overloaded members fail over; exceptions mid-stream fail it": async ({ Baton, url }) => {
    const baton = new Baton({
      targets: {
        claude: { format: "anthropic_messages", baseUrl: `${url}/v1`, model: "claude-sonnet-4-5", apiKey: "sk-ant-local" },
        throttled: anthropicOnBedrock(url, "throttled"),
        unavailable: anthropicOnBedrock(url, "unavailable"),
        overloaded: anthropicOnBedrock(url, "stream-overloaded"),
        c: anthropicOnBedrock(url, CLAUDE),
      },
      routes: { whole: { fallback: ["claude", "throttled", "unavailable", "c"] }, streamed: { fallback: ["claude", "throttled", "overloaded", "c"] } },
    });
    const legs = (list) => list.map((l) => [l.target, l.status ?? null, l.class ?? null]);
    const out = await baton.complete("whole", ASK);
    eq([out.text, legs(out.legs)], [CLAUDE_TEXT, [["claude", 529, "overloaded"], ["throttled", 429, "rate_limit"], ["unavailable", 503, "overloaded"], ["c", null, null]]], "whole failover");
    const s = await streamed(baton, "streamed", ASK);
    eq([s.text, legs(s.done.legs)], [CLAUDE_TEXT, [["claude", 529, "overloaded"], ["throttled", 429, "rate_limit"], ["overloaded", 529, "overloaded"], ["c", null, null]]], "streamed failover");
    const cases = [
      ["stream-throttled", "Partial", 429, "ThrottlingException", /in stream: Too many tokens/],
      ["stream-model-error", "Partial", 424, "ModelStreamErrorException", /in stream: The model stream failed/],
      ["stream-overloaded", "", 529, "overloaded_error", /in stream: Overloaded/],
    ];
    for (const [model, before, status, code, words] of cases) {
      const alone = new Baton({ targets: { s: anthropicOnBedrock(url, model) } });
      let text = "";
      const err = await (async () => {
        for await (const ev of alone.stream("s", ASK)) if (ev.type === "text") text += ev.text;
      })().then(() => null, (e) => e);
      eq([text, err?.status, err?.code, words.test(err?.message ?? "")], [before, status, code, true], `${model} mid-stream`);
    }
  },
};
