// The AI SDK (ai 7) over llm-baton's model (llm-baton/ai-sdk), in every runtime of tools.test.mjs.
import { z } from "zod";

const Answer = z.object({ text: z.string(), target: z.literal("backup") });

async function script(env, label, steps) {
  const id = `${env.runtime}-aisdk-${label}-${Math.floor(performance.now() * 1000).toString(36)}`;
  const res = await fetch(`${env.providerUrl}/_scenarios/${id}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ steps }),
  });
  if (!res.ok) throw new Error(`PUT /_scenarios/${id} answered ${res.status}: ${await res.text()}`);
  return id;
}

export const scenarios = {
  async "the runtime's llm-baton answers through a route whose primary fails"(env) {
    const p = await script(env, "smoke-p", [{ status: 503 }]);
    const b = await script(env, "smoke-b", [{ text: "from backup" }]);
    const target = (id) => ({ format: "openai_chat", baseUrl: `${env.providerUrl}/s/${id}/v1`, model: "m", apiKey: "sk-test" });
    const baton = new env.llm.Baton({ targets: { primary: target(p), backup: target(b) }, routes: { chat: { fallback: ["primary", "backup"] } } });
    const out = await baton.complete("chat", { messages: [{ role: "user", content: "hi" }] });
    Answer.parse({ text: out.text, target: out.target });
  },
};
