import type { EngineContext } from "../context.js";
import { errorResultText } from "./tool-calls.js";

/**
 * recover, the single place for errors (the seed's recoverFromError). A call's recoverable error (unknown tool,
 * invalid input, truncated response, a tool that threw) goes back to the model as that call's error result; a fatal
 * tool error (or a repeated call past the limit) ends the run `tool_error`. A failed model request or context build
 * is left to the guards leaving recover: a context overflow is compacted and retried once, `onModelError` decides
 * the rest, and without it the run ends `model_error`.
 */
export function recoverFromErrors(context: EngineContext): Partial<EngineContext> {
  // A failed request or context build is judged by the guards that leave recover (overflow, onModelError, stop).
  if (context.outcome.failure) return {};
  let fatal: { name: string; code: string; message: string } | undefined;
  for (const record of context.batch) {
    if (!record.error || record.result) continue;
    if (record.fatal) {
      fatal ??= { name: record.call.name, code: record.error.code, message: record.error.message };
      record.result = { content: `Error: ${record.error.message}`, isError: true };
      record.status = "finished";
      continue;
    }
    record.result = { content: errorResultText(record.error), isError: true };
    if (record.status !== "finished") record.status = "invalid";
  }
  if (fatal) {
    const message = fatal.code === "REPEATED_CALL" ? fatal.message : `tool ${fatal.name} failed fatally: ${fatal.message}`;
    return { outcome: { ...context.outcome, stopReason: "tool_error", stopError: { code: fatal.code, message } } };
  }
  return {};
}
