import type { EngineContext } from "../context.js";
import { replaceRecords } from "./records.js";
import { errorResultText } from "./tool-calls.js";

/**
 * recover, the single place for errors (the seed's recoverFromError). A call's recoverable error (unknown tool,
 * invalid input, truncated response, a tool that threw) goes back to the model as that call's error result; a fatal
 * tool error (or a repeated call past the limit) gets its result too, and the guard leaving recover ends the run
 * `tool_error`. A failed model request or context build is left to the guards leaving recover: a context overflow is
 * compacted and retried once, `onModelError` decides the rest, and without it the run ends `model_error`.
 */
export function recoverFromErrors(context: EngineContext): Partial<EngineContext> {
  // A failed request or context build is judged by the guards that leave recover (overflow, onModelError, stop).
  if (context.outcome.failure) return {};
  const batch = replaceRecords(context.batch, (record) => {
    if (!record.error || record.result) return record;
    if (record.fatal) return { ...record, result: { content: `Error: ${record.error.message}`, isError: true }, status: "finished" };
    return { ...record, result: { content: errorResultText(record.error), isError: true }, status: record.status === "finished" ? "finished" : "invalid" };
  });
  return batch === context.batch ? {} : { batch };
}
