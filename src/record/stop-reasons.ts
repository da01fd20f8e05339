/** Why a run stopped: exactly the seed's eight. */
export const STOP_REASONS = [
  "final_answer",
  "max_turns",
  "max_tool_calls",
  "timeout",
  "user_abort",
  "permission_denied",
  "tool_error",
  "model_error",
] as const;

export type StopReason = (typeof STOP_REASONS)[number];
