// The fixture corpus (tests/fixtures/{format}/{case}.sse) through the gateway, read back by the
// official SDKs: for every fixture, the scripted provider sends the fixture's bytes verbatim (a
// `raw` step, cut into small pieces that fall inside events), a gateway target of that format
// reads them, and `openai`'s `chat.completions.stream`, `create({stream: true})` and
// `responses.stream` and `@anthropic-ai/sdk`'s `messages.stream` (retries off) read the
// gateway's re-encoded stream. The SDK's final message
// must say what the fixture's golden deltas say: text, reasoning (Anthropic thinking), tool calls
// in the order first opened with their ids, names and arguments, finish/stop reason and usage; a
// fixture that ends in an error must make the SDK throw its API error, after at most the text the
// golden shows. Each whole answer (`{case}.answer.json`) is served whole and read with the SDKs'
// non-streaming `create`, against the same golden. In workerd, Deno and Node, like
// gateway.test.mjs (which imports this file).
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { putScenario, startProvider } from "./provider.mjs";
import { startDenoGateway, startNodeGateway, startWorkerdGateway } from "./gateway_hosts.mjs";

const fixtures = fileURLToPath(new URL("../fixtures/", import.meta.url));
const FORMATS = ["openai_chat", "anthropic_messages", "openai_responses", "gemini"];
const KEY = "gw-corpus-key";
const ASK = [{ role: "user", content: "Go" }];
const PIECE = 61;
const HOSTS = { workerd: startWorkerdGateway, deno: startDenoGateway, node: startNodeGateway };

/** Every fixture with what its golden deltas add up to. */
/**
 * The provider's own id inside a gateway id that carries reasoning state (`bt1_` and the
 * base64url of `{id, ...}` and a 4-byte check, docs/agents.md); any other id is itself.
 */
function providerId(id) {
  if (!id?.startsWith("bt1_")) return id;
  const bytes = Buffer.from(id.slice(4), "base64url");
  return JSON.parse(bytes.subarray(0, bytes.length - 4).toString("utf8")).id;
}

function corpus() {
  const cases = [];
  for (const format of FORMATS) {
    for (const file of readdirSync(`${fixtures}${format}`).filter((f) => f.endsWith(".sse")).sort()) {
      const name = file.slice(0, -".sse".length);
      const bytes = readFileSync(`${fixtures}${format}/${file}`, "utf8");
      const golden = JSON.parse(readFileSync(`${fixtures}${format}/${name}.golden.json`, "utf8"));
      const answerFile = `${fixtures}${format}/${name}.answer.json`;
      const whole = existsSync(answerFile) ? readFileSync(answerFile, "utf8") : undefined;
      cases.push({ format, name, bytes, whole, expected: expected(golden) });
    }
  }
  return cases;
}

/** The answer a golden's deltas describe; tool calls dense, in the order the provider opened them. */
function expected({ deltas, end }) {
  const answer = { ok: end === "ok", end, text: "", reasoning: "", rawReasoning: "", calls: [], finish: undefined, usage: {} };
  const positions = new Map();
  for (const d of deltas) {
    if (d.type === "text") answer.text += d.text;
    else if (d.type === "reasoning") {
      answer.reasoning += d.text;
      if (d.raw) answer.rawReasoning += d.text;
    }
    else if (d.type === "tool_call") {
      if (!positions.has(d.index)) {
        positions.set(d.index, answer.calls.length);
        answer.calls.push({ id: "", name: "", arguments: "" });
      }
      const call = answer.calls[positions.get(d.index)];
      call.id ||= d.id ?? "";
      call.name ||= d.name ?? "";
      call.arguments += d.arguments;
    } else if (d.type === "done") {
      answer.finish = d.finishReason;
      answer.usage = d.usage;
      answer.model = d.model;
    }
  }
  return answer;
}

/** The fixture's bytes as raw chunks of PIECE characters: most cuts fall inside an event. */
function pieces(bytes) {
  const out = [];
  for (let i = 0; i < bytes.length; i += PIECE) out.push(bytes.slice(i, i + PIECE));
  return out;
}

