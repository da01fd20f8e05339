import type { AgentError } from "../../errors/agent-error.js";
import type { Message, ToolResult } from "../../models/messages.js";
import type { CallRecord, EngineContext } from "../context.js";
import { replaceRecords, withFields } from "./records.js";

/** Entering execute_tool: the allowed calls count against maxToolCalls. */
export function startExecution(context: EngineContext): Partial<EngineContext> {
  let runs = 0;
  for (const record of context.batch) if (record.status === "allowed") runs++;
  return { toolCallCount: context.toolCallCount + runs };
}

/**
 * A tool call finished: its result (announced at once, by the action that records it), or its error for recover to
 * judge. Undefined for a call not of this batch.
 */
export function recordToolFinished(
  context: EngineContext,
  finished: { id: string; result?: ToolResult; error?: AgentError; fatal?: boolean; durationMs: number },
): { batch: readonly CallRecord[]; record: CallRecord } | undefined {
  const index = context.batch.findIndex((r) => r.call.id === finished.id);
  if (index < 0) return undefined;
  const record = finishedRecord(context.batch[index], finished);
  const batch = context.batch.slice();
  batch[index] = record;
  return { batch, record };
}

function finishedRecord(record: CallRecord, finished: { result?: ToolResult; error?: AgentError; fatal?: boolean; durationMs: number }): CallRecord {
  // Built by assignment, not by spreading optional parts: one object per finished call.
  const next = withFields(record, { status: "finished", durationMs: finished.durationMs });
  if (finished.result) {
    next.result = finished.result;
    next.announced = true;
  }
  if (finished.error) next.error = finished.error;
  if (finished.fatal) next.fatal = true;
  return next;
}

/**
 * append_tool_result: every call of the response gets exactly one tool message, in call order (the OpenAI API
 * rejects a tool call without its result). Calls the budget left out are told so.
 */
export function appendToolResults(context: EngineContext): Partial<EngineContext> {
  const limited = replaceRecords(context.batch, (record) =>
    !record.result && record.status === "over_limit"
      ? { ...record, result: { content: `Not run: the run's tool-call limit (maxToolCalls = ${context.run.maxToolCalls}) was reached.`, isError: true } }
      : record,
  );
  return closeBatch(limited === context.batch ? context : { ...context, batch: limited }, "Not run.");
}

/**
 * Closes the open batch: calls without a result get `missing`, and one tool message per call joins the conversation.
 */
export function closeBatch(context: EngineContext, missing: string): Pick<EngineContext, "batch" | "batchState" | "messages"> {
  if (!context.batchState.open) return { batch: context.batch, batchState: context.batchState, messages: context.messages };
  const batch = replaceRecords(context.batch, (record) =>
    record.result ? record : { ...record, result: { content: missing, isError: true }, status: record.status === "finished" ? "finished" : "denied" },
  );
  const results: Message[] = [];
  for (const record of batch) {
    const result = record.result!;
    const message: Message = { role: "tool", toolCallId: record.call.id, name: record.call.name, content: result.content, isError: result.isError };
    if (result.parts) message.parts = result.parts;
    results.push(message);
  }
  return { batch, batchState: { ...context.batchState, open: false }, messages: context.messages.append(...results) };
}
