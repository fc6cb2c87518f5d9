// Agent loops against reasoning models: the scripted provider's `reasoning: true` steps issue
// each format's reasoning state (Anthropic thinking signatures and redacted thinking, Gemini 3
// thought signatures, Responses reasoning items with encrypted content) and refuse, with the
// provider's own 400, a history that lacks or alters it (tests/provider/src/wire/reasoning.rs).
// Part of scenarios.mjs, so every runtime runs them.
import { script, upstream, fail, eq, sameJson, target, drain } from "./scenarios.mjs";

export const TOOLS = [{ name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } }];
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
    // DeepSeek's thinking mode, Kimi K2 and GLM want a tool turn's reasoning back as reasoning_content.
    openai_chat: ['"reasoning_content":"'],
  };
  return shapes[format].filter((s) => !text.includes(s));
}

/** Server-sent events' data, parsed; `[DONE]` left out. */
function sseData(text) {
  return text.split("\n").filter((l) => l.startsWith("data: ") && l !== "data: [DONE]").map((l) => JSON.parse(l.slice(6)));
}

/**
 * Each client format through the gateway, as its client keeps a conversation: the request it
 * sends (its own reasoning fields on), the assistant turn it reads from a whole or streamed
 * answer, and the history it pushes that turn and its tool results onto.
 */
const CLIENTS = {
  chat: {
    path: "/v1/chat/completions",
    body: (history, stream) => ({ model: "agent", stream, messages: history, reasoning_effort: "low", tools: TOOLS.map((t) => ({ type: "function", function: t })) }),
    turn(res, stream) {
      if (!stream) return res.choices[0].message;
      const message = { role: "assistant", content: "", tool_calls: [] };
      for (const chunk of sseData(res)) {
        const delta = chunk.choices?.[0]?.delta ?? {};
        message.content += delta.content ?? "";
        for (const c of delta.tool_calls ?? []) {
          const call = (message.tool_calls[c.index] ??= { id: c.id, type: "function", function: { name: c.function.name, arguments: "" } });
          call.function.arguments += c.function.arguments ?? "";
        }
      }
      if (!message.tool_calls.length) delete message.tool_calls;
      return message;
    },
    push(history, message) {
      history.push(message);
      for (const call of message.tool_calls ?? []) history.push({ role: "tool", tool_call_id: call.id, content: "sunny" });
      return { text: message.content, calls: (message.tool_calls ?? []).length };
    },
  },
  anthropic: {
    path: "/v1/messages",
    body: (history, stream) => ({
      model: "agent", stream, max_tokens: 4096, messages: history, thinking: { type: "enabled", budget_tokens: 2048 },
      tools: TOOLS.map((t) => ({ name: t.name, input_schema: t.parameters })),
    }),
    turn(res, stream) {
      if (!stream) return res.content;
      const blocks = [];
      for (const ev of sseData(res)) {
        if (ev.type === "content_block_start") blocks[ev.index] = { ...ev.content_block, json: "" };
        if (ev.type !== "content_block_delta") continue;
        const b = blocks[ev.index], d = ev.delta;
        if (d.type === "text_delta") b.text += d.text;
        if (d.type === "thinking_delta") b.thinking += d.thinking;
        if (d.type === "signature_delta") b.signature = d.signature;
        if (d.type === "input_json_delta") b.json += d.partial_json;
      }
      return blocks.map(({ json, ...b }) => (b.type === "tool_use" ? { ...b, input: JSON.parse(json || "{}") } : b));
    },
    push(history, content) {
      history.push({ role: "assistant", content });
      const calls = content.filter((b) => b.type === "tool_use");
      if (calls.length) history.push({ role: "user", content: calls.map((c) => ({ type: "tool_result", tool_use_id: c.id, content: "sunny" })) });
      return { text: content.filter((b) => b.type === "text").map((b) => b.text).join(""), calls: calls.length };
    },
  },
  responses: {
    path: "/v1/responses",
    body: (history, stream) => ({
      model: "agent", stream, input: history, reasoning: { effort: "low" }, include: ["reasoning.encrypted_content"],
      tools: TOOLS.map((t) => ({ type: "function", ...t })),
    }),
    turn: (res, stream) => (stream ? sseData(res).find((e) => e.type === "response.completed").response : res).output,
    push(history, output) {
      history.push(...output);
      const calls = output.filter((i) => i.type === "function_call");
      for (const c of calls) history.push({ type: "function_call_output", call_id: c.call_id, output: "sunny" });
      const text = output.filter((i) => i.type === "message").flatMap((i) => i.content).map((p) => p.text).join("");
      return { text, calls: calls.length };
    },
  },
};

