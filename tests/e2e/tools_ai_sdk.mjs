// The AI SDK (ai 7) over llm-baton's language model (llm-baton/ai-sdk), in Node, workerd and
// Chromium (tools.test.mjs). Every call goes through a route whose primary answers 503, so the
// answer always comes from the backup after a failover inside llm-baton; the provider's log
// tells what each target received and how many requests it got.
import { APICallError, InvalidArgumentError, InvalidPromptError, NoSuchModelError, Output, convertToModelMessages, generateText, isStepCount, readUIMessageStream, streamText, tool } from "ai";
import { createBatonProvider } from "llm-baton/ai-sdk";
import { z } from "zod";
import { fail, requests, sameJson as eq, script, target } from "./scenarios.mjs";
import { LOOP, MODELS, QUESTION, stateIn } from "./agents.mjs";

const KEY = "sk-test-aisdk-not-a-secret";
// The scenarios check the warnings themselves; the AI SDK would also print each one.
globalThis.AI_SDK_LOG_WARNINGS = false;

/**
 * A Baton whose route "chat" fails over from `primary` (503 on every request) to `backup`
 * (scripted with `backupSteps`), and the AI SDK provider over it. Returns ids and the provider.
 */
async function setup(env, label, backupSteps) {
  const p = await script(env, `${label}-p`, [{ status: 503, message: "primary overloaded" }]);
  const b = await script(env, `${label}-b`, backupSteps);
  const target = (id) => ({ format: "openai_chat", baseUrl: `${env.providerUrl}/s/${id}/v1`, model: "scripted-model", apiKey: KEY });
  const baton = new env.llm.Baton({
    targets: { primary: target(p), backup: target(b) },
    routes: { chat: { fallback: ["primary", "backup"] } },
  });
  return { p, b, baton, batonAi: createBatonProvider(baton) };
}

const weatherTool = (calls) => tool({
  description: "The weather in a city",
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => {
    calls.push(city);
    return { city, sky: "sunny" };
  },
});

/** The opaque values of a reasoning state: what its issuer must get back unchanged. */
const opaqueOf = (state) => [state.signature, state.redactedData, state.id, state.encryptedContent].filter(Boolean);

/** The states a step's content carries, in `providerMetadata.baton.state`. */
const statesOf = (step) => step.content.filter((part) => part.providerMetadata?.baton?.state).map((part) => part.providerMetadata.baton.state);

/**
 * The scripted provider's three-turn tool loop on a reasoning model of each format, which
 * refuses (with its own 400) a history missing or altering the state it issued, run by
 * generateText or streamText (`run(model, tools)`, returning the result's steps, text and
 * response messages), then one more turn from the messages kept: each request after the first
 * must carry the state the step before it issued.
 */
async function reasoningLoop(env, label, run) {
  for (const [format, model] of Object.entries(MODELS)) {
    const what = `${label} ${format}`;
    const id = await script(env, `${label}-${format}`, [...LOOP, { reasoning: true, text: "You're welcome." }]);
    const baton = new env.llm.Baton({ targets: { t: target(env, id, { format, model }) } });
    const cities = [];
    const tools = { get_weather: weatherTool(cities) };
    const batonModel = createBatonProvider(baton)("t");
    const { steps, text, messages } = await run(batonModel, tools);
    eq([steps.map((s) => s.finishReason), cities, text], [["tool-calls", "tool-calls", "stop"], ["Paris", "Lyon"], "Sunny in both."], `${what}: finish reasons, tool runs, answer`);
    // The next turn, from the messages an app keeps: the final answer's state goes back too.
    const history = [{ role: "user", content: QUESTION.content }, ...messages, { role: "user", content: "Thanks." }];
    await generateText({ model: batonModel, tools, reasoning: "low", messages: history });
    const r = await requests(env, id, 4, what);
    const first = r.log[0].body;
    const asked = { openai_chat: first.reasoning_effort, anthropic_messages: first.thinking?.budget_tokens, openai_responses: first.include?.[0], gemini: first.generationConfig?.thinkingConfig?.thinkingLevel };
    const expected = { openai_chat: "low", anthropic_messages: 2048, openai_responses: "reasoning.encrypted_content", gemini: "low" };
    eq(asked[format], expected[format], `${what}: the AI SDK's reasoning "low" as the format's field`);
    for (const i of [1, 2, 3]) {
      const missing = stateIn(format, r.log[i].body);
      if (missing.length) fail(`${what}: request ${i + 1} lacks ${missing.join(", ")}`, r.log[i].body);
      const states = statesOf(steps[i - 1]);
      if (format !== "openai_chat" && !states.length) fail(`${what}: step ${i} carries no state in providerMetadata.baton`, steps[i - 1].content);
      const sent = JSON.stringify(r.log[i].body);
      for (const state of states) {
        eq([state.format, state.model], [format, model], `${what}: step ${i}'s state names its issuer`);
        for (const value of opaqueOf(state)) if (!sent.includes(JSON.stringify(value))) fail(`${what}: request ${i + 1} lacks the state step ${i} issued (${value})`, r.log[i].body);
      }
    }
  }
}

