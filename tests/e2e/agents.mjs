// Agent loops against reasoning models: the scripted provider's `reasoning: true` steps issue
// each format's reasoning state (Anthropic thinking signatures and redacted thinking, Gemini 3
// thought signatures, Responses reasoning items with encrypted content) and refuse, with the
// provider's own 400, a history that lacks or alters it (tests/provider/src/wire/reasoning.rs).
// Part of scenarios.mjs, so every runtime runs them.
import { script, upstream, fail, eq, sameJson, target, drain } from "./scenarios.mjs";

const TOOLS = [{ name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } }];
export const QUESTION = { role: "user", content: "Is it sunny in Paris and in Lyon?" };

/** A reasoning model of each format; Gemini's is a Gemini 3 one, which checks signatures. */
export const MODELS = {
  openai_chat: "deepseek-reasoner",
  anthropic_messages: "claude-sonnet-4-5",
  openai_responses: "gpt-5",
  gemini: "gemini-3-pro-preview",
};

/** Two tool calls, then the answer: a three-turn tool loop. */
export const LOOP = [
  { reasoning: true, toolCall: { name: "get_weather", arguments: '{"city":"Paris"}' } },
  { reasoning: true, toolCall: { name: "get_weather", arguments: '{"city":"Lyon"}' } },
  { reasoning: true, text: "Sunny in both." },
];

/** One turn through `stream` or `complete`; returns the Completion (the stream's done event). */
async function turn(baton, route, mode, request, options) {
  if (mode === "complete") return baton.complete(route, request, options);
  const events = await drain(baton.stream(route, request, options), performance.now());
  const done = events.at(-1);
  if (done?.type !== "done") fail(`the stream ended without done`, events);
  // The stream's events carry the same state as its done.message.
  const streamed = events.filter((e) => e.state).map((e) => e.state);
  const kept = [...(done.message.content ?? []).filter((p) => p.state), ...(done.message.toolCalls ?? []).filter((c) => c.state)];
  eq(JSON.stringify(streamed), JSON.stringify(kept.map((p) => p.state)), "the stream's state events and done.message");
  return done;
}

/** Runs the loop: each answer's `message` pushed onto the history, each call answered. */
async function loop(baton, route, mode, turns, options) {
  const messages = [QUESTION];
  const completions = [];
  for (let i = 0; i < turns; i++) {
    const done = await turn(baton, route, mode, { messages, tools: TOOLS, reasoning: { effort: "low" } }, options);
    completions.push(done);
    messages.push(done.message);
    for (const call of done.toolCalls ?? []) messages.push({ role: "tool", toolCallId: call.id, content: "sunny" });
  }
  return { messages, completions };
}

/** What each format's provider must see again in the next request: the state it issued. */
export function stateIn(format, body) {
  const text = JSON.stringify(body);
  const shapes = {
    anthropic_messages: ['"type":"thinking"', '"signature":"sig.', '"type":"redacted_thinking"'],
    gemini: ['"thoughtSignature":"sig.'],
    openai_responses: ['"type":"reasoning"', '"encrypted_content":"sig.'],
    openai_chat: [],
  };
  return shapes[format].filter((s) => !text.includes(s));
}

/** One Chat Completions turn through the gateway: the answer's message, as a client keeps it. */
async function gatewayTurn(gateway, messages, what) {
  const tools = TOOLS.map((t) => ({ type: "function", function: t }));
  const body = JSON.stringify({ model: "t", messages, tools, reasoning_effort: "low" });
  const res = await gateway.fetch(new Request("http://gateway.test/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer gw-key" },
    body,
  }));
  const text = await res.text();
  if (res.status !== 200) fail(`${what}: answered ${res.status}`, text);
  return JSON.parse(text).choices[0].message;
}

