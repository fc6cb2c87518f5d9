// Claude on three clouds in one route (issue 39): Anthropic's own API, then Amazon Bedrock, then
// Google Vertex AI, the same model under each cloud's id. Run by clouds.test.mjs in Node,
// workerd, Deno and Chromium through llm-baton/clouds (everywhere.mjs), against the scripted
// provider and the local Bedrock and Vertex, which check each cloud's credential, URL and body.
// Bedrock is reached with a Bedrock API key and Vertex with an access token, as a page may hold
// them (SigV4 and minted tokens have their own suites: bedrock.test.mjs, vertex.test.mjs).
import { API_KEY, CLAUDE, CLAUDE_TEXT as BEDROCK_TEXT, REGION as BEDROCK_REGION } from "./bedrock_scenarios.mjs";
import { ACCESS_TOKEN, CLAUDE_TEXT as VERTEX_TEXT, PROJECT, REGION as VERTEX_REGION } from "./vertex_scenarios.mjs";
import { script, fail, upstream } from "./scenarios.mjs";
import { eq, streamed } from "./calls.mjs";

const ANTHROPIC_MODEL = "claude-sonnet-4-5-20250929";
const VERTEX_MODEL = "claude-sonnet-4-5@20250929";
const ASK = { messages: [{ role: "user", content: "Say hello" }], maxTokens: 64 };
/** The scripted Anthropic's answer, cut after its first WORDS_SHOWN events. */
const WORDS = Array.from({ length: 30 }, (_, i) => `w${i}`);
const WORDS_SHOWN = 6;
const NOWHERE = "http://llm-baton.invalid";

/**
 * The route `claude`: Anthropic (the local Bedrock's /v1/messages, always 529, or a scripted
 * Anthropic), then Claude on Bedrock (`bedrockModel`), then Claude on Vertex.
 */
function claudeEverywhere(env, { anthropic, bedrockModel = CLAUDE, afterStart } = {}) {
  const prefill = afterStart ? { prefill: true } : {};
  return {
    targets: {
      anthropic: anthropic ?? { format: "anthropic_messages", baseUrl: `${env.bedrockUrl}/v1`, model: ANTHROPIC_MODEL, apiKey: "sk-ant-local-test" },
      bedrock: { format: "anthropic_messages", cloud: "bedrock", region: BEDROCK_REGION, baseUrl: env.bedrockUrl, model: bedrockModel, apiKey: API_KEY, ...prefill },
      vertex: { format: "anthropic_messages", cloud: "vertex", project: PROJECT, region: VERTEX_REGION, baseUrl: `${env.vertexUrl}/v1`, model: VERTEX_MODEL, accessToken: ACCESS_TOKEN, ...prefill },
    },
    routes: { claude: { fallback: ["anthropic", "bedrock", "vertex"], ...(afterStart && { afterStart }) } },
  };
}

const legsOf = (legs) => legs.map((l) => [l.target, l.status ?? null, l.class ?? null]);

/** What a local cloud received, in order (its GET /_test/seen). */
async function seen(url) {
  const res = await fetch(`${url}/_test/seen`);
  if (!res.ok) fail(`GET ${url}/_test/seen answered ${res.status}`);
  return res.json();
}

/** The Anthropic SSE events of a gateway stream, by type. */
function sseEvents(text) {
  return text.split("\n\n").filter(Boolean).map((block) => {
    const data = block.split("\n").find((l) => l.startsWith("data: "));
    return data ? JSON.parse(data.slice(6)) : null;
  }).filter(Boolean);
}