function parsed(args) {
  try {
    return { ok: true, value: JSON.parse(args) };
  } catch {
    return { ok: false };
  }
}

const ANTHROPIC_STOP = { stop: "end_turn", length: "max_tokens", tool_calls: "tool_use", content_filter: "refusal" };

/** Checks the OpenAI SDK's final ChatCompletion against the expected answer. */
function checkOpenAI(final, want, what) {
  const choice = final.choices[0];
  assert.equal(choice.message.content ?? "", want.text, `${what}: text`);
  assert.equal(choice.finish_reason, want.finish, `${what}: finish_reason`);
  const calls = choice.message.tool_calls ?? [];
  assert.equal(calls.length, want.calls.length, `${what}: tool calls ${JSON.stringify(calls)}`);
  want.calls.forEach((call, i) => {
    const got = calls[i];
    assert.equal(got.type, "function", `${what}: call ${i} type`);
    if (call.id) assert.equal(providerId(got.id), call.id, `${what}: call ${i} id`);
    else assert.ok(got.id, `${what}: call ${i} has an id`);
    assert.equal(got.function.name, call.name, `${what}: call ${i} name`);
    const args = parsed(call.arguments);
    if (args.ok) assert.deepEqual(JSON.parse(got.function.arguments), args.value, `${what}: call ${i} parsed arguments`);
    else assert.equal(got.function.arguments, call.arguments, `${what}: call ${i} arguments`);
  });
  assert.deepEqual(
    final.usage && { prompt_tokens: final.usage.prompt_tokens, completion_tokens: final.usage.completion_tokens },
    { prompt_tokens: want.usage.inputTokens ?? 0, completion_tokens: want.usage.outputTokens ?? 0 },
    `${what}: usage`,
  );
}

/** Checks the Anthropic SDK's final Message against the expected answer. */
function checkAnthropic(final, want, what) {
  const of = (type) => final.content.filter((b) => b.type === type);
  assert.equal(of("text").map((b) => b.text).join(""), want.text, `${what}: text`);
  assert.equal(of("thinking").map((b) => b.thinking).join(""), want.reasoning, `${what}: thinking`);
  assert.equal(final.stop_reason, ANTHROPIC_STOP[want.finish] ?? want.finish, `${what}: stop_reason`);
  const calls = of("tool_use");
  assert.equal(calls.length, want.calls.length, `${what}: tool_use blocks ${JSON.stringify(final.content)}`);
  want.calls.forEach((call, i) => {
    const got = calls[i];
    if (call.id) assert.equal(providerId(got.id), call.id, `${what}: call ${i} id`);
    else assert.ok(got.id, `${what}: call ${i} has an id`);
    assert.equal(got.name, call.name, `${what}: call ${i} name`);
    const args = parsed(call.arguments);
    // Cut arguments (max tokens inside a call) are not JSON: the SDK reads them as partial JSON.
    if (args.ok) assert.deepEqual(got.input, args.value, `${what}: call ${i} input`);
    else assert.equal(typeof got.input, "object", `${what}: call ${i} input`);
  });
  assert.deepEqual(
    { input_tokens: final.usage.input_tokens, output_tokens: final.usage.output_tokens },
    { input_tokens: want.usage.inputTokens ?? 0, output_tokens: want.usage.outputTokens ?? 0 },
    `${what}: usage`,
  );
}

// How a Responses client reads a finish: a cut answer is incomplete, with the reason.
const RESPONSES_END = {
  length: ["incomplete", "max_output_tokens"],
  content_filter: ["incomplete", "content_filter"],
};