/** A gateway for `targets`, whose route `agent` is `members` in order. */
function agentGateway(env, targets) {
  const members = Object.keys(targets);
  return env.createGateway({ targets, routes: { agent: { fallback: members } }, gateway: { apiKeys: ["gw-key"] } });
}

/** Runs a three-turn tool loop of `client` through the gateway; returns each turn's `{text, calls}`. */
async function gatewayLoop(gateway, client, stream, what) {
  const c = CLIENTS[client];
  const history = [c === CLIENTS.responses ? { role: "user", content: QUESTION.content } : QUESTION];
  const turns = [];
  for (let i = 1; i <= 3; i++) {
    const res = await gateway.fetch(new Request(`http://gateway.test${c.path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer gw-key", "x-api-key": "gw-key" },
      body: JSON.stringify(c.body(history, stream)),
    }));
    const text = await res.text();
    if (res.status !== 200) fail(`${what} turn ${i}: answered ${res.status}`, text);
    turns.push(c.push(history, c.turn(stream ? text : JSON.parse(text), stream)));
  }
  return turns;
}

/** What a target of `format` must have been sent again, by the provider's log: its own state, no skip value. */
export function checkResent(format, log, what) {
  for (const [i, entry] of log.entries()) {
    if (i === 0) continue;
    const missing = stateIn(format, entry.body);
    if (missing.length) fail(`${what}: request ${i + 1} lacks ${missing.join(", ")}`, entry.body);
    if (JSON.stringify(entry.body).includes("skip_thought_signature_validator")) fail(`${what}: request ${i + 1} fell back on Google's skip value`, entry.body);
    if (format === "anthropic_messages" && !entry.body.thinking) fail(`${what}: request ${i + 1} has thinking off`, entry.body);
  }
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

  // The gateway carries the state to its clients in what they echo (docs/agents.md): each
  // upstream gets its own state back, Gemini 3 without the skip value, Anthropic with thinking on.
  async "agents: each client format's three-turn tool loop through the gateway keeps every upstream's state, streamed and whole"(env) {
    for (const client of Object.keys(CLIENTS)) {
      for (const format of Object.keys(MODELS)) {
        for (const stream of [false, true]) {
          const what = `${client} client to ${format}${stream ? ", streamed" : ""}`;
          const t = await script(env, `agent-gw-${client}-${format}-${stream}`, LOOP);
          const turns = await gatewayLoop(agentGateway(env, { t: target(env, t, { format, model: MODELS[format] }) }), client, stream, what);
          eq(turns.map((turn) => turn.calls).join(), "1,1,0", `${what}: the calls of each turn`);
          eq(turns[2].text, "Sunny in both.", `${what}: the final answer`);
          checkResent(format, (await upstream(env, t, { requests: 3 })).log, what);
        }
      }
    }
  },

  async "agents: a Chat client's turn 2 fails over from Anthropic thinking to Gemini 3 through the gateway, and turn 3 goes back, without a 400"(env) {
    for (const stream of [false, true]) {
      const a = await script(env, `agent-gw-anthropic-${stream}`, [LOOP[0], { status: 529, message: "Overloaded", errorType: "overloaded_error" }, LOOP[2]]);
      const g = await script(env, `agent-gw-gemini-${stream}`, [LOOP[1]]);
      const gateway = agentGateway(env, {
        claude: target(env, a, { format: "anthropic_messages", model: MODELS.anthropic_messages }),
        gemini: target(env, g, { format: "gemini", model: MODELS.gemini }),
      });
      const turns = await gatewayLoop(gateway, "chat", stream, `failover${stream ? ", streamed" : ""}`);
      eq(turns[2].text, "Sunny in both.", `${stream}: the final answer`);
      const [claude, gemini] = [await upstream(env, a, { requests: 3 }), await upstream(env, g, { requests: 1 })];
      const toGemini = JSON.stringify(gemini.log[0].body);
      if (toGemini.includes("sig.")) fail(`${stream}: Anthropic's state reached Gemini`, gemini.log[0].body);
      // Claude's own thinking came back in turn 2's history (the attempt Claude refused with a 529).
      checkResent("anthropic_messages", claude.log.slice(0, 2), `${stream}: to Claude`);
      if (JSON.stringify(claude.log[2].body).includes("thoughtSignature")) fail(`${stream}: Gemini's signature reached Claude`, claude.log[2].body);
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
