// Calls to the local Bedrock of tests/e2e/bedrock.test.mjs that run the same in every runtime
// (Node, Deno, workerd): only fetch and the llm-baton API. Each is `async ({ Baton, url }) => void`
// and throws saying what it expected and what it saw. The expected values are what the AWS SDK's
// own client reads from the same server (bedrock.test.mjs checks that in Node).

export const REGION = "us-west-2";
export const MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0";
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

function eq(actual, expected, what) {
  const [a, e] = [JSON.stringify(actual), JSON.stringify(expected)];
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
}

async function streamed(baton, route, request) {
  let text = "";
  let pieces = 0;
  let done = null;
  for await (const ev of baton.stream(route, request)) {
    if (ev.type === "text") {
      text += ev.text;
      pieces += 1;
    }
    if (ev.type === "done") done = ev;
  }
  return { text, pieces, done };
}

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
};
