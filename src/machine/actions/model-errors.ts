import type { Message } from "../../models/messages.js";
import type { EngineContext } from "../context.js";

const cleared = (context: EngineContext) => ({ ...context.outcome, failure: undefined, failedIn: undefined });
const noClaims = (context: EngineContext) => (context.inbox.claimed.length ? { ...context.inbox, claimed: [] } : context.inbox);

/** onModelError said retry: the same request again, not a new turn. The partial answer is dropped. */
export function prepareRetry(context: EngineContext): Partial<EngineContext> {
  return {
    outcome: cleared(context),
    call: { ...context.call, retrying: true, streamingText: "", modelErrorAttempts: context.call.modelErrorAttempts + 1 },
    inbox: noClaims(context),
  };
}

/** onModelError said continue: a note with the error joins the conversation and the model is asked again. */
export function noteModelError(context: EngineContext): Partial<EngineContext> {
  const failure = context.outcome.failure!;
  const partial = context.call.streamingText;
  const note: Message = { role: "user", content: `[The previous model request failed: ${failure.message}. Continue from where you were.]` };
  const messages = partial !== "" ? context.messages.append({ role: "assistant", content: partial, cutOff: true }, note) : context.messages.append(note);
  return { messages, outcome: cleared(context), call: { ...context.call, streamingText: "", modelErrorAttempts: 0 }, inbox: noClaims(context) };
}

/** A context overflow: compact now, keeping at most half the window, then repeat the request once. */
export function prepareOverflowCompaction(context: EngineContext): Partial<EngineContext> {
  const half = context.loop.contextWindow > 0 ? Math.floor(context.loop.contextWindow / 2) : context.loop.keepRecentTokens;
  return {
    outcome: cleared(context),
    call: {
      ...context.call,
      overflowCompacted: true,
      compactNow: Math.min(half, context.loop.keepRecentTokens),
      retrying: true,
      streamingText: "",
    },
    inbox: noClaims(context),
  };
}
