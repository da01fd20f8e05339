import type { ErrorInfo } from "../../errors/agent-error.js";
import type { EngineContext } from "../context.js";
import type { StopReason } from "../stop-reasons.js";
import { closeBatch } from "./execution.js";

/** Sets why the run stops, unless an earlier step already did. */
export function stopWith(context: EngineContext, reason: StopReason, error?: ErrorInfo): Partial<EngineContext> {
  if (context.outcome.stopReason) return {};
  return { outcome: { ...context.outcome, stopReason: reason, ...(error ? { stopError: error } : {}) } };
}

export function limitError(reason: StopReason, context: EngineContext): ErrorInfo | undefined {
  switch (reason) {
    case "max_turns":
      return { code: "MAX_TURNS", message: `stopped after ${context.turn} model calls (maxTurns); raise maxTurns (now ${context.run.maxTurns}) to let the agent go on` };
    case "max_tool_calls":
      return {
        code: "MAX_TOOL_CALLS",
        message: `stopped after ${context.toolCallCount} tool calls (maxToolCalls); raise maxToolCalls (now ${context.run.maxToolCalls}) to let the agent go on`,
      };
    case "timeout":
      return { code: "TIMEOUT", message: `stopped after ${context.run.timeoutMs} ms (timeoutMs); raise timeoutMs for longer runs` };
    case "user_abort":
      return { code: "USER_ABORT", message: "the run was aborted by the caller" };
    default:
      return undefined;
  }
}

/**
 * Entering done: nothing is left half-recorded. Text the model streamed before being cut off is kept as an assistant
 * message marked `cutOff`; tool calls of an unfinished response get results saying they did not run.
 */
export function closeRun(context: EngineContext): Partial<EngineContext> {
  const reason = context.outcome.stopReason ?? "model_error";
  // streamingText is emptied when a response completes: text left in it belongs to a call that was cut off.
  const partial = context.call.streamingText;
  if (partial !== "") context.messages.push({ role: "assistant", content: partial, cutOff: true });
  closeBatch(context, `Not run: the run stopped (${reason}) before this call finished.`);
  const outcome = { ...context.outcome, stopReason: reason };
  if (reason !== "final_answer" && !outcome.stopError) outcome.stopError = limitError(reason, context) ?? { code: "MODEL_ERROR", message: reason };
  if (partial !== "") outcome.finalText = partial;
  return {
    outcome,
    batchState: { ...context.batchState, open: false },
    ...(partial !== "" ? { call: { ...context.call, streamingText: "" } } : {}),
  };
}
