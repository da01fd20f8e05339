import type { StopReason } from "../machine/stop-reasons.js";

/**
 * The process exit codes of the command line. Scripts branch on them, so they never change meaning:
 * one per stop reason, 2 for a usage error, 1 only for a crash (a bug, never an expected outcome).
 */
export const EXIT_CODES = {
  final_answer: 0,
  crash: 1,
  usage: 2,
  max_turns: 3,
  max_tool_calls: 4,
  timeout: 5,
  permission_denied: 6,
  tool_error: 7,
  model_error: 8,
  /** Not a stop: the run suspended at a permission question (`--on-ask suspend`); `statecraft resume` goes on. */
  suspended: 10,
  user_abort: 130,
} as const;

export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];

/** The exit code a run that stopped for `reason` ends the process with. */
export function exitCodeFor(reason: StopReason): ExitCode {
  return EXIT_CODES[reason];
}
