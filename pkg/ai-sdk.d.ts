// Type declarations for llm-baton/ai-sdk: a Baton's routes as AI SDK language models
// (specification v4, from @ai-sdk/provider 4, which `ai` 7 uses).

import type { LanguageModelV4, ProviderV4 } from "@ai-sdk/provider";
import type { Baton, CallEvent, Reasoning, ReasoningState } from "./index.d.ts";

export interface BatonProviderSettings {
  /** Every call's progress events (attempt, retry, failover, leg, resume...), as `CallOptions.onEvent`. */
  onEvent?: (event: CallEvent) => void | Promise<void>;
  /**
   * Replaces the config's deadline for calls through this provider; one call may set its own
   * with `providerOptions: { baton: { deadlineMs } }`.
   */
  deadlineMs?: number;
}

/** A call's `providerOptions.baton`; any other key is an InvalidArgumentError. */
export type BatonCallProviderOptions = {
  /** This call's deadline, replacing the provider's and the config's. */
  deadlineMs?: number;
  /** The request's `parallelToolCalls` (false: at most one tool call per answer, where the format can say so). */
  parallelToolCalls?: boolean;
  /**
   * The request's `reasoning`; its fields win over the AI SDK's `reasoning` level, which
   * otherwise gives the effort ("xhigh" and "max" as "high", "none" as no reasoning).
   */
  reasoning?: Pick<Reasoning, keyof Reasoning>; // as a type alias: provider options are JSON objects
};

/**
 * A reasoning or tool-call part's `providerMetadata.baton` (and the `providerOptions.baton` the
 * AI SDK gives it back in the next step's prompt): the state its provider issued, sent back
 * only to the format and model that issued it.
 */
export type BatonPartMetadata = { state: ReasoningState };

/**
 * `provider("chat")` (or `provider.languageModel("chat")`) is route "chat" as a LanguageModelV4.
 * An unknown route throws NoSuchModelError; llm-baton has no embedding or image models (those
 * throw NoSuchModelError too).
 */
export interface BatonProvider extends ProviderV4 {
  (route: string): LanguageModelV4;
  languageModel(route: string): LanguageModelV4;
}

/**
 * The AI SDK provider over `baton`'s routes. Calls get the route's deadline, retries and failover;
 * errors are the AI SDK's own (APICallError with `isRetryable: false`, InvalidPromptError,
 * InvalidArgumentError, the abort signal's reason), so the AI SDK never retries on top.
 */
export declare function createBatonProvider(baton: Baton, settings?: BatonProviderSettings): BatonProvider;