export const scenarios = {
  async "generateText with tools and stopWhen: the reasoning state of each format round-trips through providerMetadata, no 400"(env) {
    await reasoningLoop(env, "gen-reasoning", async (model, tools) => {
      const result = await generateText({ model, tools, prompt: QUESTION.content, reasoning: "low", stopWhen: isStepCount(4) });
      return { steps: result.steps, text: result.text, messages: result.response.messages };
    });
  },

  async "streamText with tools and stopWhen: reasoning-end parts carry the state, which round-trips, no 400"(env) {
    await reasoningLoop(env, "stream-reasoning", async (model, tools) => {
      const result = streamText({ model, tools, prompt: QUESTION.content, reasoning: "low", stopWhen: isStepCount(4) });
      const parts = [];
      for await (const part of result.fullStream) parts.push(part);
      const errors = parts.filter((x) => x.type === "error");
      if (errors.length) fail(`the stream carried an error: ${errors[0].error}`);
      const ends = parts.filter((x) => x.type === "reasoning-end" && x.providerMetadata?.baton?.state);
      const steps = await result.steps;
      eq(ends.length, steps.flatMap((s) => s.content).filter((p) => p.type === "reasoning" && p.providerMetadata?.baton?.state).length, "reasoning-end parts with a state, one per stateful reasoning part");
      return { steps, text: await result.text, messages: (await result.response).messages };
    });
  },

  async "a loop whose step 2 fails over from Anthropic thinking to Gemini 3 and back: each gets only its own state, no 400"(env) {
    const a = await script(env, "failover-reasoning-claude", [LOOP[0], { status: 529, message: "Overloaded", errorType: "overloaded_error" }, LOOP[2]]);
    const g = await script(env, "failover-reasoning-gemini", [LOOP[1]]);
    const baton = new env.llm.Baton({
      targets: {
        claude: target(env, a, { format: "anthropic_messages", model: MODELS.anthropic_messages }),
        gemini: target(env, g, { format: "gemini", model: MODELS.gemini }),
      },
      routes: { agent: { fallback: ["claude", "gemini"] } },
    });
    const result = await generateText({ model: createBatonProvider(baton)("agent"), tools: { get_weather: weatherTool([]) }, prompt: QUESTION.content, reasoning: "low", stopWhen: isStepCount(4) });
    eq([result.steps.map((s) => s.providerMetadata?.baton?.target), result.text], [["claude", "gemini", "claude"], "Sunny in both."], "who answered each step, and the answer");
    const [toClaude, toGemini] = [(await requests(env, a, 3, "claude")).log, (await requests(env, g, 1, "gemini")).log];
    const gemini = JSON.stringify(toGemini[0].body);
    if (gemini.includes('"sig.') || !gemini.includes('"thoughtSignature":"skip_thought_signature_validator"')) fail("Gemini got Claude's state, or Claude's call without the skip signature", toGemini[0].body);
    const back = toClaude[2].body;
    if (JSON.stringify(back).includes("thoughtSignature")) fail("Gemini's signature reached Claude", back);
    eq(back.thinking, undefined, "thinking on the tool turn Gemini began");
  },

  async "useChat's round trip: the state goes to the browser in UI message parts and comes back through convertToModelMessages"(env) {
    for (const format of ["anthropic_messages", "gemini", "openai_responses"]) {
      const id = await script(env, `ui-reasoning-${format}`, LOOP.slice(0, 2));
      const baton = new env.llm.Baton({ targets: { t: target(env, id, { format, model: MODELS[format] }) } });
      const model = createBatonProvider(baton)("t");
      const tools = { get_weather: weatherTool([]) };
      // Each request is one route handler call; the browser keeps the UI messages between them.
      const turn = async (messages) => {
        const result = streamText({ model, tools, reasoning: "low", messages: await convertToModelMessages(messages) });
        let message;
        for await (const m of readUIMessageStream({ stream: result.toUIMessageStream() })) message = m;
        return message;
      };
      const user = { id: "u1", role: "user", parts: [{ type: "text", text: QUESTION.content }] };
      const first = await turn([user]);
      // What a browser receives and posts back: JSON.
      const kept = JSON.parse(JSON.stringify(first));
      const states = kept.parts.flatMap((p) => [p.providerMetadata?.baton?.state, p.callProviderMetadata?.baton?.state]).filter(Boolean);
      if (!states.length) fail(`${format}: the UI message carries no state`, kept.parts);
      await turn([user, kept]);
      const r = await requests(env, id, 2, format);
      const missing = stateIn(format, r.log[1].body);
      if (missing.length) fail(`${format}: the second request lacks ${missing.join(", ")}`, r.log[1].body);
      const sent = JSON.stringify(r.log[1].body);
      for (const value of states.flatMap(opaqueOf)) if (!sent.includes(JSON.stringify(value))) fail(`${format}: the second request lacks ${value}`, r.log[1].body);
    }
  },

  async "reasoning levels: xhigh is sent as high and none as no reasoning, each with a compatibility warning; providerOptions.baton.reasoning fills in and wins"(env) {
    const id = await script(env, "reasoning-levels", [{ text: "a" }, { text: "b" }, { text: "c" }]);
    const baton = new env.llm.Baton({ targets: { t: target(env, id, { format: "openai_responses", model: "gpt-5" }) } });
    const model = createBatonProvider(baton)("t");
    const rounded = await generateText({ model, prompt: "x", reasoning: "xhigh", providerOptions: { baton: { reasoning: { summary: true } } } });
    eq(rounded.warnings.map((w) => [w.type, w.feature]), [["compatibility", "reasoning"]], "xhigh: warnings");
    const decided = await generateText({ model, prompt: "x", reasoning: "max", providerOptions: { baton: { reasoning: { effort: "minimal" } } } });
    eq(decided.warnings, [], "max under providerOptions.baton.reasoning's effort: warnings");
    const none = await generateText({ model, prompt: "x", reasoning: "none" });
    eq(none.warnings.map((w) => [w.type, w.feature]), [["compatibility", "reasoning"]], "none: warnings");
    const bodies = (await requests(env, id, 3, "the target")).log.map((e) => e.body);
    eq(bodies.map((b) => b.reasoning ?? null), [{ effort: "high", summary: "auto" }, { effort: "minimal" }, null], "the reasoning each request carried");
  },

  async "a reasoning state the AI SDK hands back altered in shape: InvalidPromptError naming it, nothing sent"(env) {
    const id = await script(env, "bad-state", [{}]);
    const baton = new env.llm.Baton({ targets: { t: target(env, id, { format: "anthropic_messages", model: "claude-sonnet-4-5" }) } });
    const error = await createBatonProvider(baton)("t").doGenerate({
      prompt: [
        { role: "user", content: [{ type: "text", text: "Hi" }] },
        { role: "assistant", content: [{ type: "reasoning", text: "Hmm.", providerOptions: { baton: { state: { format: "anthropic_messages" } } } }, { type: "text", text: "Hello." }] },
        { role: "user", content: [{ type: "text", text: "Again?" }] },
      ],
    }).then(() => null, (e) => e);
    if (!InvalidPromptError.isInstance(error)) fail(`expected InvalidPromptError, got ${error?.name}: ${error?.message}`);
    if (!error.message.includes("request.messages[1].content[0].state")) fail(`the message should name the state: ${error.message}`);
    await requests(env, id, 0, "the target");
  },

  async "an error about a message after split tool results names the AI SDK's prompt index too"(env) {
    const id = await script(env, "bad-state-index", [{}]);
    const baton = new env.llm.Baton({ targets: { t: target(env, id, { format: "anthropic_messages", model: "claude-sonnet-4-5" }) } });
    const call = (toolCallId) => ({ type: "tool-call", toolCallId, toolName: "weather", input: { city: "Oslo" } });
    const result = (toolCallId) => ({ type: "tool-result", toolCallId, toolName: "weather", output: { type: "text", value: "Cold." } });
    const error = await createBatonProvider(baton)("t").doGenerate({
      prompt: [
        { role: "user", content: [{ type: "text", text: "Weather in Oslo, twice?" }] },
        { role: "assistant", content: [call("c1"), call("c2")] },
        // One AI SDK message, two llm-baton tool messages: prompt[3] becomes request.messages[4].
        { role: "tool", content: [result("c1"), result("c2")] },
        { role: "assistant", content: [{ type: "reasoning", text: "Hmm.", providerOptions: { baton: { state: { format: "anthropic_messages" } } } }, { type: "text", text: "Cold twice." }] },
        { role: "user", content: [{ type: "text", text: "Thanks." }] },
      ],
    }).then(() => null, (e) => e);
    if (!InvalidPromptError.isInstance(error)) fail(`expected InvalidPromptError, got ${error?.name}: ${error?.message}`);
    if (!error.message.includes("request.messages[4].content[0].state")) fail(`the message should name the state: ${error.message}`);
    if (!error.message.includes("(request.messages[4] is the AI SDK's prompt[3])")) fail(`the message should name the prompt's message: ${error.message}`);
    await requests(env, id, 0, "the target");
  },

  async "streamText with a tool: the tool runs, the answer, tool call and usage come through the failover"(env) {
    const { p, b, batonAi } = await setup(env, "stream-tool", [
      { toolCall: { name: "weather", arguments: '{"city":"Paris"}' } },
      // Words 20 ms apart: the deltas of one network read reach the reader as one item.
      { text: "It is sunny in Paris.", chunkDelayMs: 20 },
    ]);
    const calls = [];
    const result = streamText({
      model: batonAi("chat"),
      prompt: "What is the weather in Paris?",
      tools: { weather: weatherTool(calls) },
      stopWhen: isStepCount(2),
      includeRawChunks: true,
    });
    const parts = [];
    for await (const part of result.fullStream) parts.push(part);
    const errors = parts.filter((x) => x.type === "error");
    if (errors.length) fail(`the stream carried an error: ${errors[0].error}`);

    eq(calls, ["Paris"], "the tool's executions");
    const toolCalls = parts.filter((x) => x.type === "tool-call");
    eq(toolCalls.map((x) => [x.toolName, x.input]), [["weather", { city: "Paris" }]], "tool-call parts");
    const inputStart = parts.find((x) => x.type === "tool-input-start");
    eq([inputStart?.toolName, inputStart?.id], ["weather", toolCalls[0].toolCallId], "tool-input-start");
    const streamedInput = parts.filter((x) => x.type === "tool-input-delta").map((x) => x.delta).join("");
    eq(streamedInput, '{"city":"Paris"}', "the tool input streamed as tool-input-delta parts");
    eq(parts.filter((x) => x.type === "tool-input-end").length, 1, "tool-input-end parts");
    const results = parts.filter((x) => x.type === "tool-result");
    eq(results.map((x) => x.output), [{ city: "Paris", sky: "sunny" }], "tool-result parts");

    eq(await result.text, "It is sunny in Paris.", "the final step's text");
    const deltas = parts.filter((x) => x.type === "text-delta").map((x) => x.text);
    if (deltas.length < 2) fail("expected the text in several text-delta parts (one per word)", deltas);
    eq(await result.finishReason, "stop", "finishReason");
    eq((await result.steps).map((s) => s.finishReason), ["tool-calls", "stop"], "each step's finishReason");
    // The scripted provider reports 3 input tokens and one output token per word (the call: 1).
    const usage = await result.totalUsage;
    eq([usage.inputTokens, usage.outputTokens, usage.totalTokens], [6, 6, 12], "totalUsage (input, output, total)");

    eq((await result.response).modelId, "scripted-model", "response.modelId (response-metadata)");
    const meta = (await result.providerMetadata)?.baton;
    eq(meta?.target, "backup", "providerMetadata.baton.target");
    eq(meta?.legs?.map((l) => [l.target, l.outcome, l.status ?? null]), [["primary", "http", 503], ["backup", "ok", null]], "providerMetadata.baton.legs");
    const raw = parts.filter((x) => x.type === "raw").map((x) => x.rawValue);
    if (!raw.some((ev) => ev.type === "failover" && ev.from === "primary" && ev.to === "backup")) {
      fail("includeRawChunks: expected llm-baton's failover event among the raw parts", raw.map((ev) => ev.type));
    }

    await requests(env, p, 2, "primary (one per step)");
    const r = await requests(env, b, 2, "backup (one per step)");
    const second = r.log[1].body.messages;
    eq(second.map((m) => m.role), ["user", "assistant", "tool"], "the second step's messages");
    eq(second[1].tool_calls?.map((c) => [c.id, c.function.name, c.function.arguments]), [[toolCalls[0].toolCallId, "weather", '{"city":"Paris"}']], "the replayed tool call");
    eq([second[2].tool_call_id, JSON.parse(second[2].content)], [toolCalls[0].toolCallId, { city: "Paris", sky: "sunny" }], "the tool result sent back");
  },

  async "reasoning: streamed as reasoning parts before the text, and whole as reasoning content"(env) {
    const chunk = (delta, finish = null, usage) => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: "thinker-1", choices: [{ index: 0, delta, finish_reason: finish }], ...(usage && { usage }) })}\n\n`;
    const usage = { prompt_tokens: 4, completion_tokens: 6, total_tokens: 10 };
    const streamed = [chunk({ role: "assistant", reasoning_content: "Think" }), chunk({ reasoning_content: "ing." }), chunk({ content: "Answer." }), chunk({}, "stop", usage), "data: [DONE]\n\n"];
    const whole = JSON.stringify({ id: "c2", object: "chat.completion", model: "thinker-1", choices: [{ index: 0, message: { role: "assistant", content: "Answer.", reasoning_content: "Thinking." }, finish_reason: "stop" }], usage });
    const { batonAi } = await setup(env, "reasoning", [{ raw: { chunks: streamed } }, { raw: { contentType: "application/json", chunks: [whole] } }]);

    const result = streamText({ model: batonAi("chat"), prompt: "Think, then answer." });
    const parts = [];
    for await (const part of result.fullStream) parts.push(part);
    // Adjacent deltas that reach llm-baton in one read are one item, so the two reasoning chunks
    // are one or two reasoning-delta parts, as the runtime's fetch splits the body.
    const shape = parts.filter((x) => /^(reasoning|text)-/.test(x.type)).map((x) => x.type).filter((t, i, all) => t !== "reasoning-delta" || all[i - 1] !== t);
    eq(shape, ["reasoning-start", "reasoning-delta", "reasoning-end", "text-start", "text-delta", "text-end"], "stream part order");
    eq([await result.reasoningText, await result.text], ["Thinking.", "Answer."], "streamed reasoning and text");
    const usageStreamed = await result.usage;
    eq([usageStreamed.inputTokens, usageStreamed.outputTokens, (await result.response).modelId], [4, 6, "thinker-1"], "streamed usage and model");

    const out = await generateText({ model: batonAi("chat"), prompt: "Think, then answer." });
    eq([out.reasoningText, out.text, out.usage.outputTokens, out.response.modelId], ["Thinking.", "Answer.", 6, "thinker-1"], "whole reasoning, text, usage and model");
    // Chat's reasoning_content is the model's own reasoning, not a summary: the parts say so.
    const rawMarks = (content) => content.filter((p) => p.type === "reasoning").map((p) => p.providerMetadata?.baton?.raw);
    eq([rawMarks(await result.content), rawMarks(out.content)], [[true], [true]], "providerMetadata.baton.raw on the streamed and the whole reasoning part");
  },

  async "raw reasoning replays as raw: a Responses item's reasoning_text goes back as content, not as a summary"(env) {
    const answer = {
      id: "resp_1", object: "response", created_at: 1, status: "completed", model: "thinker-1",
      output: [
        { type: "reasoning", id: "rs_1", encrypted_content: "enc-1", summary: [], content: [{ type: "reasoning_text", text: "Thinking." }] },
        { type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Answer.", annotations: [] }] },
      ],
      usage: { input_tokens: 4, output_tokens: 6, total_tokens: 10 },
    };
    const json = (body) => ({ raw: { contentType: "application/json", chunks: [JSON.stringify(body)] } });
    const id = await script(env, "raw-replay", [json(answer), json({ ...answer, id: "resp_2", output: [answer.output[1]] })]);
    const baton = new env.llm.Baton({
      targets: { thinker: { format: "openai_responses", baseUrl: `${env.providerUrl}/s/${id}/v1`, model: "thinker-1", apiKey: KEY } },
      routes: { chat: { fallback: ["thinker"] } },
    });
    const batonAi = createBatonProvider(baton);
    const first = await generateText({ model: batonAi("chat"), prompt: "Think, then answer." });
    eq(first.content.filter((p) => p.type === "reasoning").map((p) => p.providerMetadata?.baton?.raw), [true], "the reasoning part is marked raw");
    await generateText({ model: batonAi("chat"), messages: [{ role: "user", content: "Think, then answer." }, ...first.response.messages, { role: "user", content: "Again." }] });
    const sent = (await requests(env, id, 2, "the Responses target")).log[1].body.input.find((item) => item.type === "reasoning");
    eq([sent?.id, sent?.encrypted_content, sent?.content, sent?.summary], ["rs_1", "enc-1", [{ type: "reasoning_text", text: "Thinking." }], []], "the replayed reasoning item");
  },

  async "generateText with a JSON schema (Output.object): the object, and the provider got the schema"(env) {
    const { p, b, batonAi } = await setup(env, "gen-json", [{ text: '{"city":"Paris","temperatureC":21}' }]);
    const result = await generateText({
      model: batonAi("chat"),
      output: Output.object({ schema: z.object({ city: z.string(), temperatureC: z.number() }) }),
      prompt: "The weather in Paris as JSON.",
    });
    eq(result.output, { city: "Paris", temperatureC: 21 }, "result.output");
    eq(result.finishReason, "stop", "finishReason");
    eq([result.usage.inputTokens, result.usage.outputTokens], [3, 1], "usage");
    eq(result.providerMetadata?.baton?.target, "backup", "providerMetadata.baton.target");
    eq(result.response.modelId, "scripted-model", "response.modelId");
    await requests(env, p, 1, "primary");
    const body = (await requests(env, b, 1, "backup")).log[0].body;
    eq(body.response_format?.type, "json_schema", "the backup's response_format.type");
    eq(body.response_format?.json_schema?.schema?.properties, { city: { type: "string" }, temperatureC: { type: "number" } }, "the schema the backup received");
  },

  async "images, a PDF and the request parameters reach the provider in its format's fields"(env) {
    const { b, batonAi } = await setup(env, "media", [{ toolCall: { name: "weather", arguments: '{"city":"Rome"}' } }, { text: '{"ok":true}' }]);
    const png = new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13]);
    const pdf = new TextEncoder().encode("%PDF-1.4 tiny");
    const b64 = (bytes) => btoa(String.fromCharCode(...bytes));
    const calls = [];
    const result = await generateText({
      model: batonAi("chat"),
      messages: [{
        role: "user",
        content: [
          { type: "text", text: "What is in these?" },
          { type: "file", data: png, mediaType: "image" }, // the AI SDK reads image/png from the bytes
          { type: "file", data: pdf, mediaType: "application/pdf", filename: "a.pdf" },
          { type: "file", data: new URL("https://example.com/cat.png"), mediaType: "image" }, // passed as a URL
        ],
      }],
      tools: { weather: weatherTool(calls) },
      toolChoice: { type: "tool", toolName: "weather" },
      topP: 0.9,
      seed: 7,
    });
    eq([result.toolCalls.map((c) => c.input), calls], [[{ city: "Rome" }], ["Rome"]], "the named tool's call and execution");
    const json = await generateText({ model: batonAi("chat"), output: Output.json(), prompt: "JSON, please." });
    eq(json.output, { ok: true }, "Output.json()");
    const [first, second] = (await requests(env, b, 2, "backup")).log.map((e) => e.body);
    eq(first.messages[0].content, [
      { type: "text", text: "What is in these?" },
      { type: "image_url", image_url: { url: `data:image/png;base64,${b64(png)}` } },
      { type: "file", file: { filename: "a.pdf", file_data: `data:application/pdf;base64,${b64(pdf)}` } },
      { type: "image_url", image_url: { url: "https://example.com/cat.png" } },
    ], "the user message's parts");
    eq([first.top_p, first.seed, first.tool_choice], [0.9, 7, { type: "function", function: { name: "weather" } }], "top_p, seed, tool_choice");
    eq(second.response_format, { type: "json_object" }, "Output.json(): response_format");
  },

  async "an image URL a Gemini target cannot carry: InvalidPromptError naming the part, nothing sent"(env) {
    const g = await script(env, "carry-g", [{}]);
    const baton = new env.llm.Baton({ targets: { g: { format: "gemini", baseUrl: `${env.providerUrl}/s/${g}/v1beta`, model: "gemini-x", apiKey: KEY } } });
    const error = await generateText({
      model: createBatonProvider(baton)("g"),
      messages: [{ role: "user", content: [{ type: "text", text: "What is this?" }, { type: "file", data: new URL("https://example.com/cat.png"), mediaType: "image" }] }],
    }).then(() => null, (e) => e);
    if (!InvalidPromptError.isInstance(error)) fail(`expected InvalidPromptError, got ${error?.name}: ${error?.message}`);
    if (!error.message.includes("request.messages[0].content[1]")) fail(`the message should name the part: ${error.message}`);
    await requests(env, g, 0, "the Gemini target");
  },

  async "generateText with a tool and call options: the request the provider got, warnings for what is not sent"(env) {
    const { b, baton } = await setup(env, "gen-options", [
      { toolCall: { name: "weather", arguments: '{"city":"Oslo"}' } },
      { text: "Cold." },
    ]);
    const calls = [];
    const events = [];
    const batonAi = createBatonProvider(baton, { onEvent: (ev) => events.push(ev) });
    const result = await generateText({
      model: batonAi("chat"),
      system: "Be brief.",
      prompt: "Weather in Oslo?",
      tools: { weather: weatherTool(calls) },
      stopWhen: isStepCount(2),
      maxOutputTokens: 50,
      temperature: 0.5,
      stopSequences: ["END"],
      topK: 5,
      headers: { "x-trace": "1" },
      providerOptions: { baton: { deadlineMs: 20_000, parallelToolCalls: false } },
    });
    eq([result.text, calls], ["Cold.", ["Oslo"]], "text and tool executions");
    eq(result.steps[0].toolCalls.map((c) => [c.toolName, c.input]), [["weather", { city: "Oslo" }]], "the first step's tool calls");
    eq(events.filter((ev) => ev.type === "failover").map((ev) => `${ev.from}>${ev.to}`), ["primary>backup", "primary>backup"], "settings.onEvent: failover events, one per step");
    const features = result.steps[0].warnings.map((w) => `${w.type}:${w.feature}`);
    eq(features, ["unsupported:topK", "unsupported:headers"], "warnings");
    const r = await requests(env, b, 2, "backup");
    const body = r.log[0].body;
    eq([body.max_tokens ?? body.max_completion_tokens, body.temperature, body.stop, body.stream, body.parallel_tool_calls], [50, 0.5, ["END"], false, false], "max tokens, temperature, stop, stream, parallel_tool_calls");
    eq(body.messages, [{ content: "Be brief.", role: "system" }, { content: "Weather in Oslo?", role: "user" }], "messages");
    eq(body.tools?.map((t) => [t.function.name, t.function.description]), [["weather", "The weather in a city"]], "tools");
    if (r.log.some((e) => "x-trace" in e.headers)) fail("the AI SDK's request headers reached the provider");
  },

  async "the V4 model called directly: a provider-defined tool is left out with a warning, the rest is sent"(env) {
    const { b, batonAi } = await setup(env, "provider-tool", [{ text: "ok" }]);
    const out = await batonAi("chat").doGenerate({
      prompt: [{ role: "user", content: [{ type: "text", text: "Search." }] }],
      tools: [
        { type: "provider", id: "openai.web_search", name: "web_search", args: {} },
        { type: "function", name: "lookup", inputSchema: { type: "object", properties: { q: { type: "string" } } } },
      ],
      toolChoice: { type: "required" },
    });
    eq(out.content, [{ type: "text", text: "ok" }], "content");
    eq(out.finishReason, { unified: "stop", raw: "stop" }, "finishReason");
    eq(out.warnings.map((w) => [w.type, w.feature]), [["unsupported", "provider-defined tool openai.web_search"]], "warnings");
    const body = (await requests(env, b, 1, "backup")).log[0].body;
    eq([body.tools.map((t) => t.function.name), body.tool_choice], [["lookup"], "required"], "tools and tool_choice sent");
  },

  async "a bad llm-baton option is InvalidArgumentError naming it, before anything is sent"(env) {
    const { p, b, batonAi } = await setup(env, "bad-option", [{}]);
    for (const [baton, argument] of [[{ deadlineMs: 0 }, "options.deadlineMs"], [{ retries: 3 }, "providerOptions.baton.retries"]]) {
      const error = await generateText({ model: batonAi("chat"), prompt: "x", providerOptions: { baton } }).then(() => null, (e) => e);
      if (!InvalidArgumentError.isInstance(error)) fail(`${JSON.stringify(baton)}: expected InvalidArgumentError, got ${error?.name}: ${error?.message}`);
      eq(error.argument, argument, `${JSON.stringify(baton)}: error.argument`);
    }
    await requests(env, p, 0, "primary");
    await requests(env, b, 0, "backup");
  },

  // What `apiKey: process.env.OPENAI_API_KEY` with the variable unset gives on the AI SDK's path:
  // the config error at once, not the provider's 401 on the first generateText.
  async "a key given as undefined (an unset environment variable) is a config error before a model exists"(env) {
    const p = await script(env, "undefined-key", [{ text: "unused" }]);
    let error;
    try {
      createBatonProvider(new env.llm.Baton({
        targets: { primary: { format: "openai_chat", baseUrl: `${env.providerUrl}/s/${p}/v1`, model: "scripted-model", apiKey: undefined } },
        routes: { chat: "primary" },
      }));
    } catch (e) {
      error = e;
    }
    if (!(error instanceof env.llm.BatonError)) fail(`expected a BatonError, got ${error?.name}: ${error?.message}`);
    eq([error.kind, error.path, error.message], ["config", "targets.primary.apiKey",
      "targets.primary.apiKey is undefined: an environment variable that is not set? Set it, or leave the field out"], "the error");
    await requests(env, p, 0, "primary");
  },

  async "abortSignal: aborting streamText mid-answer closes the upstream at once"(env) {
    const words = "one two three four five six seven eight nine ten";
    const { p, b, batonAi } = await setup(env, "abort", [{ text: words, chunkDelayMs: 300 }]);
    const ctrl = new AbortController();
    const result = streamText({ model: batonAi("chat"), prompt: "Count to ten.", abortSignal: ctrl.signal });
    const parts = [];
    let abortedAt = 0;
    for await (const part of result.fullStream) {
      parts.push(part);
      if (part.type === "text-delta" && !abortedAt) {
        abortedAt = performance.now();
        ctrl.abort();
      }
    }
    const late = performance.now() - abortedAt;
    if (!abortedAt) fail("no text-delta arrived before the end", parts.map((x) => x.type));
    if (late > 250) fail(`the stream ended ${late.toFixed(0)} ms after the abort; expected at once`);
    if (!parts.some((x) => x.type === "abort")) fail("expected an abort part", parts.map((x) => x.type));
    const got = await result.text.then(() => null, (e) => e);
    eq(got?.name, "AbortError", "result.text rejects with");
    await requests(env, p, 1, "primary");
    const r = await requests(env, b, 1, "backup");
    eq([r.clientClosed, r.completed], [1, 0], "backup request closed by the client, not completed");
  },

  async "a stream cut mid-answer: continued on the backup (afterStart continue), never restarted (mode restart ends it)"(env) {
    const words = Array.from({ length: 12 }, (_, i) => `word${i + 1}`);
    const full = words.join(" ");
    const streamed = async (mode, secondSteps) => {
      const first = await script(env, `cut-${mode}-1`, [{ text: full, stallAfterEvents: 5, stallMs: 100 }]);
      const second = await script(env, `cut-${mode}-2`, secondSteps);
      const target = (id, extra) => ({ format: "openai_chat", baseUrl: `${env.providerUrl}/s/${id}/v1`, model: "scripted-model", apiKey: KEY, ...extra });
      const baton = new env.llm.Baton({
        targets: { first: target(first), second: target(second, { prefill: true }) },
        routes: { chat: { fallback: ["first", "second"], afterStart: { mode } } },
      });
      const errors = [];
      const result = streamText({ model: createBatonProvider(baton)("chat"), prompt: "Count.", onError: ({ error }) => errors.push(error) });
      const parts = [];
      for await (const part of result.fullStream) parts.push(part);
      const text = parts.filter((x) => x.type === "text-delta").map((x) => x.text).join("");
      return { parts, text, result, errors, second };
    };

    const continued = await streamed("continue", [{ continueFrom: full }]);
    eq(continued.parts.filter((x) => x.type === "error").length, 0, "continue: error parts");
    eq(continued.text, full, "continue: the text the AI SDK assembled");
    eq((await continued.result.providerMetadata)?.baton?.contributors, ["first", "second"], "continue: providerMetadata.baton.contributors");
    await requests(env, continued.second, 1, "continue: second");

    const restart = await streamed("restart", [{ text: "A fresh answer." }]);
    const error = restart.parts.find((x) => x.type === "error")?.error;
    if (!APICallError.isInstance(error)) fail("restart: expected the break as an APICallError error part", restart.parts.map((x) => x.type));
    eq([restart.errors.length, restart.errors[0] === error], [1, true], "restart: onError calls");
    eq(restart.text, words.slice(0, 5).join(" "), "restart: the text shown before the break, and nothing after");
    eq(await restart.result.finishReason, "error", "restart: finishReason");
    await requests(env, restart.second, 0, "restart: second");
  },

  async "a route whose every target fails: APICallError, not retryable, no AI SDK retry, no key in it"(env) {
    const { p, b, batonAi } = await setup(env, "fail", [{ status: 500, message: "backup broken", echoCredentials: true }]);
    const error = await generateText({ model: batonAi("chat"), prompt: "Hello?", maxRetries: 2 }).then(() => null, (e) => e);
    if (!APICallError.isInstance(error)) fail(`expected an APICallError, got ${error?.name}: ${error?.message}`);
    eq([error.statusCode, error.isRetryable], [500, false], "APICallError statusCode, isRetryable");
    if (!error.message.includes("backup broken")) fail(`the message should carry the provider's: ${error.message}`);
    eq(error.data?.legs?.map((l) => [l.target, l.status]), [["primary", 503], ["backup", 500]], "error.data.legs");
    for (const [what, text] of [["message", error.message], ["JSON", JSON.stringify(error)], ["stack", String(error.stack)]]) {
      if (text.includes(KEY)) fail(`the API key appears in the error's ${what}`);
    }
    // maxRetries 2 would have made 3 calls of the route: one means the AI SDK did not retry.
    await requests(env, p, 1, "primary");
    await requests(env, b, 1, "backup");
  },

  async "streamText over a failing route: the stream ends with the APICallError, no retry"(env) {
    const { p, b, batonAi } = await setup(env, "stream-fail", [{ status: 500, message: "backup broken" }]);
    const seen = [];
    const result = streamText({ model: batonAi("chat"), prompt: "Hello?", onError: ({ error }) => seen.push(error) });
    const parts = [];
    for await (const part of result.fullStream) parts.push(part);
    const error = parts.find((x) => x.type === "error")?.error;
    if (!APICallError.isInstance(error)) fail(`expected an error part with an APICallError`, parts.map((x) => x.type));
    eq([error.statusCode, error.isRetryable, seen.length], [500, false, 1], "statusCode, isRetryable, onError calls");
    await requests(env, p, 1, "primary");
    await requests(env, b, 1, "backup");
  },

  async "useChat's route handler: toUIMessageStreamResponse streams the answer as UI message chunks"(env) {
    const { b, batonAi } = await setup(env, "ui", [{ text: "Hello from the backup." }]);
    // What useChat posts: UI messages.
    const uiMessages = [{ id: "m1", role: "user", parts: [{ type: "text", text: "Hi!" }] }];
    const result = streamText({ model: batonAi("chat"), system: "Be brief.", messages: await convertToModelMessages(uiMessages) });
    const response = result.toUIMessageStreamResponse();
    eq(response.status, 200, "status");
    if (!response.headers.get("content-type")?.startsWith("text/event-stream")) fail(`content-type ${response.headers.get("content-type")}`);
    eq(response.headers.get("x-vercel-ai-ui-message-stream"), "v1", "x-vercel-ai-ui-message-stream");
    const body = await response.text();
    const chunks = body.split("\n\n").filter((s) => s.startsWith("data: ")).map((s) => s.slice(6));
    eq(chunks.at(-1), "[DONE]", "the last SSE data");
    const json = chunks.slice(0, -1).map((s) => JSON.parse(s));
    const types = json.map((c) => c.type);
    for (const t of ["start", "start-step", "text-start", "text-delta", "text-end", "finish-step", "finish"]) {
      if (!types.includes(t)) fail(`the UI message stream has no ${t} chunk`, types);
    }
    eq(json.filter((c) => c.type === "text-delta").map((c) => c.delta).join(""), "Hello from the backup.", "the streamed text");
    const sent = (await requests(env, b, 1, "backup")).log[0].body.messages;
    eq(sent, [{ content: "Be brief.", role: "system" }, { content: "Hi!", role: "user" }], "the messages the backup received");
  },

  async "a name that is no route or target is NoSuchModelError when the model is made"(env) {
    const { batonAi } = await setup(env, "nosuch", [{}]);
    let error;
    try {
      batonAi("no-such-route");
    } catch (e) {
      error = e;
    }
    if (!NoSuchModelError.isInstance(error)) fail(`expected NoSuchModelError, got ${error?.name}`);
    if (!error.message.includes("chat")) fail(`the message should list the known routes: ${error.message}`);
    eq(batonAi.languageModel("chat").modelId, "chat", "languageModel(\"chat\").modelId");
    eq(batonAi("chat").specificationVersion, "v4", "specificationVersion");
  },
};
