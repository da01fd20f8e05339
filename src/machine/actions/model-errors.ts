import type { EngineContext } from "../context.js";

/** onModelError said retry: the same request again, not a new turn. The partial answer is dropped. */
export function prepareRetry(context: EngineContext): Partial<EngineContext> {
  return { failure: undefined, failedIn: undefined, retrying: true, streamingText: "", claimed: [], modelErrorAttempts: context.modelErrorAttempts + 1 };
}

/** onModelError said continue: a note with the error joins the conversation and the model is asked again. */
export function noteModelError(context: EngineContext): Partial<EngineContext> {
  const failure = context.failure!;
  if (context.streamingText !== "") context.messages.push({ role: "assistant", content: context.streamingText, cutOff: true });
  context.messages.push({
    role: "user",
    content: `[The previous model request failed: ${failure.message}. Continue from where you were.]`,
  });
  return { failure: undefined, failedIn: undefined, streamingText: "", modelErrorAttempts: 0, claimed: [] };
}

/** A context overflow: compact now, keeping at most half the window, then repeat the request once. */
export function prepareOverflowCompaction(context: EngineContext): Partial<EngineContext> {
  const half = context.loop.contextWindow > 0 ? Math.floor(context.loop.contextWindow / 2) : context.loop.keepRecentTokens;
  return {
    failure: undefined,
    failedIn: undefined,
    overflowCompacted: true,
    compactNow: Math.min(half, context.loop.keepRecentTokens),
    retrying: true,
    streamingText: "",
    claimed: [],
  };
}

/** A failure nobody recovers from ends the run `model_error` with its error. */
export function stopWithFailure(context: EngineContext): Partial<EngineContext> {
  const failure = context.failure;
  if (!failure) return {};
  return { stopReason: "model_error", stopError: failure.toJSON() };
}
