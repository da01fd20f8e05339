import type { FinishReason } from "../model.js";

/** The Messages API's stop reasons as statecraft's finish reasons; unknown ones are kept as they are. */
const STOP_REASONS: Record<string, FinishReason> = {
  end_turn: "stop",
  stop_sequence: "stop",
  tool_use: "tool_calls",
  max_tokens: "length",
  // The output limit of the context window was reached: the response was cut off, as with max_tokens.
  model_context_window_exceeded: "length",
  refusal: "content_filter",
};

/**
 * The finish reason of a response. `pause_turn` never reaches here as such: the model continues the turn (see
 * anthropic-model.ts). A stream that ended without saying is judged by what it holds.
 */
export function mapStopReason(raw: string | undefined, hasToolCalls: boolean): FinishReason {
  if (raw === undefined) return hasToolCalls ? "tool_calls" : "stop";
  return STOP_REASONS[raw] ?? raw;
}
