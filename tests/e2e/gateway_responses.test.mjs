// POST /v1/responses end to end: the official `openai` SDK's `responses.create()` and
// `responses.stream()` (retries off) against the gateway in workerd, Deno and Node, in front of
// the scripted provider's OpenAI Chat, Anthropic and Responses upstreams: text, a tool call and
// its result, text.format / tool_choice / top_p upstream, failover from a 503 primary, a stream
// continued on the backup (one response to the SDK), a stream that breaks after its text, and
// the fields and parts the gateway refuses by name. Every whole answer and streamed event of the
// fidelity test is checked against the Open Responses schema with ajv (open_responses.mjs), and
// the SDK reads each field the spec requires and raw reasoning, whole and streamed.
// gateway.test.mjs imports this file; it also runs on its own.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { putScenario, startProvider, upstream } from "./provider.mjs";
import { startDenoGateway, startNodeGateway, startWorkerdGateway } from "./gateway_hosts.mjs";
import { readEvents, responseIssues } from "./open_responses.mjs";

const KEY = "gw-responses-key";
const HOSTS = { workerd: startWorkerdGateway, deno: startDenoGateway, node: startNodeGateway };
const TOOLS = [{ type: "function", name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }];
// The scripted provider's thought (tests/provider/src/wire/reasoning.rs).
const THOUGHT = "The user wants this; a tool may help.";
// A 60-word answer cut after 40 words, continued by the backup (as in gateway.test.mjs).
const WORDS = Array.from({ length: 60 }, (_, i) => `word${i + 1}`);
const FULL = WORDS.join(" ");
const KEPT = WORDS.slice(0, 40).join(" ");

function config(providerUrl, host) {
  const at = (name) => `${providerUrl}/s/${host}-responses-${name}/v1`;
  const target = (format, name, extra = {}) => ({ format, baseUrl: at(name), model: `up-${name}`, apiKey: "sk-upstream", ...extra });
  return {
    targets: {
      chat: target("openai_chat", "chat"),
      claude: target("anthropic_messages", "claude"),
      native: target("openai_responses", "native"),
      down: target("openai_chat", "down"),
      backup: target("anthropic_messages", "backup"),
      cut: target("openai_chat", "cut"),
      resume_backup: target("anthropic_messages", "resume_backup", { prefill: true }),
      midstall: target("openai_chat", "midstall"),
    },
    routes: {
      failover: { fallback: ["down", "backup"] },
      resume: { fallback: ["cut", "resume_backup"], afterStart: { mode: "continue" } },
    },
    deadlineMs: 5000,
    gateway: { apiKeys: [KEY] },
    health: false,
  };
}

/** Runs `fn`, which must throw; returns the error. */
async function throws(fn) {
  try {
    await fn();
  } catch (e) {
    return e;
  }
  assert.fail("expected an error, the call succeeded");
}

/** Reads `responses.stream()`: the text its `response.output_text.delta` events showed, every event's type, and the final response. */
async function readStream(stream) {
  let text = "";
  const types = [];
  stream.on("response.output_text.delta", (e) => (text += e.delta));
  stream.on("event", (e) => types.push(e.type));
  const final = await stream.finalResponse();
  return { text, types, final };
}

let provider;
before(async () => {
  provider = await startProvider();
});
after(() => provider?.stop());

