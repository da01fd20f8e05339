import type { AgentError } from "../../errors/agent-error.js";
import type { ToolResult } from "../../models/messages.js";
import type { EngineContext } from "../context.js";

/** Entering execute_tool: the allowed calls count against maxToolCalls. */
export function startExecution(context: EngineContext): Partial<EngineContext> {
  let runs = 0;
  for (const record of context.batch) if (record.status === "allowed") runs++;
  return { toolCallCount: context.toolCallCount + runs };
}

/** A tool call finished: its result, or its error for recover to judge. */
export function recordToolFinished(
  context: EngineContext,
  finished: { id: string; result?: ToolResult; error?: AgentError; fatal?: boolean; durationMs: number },
): Partial<EngineContext> {
  const record = context.batch.find((r) => r.call.id === finished.id);
  if (!record) return {};
  record.status = "finished";
  record.durationMs = finished.durationMs;
  if (finished.result) record.result = finished.result;
  if (finished.error) record.error = finished.error;
  if (finished.fatal) record.fatal = true;
  return {};
}

/**
 * append_tool_result: every call of the response gets exactly one tool message, in call order (the OpenAI API
 * rejects a tool call without its result). Calls the budget left out are told so.
 */
export function appendToolResults(context: EngineContext): Partial<EngineContext> {
  for (const record of context.batch) {
    if (!record.result && record.status === "over_limit") {
      record.result = {
        content: `Not run: the run's tool-call limit (maxToolCalls = ${context.run.maxToolCalls}) was reached.`,
        isError: true,
      };
    }
  }
  closeBatch(context, "Not run.");
  return { batchState: { ...context.batchState, open: false } };
}

/** Pushes one tool message per call of the open batch; calls without a result get `missing`. */
export function closeBatch(context: EngineContext, missing: string): void {
  if (!context.batchState.open) return;
  for (const record of context.batch) {
    if (!record.result) {
      record.result = { content: missing, isError: true };
      if (record.status !== "finished") record.status = "denied";
    }
    context.messages.push({
      role: "tool",
      toolCallId: record.call.id,
      name: record.call.name,
      content: record.result.content,
      isError: record.result.isError,
    });
  }
}
