import type { EngineContext } from "../context.js";
import { errorResultText } from "./tool-calls.js";

/**
 * recover, the single place for errors (the seed's recoverFromError). A call's recoverable error (unknown tool,
 * invalid input, truncated response, a tool that threw) goes back to the model as that call's error result; a fatal
 * tool error ends the run `tool_error`; a failed model request (or a failure building the context) `model_error`.
 */
export function recoverFromErrors(context: EngineContext): Partial<EngineContext> {
  if (context.failure) {
    const failure = context.failure;
    return { stopReason: "model_error", stopError: { ...failure.toJSON() } };
  }
  let fatal: { name: string; message: string } | undefined;
  for (const record of context.batch) {
    if (!record.error || record.result) continue;
    if (record.fatal) {
      fatal ??= { name: record.call.name, message: record.error.message };
      record.result = { content: `Error: ${record.error.message}`, isError: true };
      record.status = "finished";
      continue;
    }
    record.result = { content: errorResultText(record.error), isError: true };
    if (record.status !== "finished") record.status = "invalid";
  }
  if (fatal) {
    return { stopReason: "tool_error", stopError: { code: "TOOL_FATAL", message: `tool ${fatal.name} failed fatally: ${fatal.message}` } };
  }
  return {};
}