export const agents = {
  async "agents: a three-turn tool loop in each format keeps its reasoning state, streamed and whole"(env) {
    for (const format of Object.keys(MODELS)) {
      for (const mode of ["stream", "complete"]) {
        const what = `${format} ${mode}`;
        const t = await script(env, `agent-${format}-${mode}`, LOOP);
        const baton = new env.Baton({ targets: { t: target(env, t, { format, model: MODELS[format] }) } });
        const { completions } = await loop(baton, "t", mode, 3);
        eq(completions.map((c) => c.finishReason).join(), "tool_calls,tool_calls,stop", `${what}: finish reasons`);
        eq(completions[2].text, "Sunny in both.", `${what}: the final answer`);
        const reasoning = completions[0].message.content.find((p) => p.type === "reasoning");
        if (!reasoning?.text) fail(`${what}: turn 1's message holds no reasoning text`, completions[0].message);
        if (format !== "openai_chat") {
          const state = reasoning.state ?? completions[0].message.toolCalls?.[0]?.state;
          eq(state?.format, format, `${what}: the state names its format`);
          eq(state?.model, MODELS[format], `${what}: the state names its model`);
        }
        const r = await upstream(env, t, { requests: 3 });
        for (const [i, entry] of r.log.entries()) {
          if (i === 0) continue;
          const missing = stateIn(format, entry.body);
          if (missing.length) fail(`${what}: request ${i + 1} lacks ${missing.join(", ")}`, entry.body);
        }
      }
    }
  },

  // The gateway does not carry the state to its clients yet (docs/agents.md): a Chat client's
  // history comes back without it, and the rule still keeps each target from a 400.
  async "agents: a Chat client's tool loop through the gateway to Gemini 3 and to Anthropic thinking gets no 400"(env) {
    for (const format of ["gemini", "anthropic_messages"]) {
      const t = await script(env, `agent-gateway-${format}`, LOOP);
      const gateway = env.createGateway({
        targets: { t: target(env, t, { format, model: MODELS[format] }) },
        gateway: { apiKeys: ["gw-key"] },
      });
      const messages = [QUESTION];
      let message;
      for (let i = 1; i <= 3; i++) {
        message = await gatewayTurn(gateway, messages, `${format} turn ${i}`);
        messages.push(message);
        for (const call of message.tool_calls ?? []) messages.push({ role: "tool", tool_call_id: call.id, content: "sunny" });
      }
      eq(message.content, "Sunny in both.", `${format}: the final answer`);
      const r = await upstream(env, t, { requests: 3 });
      const first = r.log[0].body;
      if (format === "gemini") sameJson(first.generationConfig?.thinkingConfig, { thinkingLevel: "low" }, "gemini: reasoning_effort");
      else eq(first.thinking?.budget_tokens, 2048, "anthropic: reasoning_effort low as its budget");
    }
  },

  async "agents: turn 2 fails over from Anthropic thinking to Gemini 3, and turn 3 goes back, without a 400"(env) {
    for (const mode of ["stream", "complete"]) {
      const a = await script(env, `agent-anthropic-${mode}`, [
        LOOP[0],
        { status: 529, message: "Overloaded", errorType: "overloaded_error" },
        LOOP[2],
      ]);
      const g = await script(env, `agent-gemini-${mode}`, [LOOP[1]]);
      const baton = new env.Baton({
        targets: {
          claude: target(env, a, { format: "anthropic_messages", model: MODELS.anthropic_messages }),
          gemini: target(env, g, { format: "gemini", model: MODELS.gemini }),
        },
        routes: { agent: { fallback: ["claude", "gemini"] } },
      });
      const warnings = [];
      const onEvent = (ev) => ev.type === "warning" && warnings.push(ev.message);
      const { completions } = await loop(baton, "agent", mode, 3, { onEvent });
      eq(completions.map((c) => c.target).join(), "claude,gemini,claude", `${mode}: who answered each turn`);
      eq(completions[2].text, "Sunny in both.", `${mode}: the final answer`);
      const [claude, gemini] = [await upstream(env, a, { requests: 3 }), await upstream(env, g, { requests: 1 })];
      // Gemini got no Anthropic thinking, and Google's skip value on the call Claude made.
      const toGemini = JSON.stringify(gemini.log[0].body);
      if (toGemini.includes("sig.") || toGemini.includes("The user wants this")) fail(`${mode}: Anthropic's reasoning reached Gemini`, gemini.log[0].body);
      if (!toGemini.includes('"thoughtSignature":"skip_thought_signature_validator"')) fail(`${mode}: Claude's call reached Gemini 3 without the skip signature`, gemini.log[0].body);
      // Back at Claude: no Gemini signature, and no thinking on a tool turn Claude did not sign.
      const back = claude.log[2].body;
      if (JSON.stringify(back).includes("thoughtSignature")) fail(`${mode}: Gemini's signature reached Claude`, back);
      eq(back.thinking, undefined, `${mode}: thinking on the turn Gemini began`);
      if (!warnings.some((w) => w.includes("thinking is off"))) fail(`${mode}: no warning that thinking was turned off`, warnings);
    }
  },
};
