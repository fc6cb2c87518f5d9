// Compile-only check of pkg/ai-sdk.d.ts (llm-baton/ai-sdk), pulled into `deno check` by
// types_check.ts: a route's model is what the AI SDK's functions take. Never run.
import { generateText, Output, streamText } from "ai";
import type { LanguageModel } from "ai";
import type { LanguageModelV4, ProviderV4 } from "@ai-sdk/provider";
import { z } from "zod";
import { Baton } from "../../pkg/index.d.ts";
import type { Config } from "../../pkg/index.d.ts";
import { createBatonProvider } from "../../pkg/ai-sdk.d.ts";
import type { BatonCallProviderOptions, BatonPartMetadata } from "../../pkg/ai-sdk.d.ts";

declare const config: Config;

const baton = createBatonProvider(new Baton(config), { deadlineMs: 20_000, onEvent: (ev) => console.log(ev.type) });
export const model: LanguageModel = baton("chat");
export const v4: LanguageModelV4 = baton.languageModel("chat");
export const provider: ProviderV4 = baton;

export async function use(): Promise<string> {
  const { output } = await generateText({ model: baton("chat"), output: Output.object({ schema: z.object({ city: z.string() }) }), prompt: "p" });
  const options: BatonCallProviderOptions = { deadlineMs: 5000, parallelToolCalls: false, reasoning: { effort: "low", summary: true } };
  const result = streamText({ model, prompt: "p", reasoning: "high", providerOptions: { baton: options } });
  const reasoning = (await result.steps)[0]?.content.find((part) => part.type === "reasoning")?.providerMetadata?.baton as BatonPartMetadata | undefined;
  return output.city + (await result.text) + (reasoning?.state.format ?? "");
}

// @ts-expect-error: an effort is llm-baton's ("minimal" to "high"), not the AI SDK's "xhigh"
export const wrongEffort: BatonCallProviderOptions = { reasoning: { effort: "xhigh" } };

// @ts-expect-error: the provider takes a Baton, not its config
createBatonProvider(config);
