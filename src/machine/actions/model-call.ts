import type { ModelResponse } from "../../models/model.js";
import { addUsage } from "../../events.js";
import type { EngineContext } from "../context.js";

/** Entering call_model: one more model call. */
export function beginModelCall(context: EngineContext): Partial<EngineContext> {
  const call = { ...context.call, streamingText: "", response: undefined };
  // A retried request (onModelError, context overflow) is the same turn again.
  if (context.call.retrying) return { call: { ...call, retrying: false } };
  return { turn: context.turn + 1, call };
}

/** A text delta arrived: kept so a cut-off answer is not lost. */
export function recordStreamText(context: EngineContext, text: string): Partial<EngineContext> {
  return { call: { ...context.call, streamingText: context.call.streamingText + text } };
}

/** The model finished. A text-only answer joins the conversation here; one with tool calls in parse_tool_call. */
export function recordResponse(context: EngineContext, response: ModelResponse): Partial<EngineContext> {
  // The reported usage measures the conversation up to and including this answer (pushed next, here or in
  // parse_tool_call): the anchor of the compaction estimate.
  const usageAnchor = response.usage
    ? { tokens: (response.usage.input || 0) + (response.usage.output || 0), messageCount: context.messages.length + 1 }
    : context.call.usageAnchor;
  const messages =
    response.toolCalls.length === 0
      ? context.messages.append({
          role: "assistant",
          content: response.text,
          ...(response.thinking ? { thinking: response.thinking } : {}),
          ...(response.providerMetadata ? { providerMetadata: response.providerMetadata } : {}),
        })
      : context.messages;
  return {
    messages,
    call: { ...context.call, response, streamingText: "", usageAnchor, modelErrorAttempts: 0 },
    // Kept when unchanged (a tool call's empty text, step after step): no copy made and dropped on every step.
    outcome: context.outcome.finalText === response.text ? context.outcome : { ...context.outcome, finalText: response.text },
    usage: addUsage(context.usage, response.usage),
    // What build_context took in before this call has been answered.
    inbox: context.inbox.claimed.length ? { ...context.inbox, claimed: [] } : context.inbox,
  };
}
