import type { FinishReason } from "../model.js";

/** Other names servers use for the standard finish reasons. */
const ALIASES: Record<string, FinishReason> = {
  max_tokens: "length",
  model_length: "length",
  end_turn: "stop",
  eos: "stop",
  eos_token: "stop",
  stop_sequence: "stop",
  tool_use: "tool_calls",
  function_call: "tool_calls",
};

/**
 * The finish reason to report. Known aliases are normalised and unknown values kept; when a server sent none
 * (TGI, Snowflake) it is inferred from what accumulated, since a missing finish reason is not an error.
 */
export function normalizeFinishReason(raw: string | undefined, hasToolCalls: boolean): FinishReason {
  if (raw === undefined) return hasToolCalls ? "tool_calls" : "stop";
  return ALIASES[raw] ?? raw;
}