/** Checks the OpenAI SDK's final Response (POST /v1/responses) against the expected answer. */
function checkResponses(final, want, what) {
  const of = (type) => final.output.filter((item) => item.type === type);
  assert.equal(final.output_text, want.text, `${what}: output_text`);
  // Raw reasoning is an item's reasoning_text content, a summary its summary parts.
  const texts = (key) => of("reasoning").flatMap((r) => (r[key] ?? []).map((s) => s.text)).join("");
  assert.equal(texts("content"), want.rawReasoning, `${what}: raw reasoning`);
  assert.equal(texts("content") + texts("summary"), want.reasoning, `${what}: reasoning`);
  const [status, reason] = RESPONSES_END[want.finish] ?? ["completed", undefined];
  assert.equal(final.status, status, `${what}: status`);
  assert.equal(final.incomplete_details?.reason, reason, `${what}: incomplete_details`);
  const calls = of("function_call");
  assert.equal(calls.length, want.calls.length, `${what}: function_call items ${JSON.stringify(final.output)}`);
  want.calls.forEach((call, i) => {
    const got = calls[i];
    if (call.id) assert.equal(providerId(got.call_id), call.id, `${what}: call ${i} call_id`);
    else assert.ok(got.call_id, `${what}: call ${i} has a call_id`);
    assert.equal(got.name, call.name, `${what}: call ${i} name`);
    const args = parsed(call.arguments);
    if (args.ok) assert.deepEqual(JSON.parse(got.arguments), args.value, `${what}: call ${i} parsed arguments`);
    else assert.equal(got.arguments, call.arguments, `${what}: call ${i} arguments`);
  });
  assert.deepEqual(
    { input_tokens: final.usage.input_tokens, output_tokens: final.usage.output_tokens },
    { input_tokens: want.usage.inputTokens ?? 0, output_tokens: want.usage.outputTokens ?? 0 },
    `${what}: usage`,
  );
}

/** Runs `read`, which must throw: the text seen before must be a start of the golden text. */
async function failsAfterPrefix(read, want, what) {
  const seen = { text: "" };
  try {
    await read(seen);
  } catch (e) {
    assert.ok(e instanceof OpenAI.APIError || e instanceof Anthropic.APIError, `${what}: not the SDK's API error: ${e?.stack ?? e}`);
    assert.ok(want.text.startsWith(seen.text), `${what}: showed ${JSON.stringify(seen.text)} before ${e}`);
    // Nothing shown yet: the status is still the gateway's to choose, and it is the provider's.
    if (seen.text === "" && want.end.provider) assert.equal(e.status, want.end.provider.status, `${what}: status of ${e}`);
    return e;
  }
  assert.fail(`${what}: the SDK read a success, the fixture ends in ${JSON.stringify(want.end)}`);
}

let provider;
before(async () => {
  provider = await startProvider();
});
after(() => provider?.stop());

const CASES = corpus();