for (const [host, start] of Object.entries(HOSTS)) {
  describe(`gateway in ${host}: POST /v1/responses through the openai SDK`, { concurrency: 1 }, () => {
    let gw;
    let openai;
    const id = (target) => `${host}-responses-${target}`;
    const P = () => provider.url;

    before(async () => {
      gw = await start(config(provider.url, host));
      openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    });
    after(() => gw?.stop());

    test("text, whole and streamed, from OpenAI Chat, Anthropic and Responses upstreams", async () => {
      for (const [target, format] of [["chat", "openai_chat"], ["claude", "anthropic_messages"], ["native", "openai_responses"]]) {
        await putScenario(P(), id(target), [
          { text: "Hello from upstream", usage: { inputTokens: 7, outputTokens: 3 } },
          { text: "Streamed hello", chunks: 3, usage: { inputTokens: 5, outputTokens: 2 } },
        ]);
        const { data, response } = await openai.responses
          .create({ model: target, instructions: "be brief", input: "Say hello", max_output_tokens: 64 })
          .withResponse();
        assert.match(data.id, /^resp_[0-9a-f]{24}$/, target);
        assert.equal(data.object, "response");
        assert.equal(data.status, "completed");
        assert.equal(data.output_text, "Hello from upstream", target);
        assert.equal(data.model, `up-${target}`);
        assert.equal(data.instructions, "be brief");
        assert.equal(data.usage.input_tokens, 7);
        assert.equal(data.usage.output_tokens, 3);
        assert.equal(data.usage.total_tokens, 10);
        assert.equal(response.headers.get("x-baton-target"), target);

        const { text, types, final } = await readStream(openai.responses.stream({ model: target, input: [{ role: "user", content: "Say hello" }] }));
        assert.equal(text, "Streamed hello", target);
        assert.equal(final.output_text, "Streamed hello", target);
        assert.equal(final.status, "completed");
        assert.equal(final.usage.output_tokens, 2, target);
        assert.deepEqual(types.slice(0, 4), ["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"], target);
        assert.equal(types.at(-1), "response.completed", target);

        const r = await upstream(P(), id(target));
        assert.equal(r.requests, 2, target);
        assert.deepEqual(r.log.map((e) => [e.format, e.stream]), [[format, false], [format, true]], target);
        const system = { openai_chat: (b) => b.messages[0].content, anthropic_messages: (b) => b.system, openai_responses: (b) => b.instructions }[format];
        assert.equal(system(r.log[0].body), "be brief", `${target}: instructions reach the upstream as its system prompt`);
      }
    });

    test("fidelity: every answer and event is an Open Responses one; raw reasoning is content, a summary is summary", async () => {
      const post = (body) =>
        fetch(`${gw.url}/v1/responses`, {
          method: "POST",
          headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      const tool = { type: "function", name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } };
      const format = { type: "json_schema", name: "place", schema: { type: "object", properties: { city: { type: "string" } } } };
      // Chat's reasoning_content is raw reasoning; Anthropic's thinking and a Responses summary are summaries.
      for (const [target, raw] of [["chat", true], ["claude", false], ["native", false]]) {
        const steps = [{ reasoning: true, text: '{"city":"Oslo"}' }];
        await putScenario(P(), id(target), [...steps, ...steps, ...steps, ...steps]);
        const request = { model: target, input: "Where?", tools: [tool], text: { format }, reasoning: { effort: "low" }, service_tier: "flex", prompt_cache_key: "k1" };

        const whole = await (await post(request)).json();
        assert.deepEqual(responseIssues(whole), [], `${target}: ${JSON.stringify(whole)}`);
        const streamed = await readEvents(await post({ ...request, stream: true }));
        assert.deepEqual(streamed.errors, [], target);
        assert.deepEqual(responseIssues(streamed.finalResponse), [], target);
        const reasoning = streamed.events.filter((e) => /reasoning/.test(e.type)).map((e) => e.type);
        assert.deepEqual(
          [...new Set(reasoning)],
          raw
            ? ["response.reasoning_text.delta", "response.reasoning_text.done"]
            : ["response.reasoning_summary_part.added", "response.reasoning_summary_text.delta", "response.reasoning_summary_text.done", "response.reasoning_summary_part.done"],
          target,
        );

        // The SDK reads every field, whole and streamed.
        const data = await openai.responses.create(request);
        assert.equal(data.status, "completed");
        assert.ok(Number.isInteger(data.completed_at) && data.completed_at >= data.created_at, `${target}: completed_at ${data.completed_at}`);
        const settings = ({ temperature, top_p, presence_penalty, frequency_penalty, top_logprobs, max_tool_calls, background, service_tier, safety_identifier, prompt_cache_key, reasoning }) =>
          ({ temperature, top_p, presence_penalty, frequency_penalty, top_logprobs, max_tool_calls, background, service_tier, safety_identifier, prompt_cache_key, reasoning });
        const expected = {
          temperature: 1, top_p: 1, presence_penalty: 0, frequency_penalty: 0, top_logprobs: 0, max_tool_calls: null, background: false,
          service_tier: "flex", safety_identifier: null, prompt_cache_key: "k1", reasoning: { effort: "low", summary: null },
        };
        assert.deepEqual(settings(data), expected, target);
        assert.deepEqual(data.tools, [{ ...tool, description: null, strict: true }], target);
        assert.deepEqual(data.text.format, { ...format, description: null, strict: false }, target);
        const item = data.output[0];
        assert.equal(item.type, "reasoning", target);
        if (raw) {
          assert.deepEqual([item.content, item.summary], [[{ type: "reasoning_text", text: THOUGHT }], []], target);
        } else {
          assert.deepEqual([item.content, item.summary], [undefined, [{ type: "summary_text", text: THOUGHT }]], target);
        }

        const stream = openai.responses.stream(request);
        let thought = "";
        stream.on("response.reasoning_text.delta", (e) => (thought += e.delta));
        stream.on("response.reasoning_summary_text.delta", (e) => (thought += e.delta));
        const final = await stream.finalResponse();
        assert.equal(thought, THOUGHT, target);
        assert.deepEqual(settings(final), expected, target);
        assert.ok(Number.isInteger(final.completed_at), target);
        // Ids and the encrypted content that signs them differ from one response to the next.
        const { id: _id, encrypted_content: _e, ...streamedItem } = final.output[0];
        const { id: _wholeId, encrypted_content: _wholeE, ...wholeItem } = item;
        assert.deepEqual(streamedItem, wholeItem, `${target}: the stream adds up to the whole answer's reasoning item`);
        assert.deepEqual(final.output_parsed, { city: "Oslo" }, target);
      }
    });

    test("a tool call, whole and streamed, and its result sent back", async () => {
      for (const target of ["chat", "claude"]) {
        const call = { toolCall: { name: "get_weather", arguments: '{"city":"Oslo"}' } };
        await putScenario(P(), id(target), [call, call, { text: "It is sunny in Oslo." }]);
        const whole = await openai.responses.create({ model: target, input: "Weather in Oslo?", tools: TOOLS });
        const item = whole.output.find((o) => o.type === "function_call");
        assert.equal(item.name, "get_weather", target);
        assert.deepEqual(JSON.parse(item.arguments), { city: "Oslo" });
        assert.match(item.id, /^fc_/);
        assert.ok(item.call_id, `${target}: a call_id`);

        const stream = openai.responses.stream({ model: target, input: "Weather in Oslo?", tools: TOOLS, tool_choice: "auto" });
        let args = "";
        stream.on("response.function_call_arguments.delta", (e) => (args += e.delta));
        const final = await stream.finalResponse();
        const streamed = final.output.find((o) => o.type === "function_call");
        assert.equal(streamed.name, "get_weather", target);
        assert.deepEqual(JSON.parse(args), { city: "Oslo" });
        assert.deepEqual(JSON.parse(streamed.arguments), { city: "Oslo" });

        // The agent loop: the output replayed as input, then the call's result.
        const next = await openai.responses.create({
          model: target,
          input: [{ role: "user", content: "Weather in Oslo?" }, ...final.output, { type: "function_call_output", call_id: streamed.call_id, output: "sunny" }],
          tools: TOOLS,
        });
        assert.equal(next.output_text, "It is sunny in Oslo.");
        const r = await upstream(P(), id(target));
        const body = r.log[2].body;
        if (target === "chat") {
          assert.equal(body.messages.at(-2).tool_calls[0].id, streamed.call_id);
          assert.deepEqual(body.messages.at(-1), { role: "tool", tool_call_id: streamed.call_id, content: "sunny" });
        } else {
          assert.equal(body.messages.at(-2).content.find((b) => b.type === "tool_use").id, streamed.call_id);
          assert.deepEqual(body.messages.at(-1).content[0], { type: "tool_result", tool_use_id: streamed.call_id, content: "sunny" });
        }
      }
    });

    test("text.format, tool_choice and top_p reach the upstream in its own shape", async () => {
      await putScenario(P(), id("chat"), [{ text: '{"city":"Oslo"}' }]);
      const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false };
      const response = await openai.responses.create({
        model: "chat",
        input: "Where?",
        tools: TOOLS,
        tool_choice: { type: "function", name: "get_weather" },
        parallel_tool_calls: false,
        top_p: 0.5,
        text: { format: { type: "json_schema", name: "place", schema, strict: true } },
      });
      assert.deepEqual(JSON.parse(response.output_text), { city: "Oslo" });
      assert.equal(response.text.format.name, "place", "the settings are repeated back");
      const body = (await upstream(P(), id("chat"))).log[0].body;
      assert.deepEqual(body.response_format, { type: "json_schema", json_schema: { name: "place", schema, strict: true } });
      assert.deepEqual(body.tool_choice, { type: "function", function: { name: "get_weather" } });
      assert.equal(body.parallel_tool_calls, false);
      assert.equal(body.top_p, 0.5);
    });

    test("failover: a 503 primary, then the backup answers, whole and streamed", async () => {
      await putScenario(P(), id("down"), [{ status: 503, message: "down for maintenance" }, { status: 503, message: "still down" }]);
      await putScenario(P(), id("backup"), [{ text: "Backup here" }, { text: "Backup streams", chunks: 2 }]);
      const { data, response } = await openai.responses.create({ model: "failover", input: "Hi" }).withResponse();
      assert.equal(data.output_text, "Backup here");
      assert.equal(response.headers.get("x-baton-target"), "backup");
      assert.equal(response.headers.get("x-baton-attempts"), "2");
      const { data: events, response: head } = await openai.responses.create({ model: "failover", input: "Hi", stream: true }).withResponse();
      assert.equal(head.headers.get("x-baton-target"), "backup");
      let text = "";
      let last;
      for await (const event of events) {
        if (event.type === "response.output_text.delta") text += event.delta;
        last = event;
      }
      assert.equal(text, "Backup streams");
      assert.equal(last.type, "response.completed");
      assert.equal(last.response.output_text ?? last.response.output[0].content[0].text, "Backup streams");
    });

    test("a stream cut after 40 words continues on the backup: one response to the SDK", async () => {
      await putScenario(P(), id("cut"), [{ text: FULL, stallAfterEvents: 40, stallMs: 100 }]);
      await putScenario(P(), id("resume_backup"), [{ continueFrom: FULL }]);
      const { text, types, final } = await readStream(openai.responses.stream({ model: "resume", input: "Count" }));
      assert.equal(text, FULL);
      assert.equal(final.output_text, FULL);
      assert.equal(final.output.length, 1, "one message item");
      assert.equal(types.filter((t) => t === "response.created").length, 1);
      assert.equal(types.at(-1), "response.completed");
      const down = await upstream(P(), id("resume_backup"));
      assert.equal(down.requests, 1);
      const prefill = down.log[0].body.messages.at(-1);
      assert.equal(prefill.role, "assistant");
      assert.equal(typeof prefill.content === "string" ? prefill.content : prefill.content.map((b) => b.text).join(""), KEPT);
    });

    test("a stream that breaks after its text: response.failed and an error the SDK throws, never a completion", async () => {
      const headers = { "x-baton-deadline-ms": "1500" };
      await putScenario(P(), id("midstall"), [{ text: "Hello there friend of mine", stallAfterEvents: 2 }]);
      const stream = openai.responses.stream({ model: "midstall", input: "Hi" }, { headers });
      let text = "";
      stream.on("response.output_text.delta", (e) => (text += e.delta));
      const e = await throws(() => stream.finalResponse());
      assert.equal(text, "Hello there");
      assert.ok(e instanceof OpenAI.APIError, String(e));
      assert.equal(e.code, "upstream_timeout");
      assert.equal(e.type, "upstream_error");
      assert.match(e.message, /1500 ms/);

      await putScenario(P(), id("midstall"), [{ text: "Hello there friend of mine", stallAfterEvents: 2 }]);
      const res = await fetch(`${gw.url}/v1/responses`, {
        method: "POST",
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", ...headers },
        body: JSON.stringify({ model: "midstall", input: "Hi", stream: true }),
      });
      const raw = await res.text();
      assert.ok(!raw.includes("response.completed"), raw);
      const failed = await readEvents(new Response(raw));
      assert.deepEqual(failed.errors, [], "response.failed and the error event are Open Responses events");
      assert.equal(failed.finalResponse.status, "failed");
      const frames = raw.trim().split("\n\n");
      assert.match(frames.at(-2), /^event: response\.failed\n/);
      assert.match(frames.at(-1), /^event: error\ndata: \{.*"code":"upstream_timeout"/);
    });

    test("what the gateway cannot do is a 400 naming the field; an unknown route is a 404", async () => {
      await putScenario(P(), id("chat"), [{ text: "never sent" }]);
      const cases = [
        [{ model: "chat", input: "Hi", store: true }, /^store must be false or omitted \(got true\)/],
        [{ model: "chat", input: "Hi", previous_response_id: "resp_1" }, /^previous_response_id is not supported/],
        [{ model: "chat", input: "Hi", tools: [{ type: "web_search" }] }, /^tools\[0\]\.type must be "function" \(got "web_search"\)/],
        [{ model: "chat", input: [{ type: "item_reference", id: "msg_1" }] }, /^input\[0\] is an item_reference/],
        // A part a target of the route cannot carry, named as the client wrote it, before anything is sent.
        [
          { model: "chat", instructions: "sys", input: [{ role: "user", content: [{ type: "input_text", text: "Sum up" }, { type: "input_file", file_url: "https://x.example/a.pdf" }] }] },
          /^input\[0\]\.content\[1\] is a file by URL, which target "chat" \(openai_chat\) cannot carry; /,
        ],
      ];
      for (const [body, message] of cases) {
        const e = await throws(() => openai.responses.create(body));
        assert.ok(e instanceof OpenAI.BadRequestError, `${JSON.stringify(body)}: ${e}`);
        assert.match(e.error.message, message);
        assert.equal(e.type, "invalid_request_error");
      }
      assert.equal((await upstream(P(), id("chat"))).requests, 0, "nothing was sent upstream");
      const missing = await throws(() => openai.responses.create({ model: "nope", input: "Hi" }));
      assert.ok(missing instanceof OpenAI.NotFoundError, String(missing));
      assert.equal(missing.code, "model_not_found");
      const method = await fetch(`${gw.url}/v1/responses`, { headers: { authorization: `Bearer ${KEY}` } });
      assert.equal(method.status, 405);
      assert.equal(method.headers.get("allow"), "POST");
      await method.arrayBuffer();
    });
  });
}