export const cloudScenarios = {
  "Claude on Anthropic overloaded (529) fails over to Claude on Bedrock, whole and streamed": async (env) => {
    const baton = new env.Baton(claudeEverywhere(env));
    const out = await baton.complete("claude", ASK);
    eq([out.text, out.target, legsOf(out.legs)], [BEDROCK_TEXT, "bedrock", [["anthropic", 529, "overloaded"], ["bedrock", null, null]]], "whole");
    const s = await streamed(baton, "claude", ASK);
    eq([s.text, s.done?.target, legsOf(s.done?.legs ?? [])], [BEDROCK_TEXT, "bedrock", [["anthropic", 529, "overloaded"], ["bedrock", null, null]]], "streamed");
    if (s.pieces < 2) fail(`Bedrock's text arrived in ${s.pieces} piece(s), not as it streamed`);
  },

  "Anthropic overloaded, Bedrock throttled, Claude on Vertex answers, whole and streamed": async (env) => {
    const baton = new env.Baton(claudeEverywhere(env, { bedrockModel: "throttled" }));
    const legs = [["anthropic", 529, "overloaded"], ["bedrock", 429, "rate_limit"], ["vertex", null, null]];
    const out = await baton.complete("claude", ASK);
    eq([out.text, out.target, legsOf(out.legs)], [VERTEX_TEXT, "vertex", legs], "whole");
    const s = await streamed(baton, "claude", ASK);
    eq([s.text, s.done?.target, legsOf(s.done?.legs ?? [])], [VERTEX_TEXT, "vertex", legs], "streamed");
    const vertexSaw = (await seen(env.vertexUrl)).at(-1);
    eq([vertexSaw.auth, vertexSaw.body.anthropic_version, "model" in vertexSaw.body], ["Bearer", "vertex-2023-10-16", false], "what Vertex received");
  },

  "resume: Claude's stream cut on Anthropic continues past Bedrock's throttle on Vertex, the text shown once": async (env) => {
    const id = await script(env, "clouds-resume", [{ text: WORDS.join(" "), stallAfterEvents: WORDS_SHOWN, stallMs: 100 }]);
    const anthropic = { format: "anthropic_messages", baseUrl: `${env.providerUrl}/s/${id}/v1`, model: ANTHROPIC_MODEL, apiKey: "sk-ant-local-test" };
    const baton = new env.Baton(claudeEverywhere(env, { anthropic, bedrockModel: "throttled", afterStart: { mode: "continue" } }));
    const events = [];
    const s = await streamed(baton, "claude", ASK, { onEvent: (ev) => events.push(ev) });
    const kept = s.text.slice(0, s.text.length - VERTEX_TEXT.length);
    if (!s.text.endsWith(VERTEX_TEXT) || kept.trim() === "" || !WORDS.join(" ").startsWith(kept.trimEnd())) {
      fail(`expected the shown words then Vertex's continuation, got ${JSON.stringify(s.text)}`);
    }
    eq([s.done.target, s.done.contributors], ["vertex", ["anthropic", "vertex"]], "who answered");
    eq(legsOf(s.done.legs).map(([t, status]) => [t, status]), [["anthropic", null], ["bedrock", 429], ["vertex", null]], "legs");
    // One resume event per member asked to continue: Bedrock (throttled), then Vertex.
    eq(events.filter((ev) => ev.type === "resume").map((ev) => [ev.mode, ev.from, ev.to]), [["continue", "anthropic", "bedrock"], ["continue", "bedrock", "vertex"]], "the resume events");
    const last = (await seen(env.vertexUrl)).at(-1).body.messages.at(-1);
    eq([last.role, JSON.stringify(last.content).includes(kept.trimEnd())], ["assistant", true], "Vertex was asked to continue the shown text");
    await upstream(env, id, { requests: 1 });
  },

  "the gateway in process (baton.fetch): an Anthropic client's request fails over across the three clouds, whole and streamed": async (env) => {
    const baton = new env.Baton(claudeEverywhere(env, { bedrockModel: "throttled" }));
    const post = (stream) => baton.fetch(`${NOWHERE}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "claude", max_tokens: 64, stream, messages: [{ role: "user", content: "Say hello" }] }),
    });
    const whole = await post(false);
    const answer = await whole.json();
    eq([whole.status, whole.headers.get("x-baton-target"), answer.type, answer.content.map((b) => b.text).join("")], [200, "vertex", "message", VERTEX_TEXT], "whole");
    const stream = await post(true);
    const events = sseEvents(await stream.text());
    const text = events.filter((e) => e.type === "content_block_delta").map((e) => e.delta.text).join("");
    eq([stream.status, stream.headers.get("x-baton-target"), text, events.at(-1)?.type], [200, "vertex", VERTEX_TEXT, "message_stop"], "streamed");
  },
};