for (const [host, start] of Object.entries(HOSTS)) {
  describe(`gateway in ${host}, fixture corpus read by the official SDKs`, { concurrency: 1 }, () => {
    let gw;
    let openai;
    let anthropic;
    const scenario = (format) => `${host}-corpus-${format}`;

    before(async () => {
      const targets = Object.fromEntries(
        FORMATS.map((format) => [
          format,
          { format, baseUrl: `${provider.url}/s/${scenario(format)}/v1`, model: `up-${format}`, apiKey: "sk-corpus-upstream" },
        ]),
      );
      // Each fixture is one request; its errors (429s with Retry-After) must not open breakers
      // for the next fixture.
      gw = await start({ targets, deadlineMs: 5000, gateway: { apiKeys: [KEY] }, health: false });
      openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
      anthropic = new Anthropic({ baseURL: gw.url, apiKey: KEY, maxRetries: 0 });
    });
    after(() => gw?.stop());

    async function replay(format, bytes, contentType) {
      const steps = Array.from({ length: 4 }, () => ({ raw: { chunks: pieces(bytes), ...(contentType ? { contentType } : {}) } }));
      await putScenario(provider.url, scenario(format), steps);
    }

    test(`every fixture (${CASES.length}), re-encoded to every client format`, async () => {
      const problems = [];
      for (const { format, name, bytes, expected: want } of CASES) {
        await replay(format, bytes);
        const what = `${format}/${name}`;
        const readOpenAI = async (seen) => {
          const stream = openai.chat.completions.stream({ model: format, messages: ASK, stream_options: { include_usage: true } });
          stream.on("content", (delta) => (seen.text += delta));
          return stream.finalChatCompletion();
        };
        // The chunks as `create({stream: true})` yields them: calls numbered densely from 0 in
        // the order opened, each opened by one chunk with its id, type and name; one finish_reason.
        const readChunks = async (seen) => {
          const stream = await openai.chat.completions.create({ model: format, messages: ASK, stream: true, stream_options: { include_usage: true } });
          const calls = [];
          const finishes = [];
          let usage;
          for await (const chunk of stream) {
            if (chunk.usage) usage = chunk.usage;
            const choice = chunk.choices[0];
            if (!choice) continue;
            seen.text += choice.delta?.content ?? "";
            for (const call of choice.delta?.tool_calls ?? []) {
              if (call.index === calls.length) {
                assert.ok(call.id && call.type === "function" && call.function?.name, `${what}: call ${call.index} opened by ${JSON.stringify(call)}`);
                calls.push({ id: call.id, type: "function", function: { name: call.function.name, arguments: call.function.arguments ?? "" } });
              } else {
                assert.ok(call.index < calls.length && call.id === undefined, `${what}: call fragment ${JSON.stringify(call)} after ${calls.length} calls`);
                calls[call.index].function.arguments += call.function?.arguments ?? "";
              }
            }
            if (choice.finish_reason) finishes.push(choice.finish_reason);
          }
          assert.equal(finishes.length, 1, `${what}: finish_reasons ${finishes}`);
          const message = { content: seen.text, ...(calls.length ? { tool_calls: calls } : {}) };
          return { choices: [{ message, finish_reason: finishes[0] }], usage };
        };
        const readAnthropic = async (seen) => {
          const stream = anthropic.messages.stream({ model: format, max_tokens: 256, messages: ASK });
          stream.on("text", (delta) => (seen.text += delta));
          return stream.finalMessage();
        };
        const readResponses = async (seen) => {
          const stream = openai.responses.stream({ model: format, input: "Go" });
          stream.on("response.output_text.delta", (e) => (seen.text += e.delta));
          return stream.finalResponse();
        };
        for (const [client, read, check] of [
          ["openai chat.completions.stream", readOpenAI, checkOpenAI],
          ["openai create({stream: true})", readChunks, checkOpenAI],
          ["openai responses.stream", readResponses, checkResponses],
          ["anthropic messages.stream", readAnthropic, checkAnthropic],
        ]) {
          const label = `${what} -> ${client} SDK`;
          try {
            if (want.ok) check(await read({ text: "" }), want, label);
            else await failsAfterPrefix(read, want, label);
          } catch (e) {
            problems.push(`${label}: ${e.message.split("\n").slice(0, 6).join("\n")}`);
          }
        }
      }
      assert.deepEqual(problems, [], `${problems.length} fixture read(s) disagreed with their goldens:\n${problems.join("\n\n")}`);
    });

    // The same answers whole: the provider sends `{case}.answer.json`, the SDKs ask without
    // `stream`, and what they get must still say what the stream's golden says.
    test(`every whole answer (${CASES.filter((c) => c.whole).length}), re-encoded to every client format`, async () => {
      const problems = [];
      for (const { format, name, whole, expected: want } of CASES.filter((c) => c.whole)) {
        await replay(format, whole, "application/json");
        const reads = [
          ["openai chat.completions.create", () => openai.chat.completions.create({ model: format, messages: ASK }), checkOpenAI],
          ["openai responses.create", () => openai.responses.create({ model: format, input: "Go" }), checkResponses],
          ["anthropic messages.create", () => anthropic.messages.create({ model: format, max_tokens: 256, messages: ASK }), checkAnthropic],
        ];
        for (const [client, read, check] of reads) {
          const label = `${format}/${name}.answer.json -> ${client}`;
          try {
            const final = await read();
            check(final, want, label);
            assert.equal(final.model, want.model, `${label}: the model that answered`);
          } catch (e) {
            problems.push(`${label}: ${e.message.split("\n").slice(0, 6).join("\n")}`);
          }
        }
      }
      assert.deepEqual(problems, [], `${problems.length} whole answer(s) disagreed with their goldens:\n${problems.join("\n\n")}`);
    });
  });
}
