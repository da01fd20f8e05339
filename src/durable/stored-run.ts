import { AgentError, type AgentErrorCode } from "../errors/agent-error.js";
import type { CallRecord, EngineContext, ResumePoint } from "../machine/context.js";
import type { Message } from "../models/messages.js";
import type { PermissionAnswer } from "../permissions/types.js";
import type { ToolRisk } from "../tools/define-tool.js";
import { RUN_RECORD_VERSION, type StoredAt, type StoredCall, type StoredRun, type StoredSettings } from "./run-store.js";

/**
 * A run's context as stored: everything resume() needs, nothing it can make again (tools, model, hooks). `at` is the
 * state it is in; a suspended run is in ask_permission.
 */
export function storedRunOf(
  context: EngineContext,
  settings: StoredSettings,
  traceSeq: number,
  now: number,
  at: StoredAt = "ask_permission",
  status: StoredRun["status"] = "suspended",
  started: readonly string[] = [],
): StoredRun {
  return { ...storedHeadOf(context, settings, traceSeq, now, at, status, started), messages: context.messages.slice() };
}

/**
 * The stored run without its conversation, read from a context (a value: the engine replaces what it changes, the
 * batch's records included, and only appends to the conversation).
 */
export function storedHeadOf(
  context: EngineContext,
  settings: StoredSettings,
  traceSeq: number,
  now: number,
  at: StoredAt,
  status: StoredRun["status"],
  started: readonly string[],
): Omit<StoredRun, "messages"> {
  const anchor = context.call.usageAnchor;
  return {
    v: RUN_RECORD_VERSION,
    sessionId: context.run.sessionId,
    runId: context.durable.runId,
    status,
    at,
    since: new Date(now).toISOString(),
    cwd: context.run.cwd,
    settings,
    activeMs: Math.max(0, now - context.run.startedAt),
    traceSeq,
    turn: context.turn,
    toolCallCount: context.toolCallCount,
    usage: { ...context.usage },
    batch: context.batch.map(storedCall),
    batchState: { open: context.batchState.open, hitToolLimit: context.batchState.hitToolLimit, repeat: { ...context.batchState.repeat } },
    call: {
      ...(anchor ? { usageAnchor: { tokens: anchor.tokens, messageCount: anchor.messageCount } } : {}),
      overflowCompacted: context.call.overflowCompacted,
      modelErrorAttempts: context.call.modelErrorAttempts,
    },
    inbox: { steering: context.inbox.steering.map((m) => ({ role: "user", content: m.content })), followUp: context.inbox.followUp.map((m) => ({ role: "user", content: m.content })) },
    pending: context.durable.pending ?? [],
    started: [...started],
  };
}

function storedCall(record: CallRecord): StoredCall {
  const { error, ...rest } = record;
  const stored = { ...rest } as StoredCall;
  if (error) stored.error = { code: error.code, message: error.message };
  return stored;
}

/** The stored run as the machine's resume point, and the calls a crash interrupted (see `recoverBatch`). */
export function resumePointOf(
  run: StoredRun,
  answers: Readonly<Record<string, PermissionAnswer>>,
  answeredBy: string | undefined,
  riskOf: (tool: string) => ToolRisk | undefined,
): { point: ResumePoint; interrupted: string[] } {
  const batch = run.batch.map((stored) => {
    const { error, ...rest } = stored;
    const record = { ...rest } as unknown as CallRecord;
    if (error) record.error = new AgentError(error.code as AgentErrorCode, error.message);
    return record;
  });
  let turn = run.turn;
  let toolCallCount = run.toolCallCount;
  let at: ResumePoint["at"] = "ask_permission";
  let interrupted: string[] = [];
  if (run.status === "running" && run.at === "call_model") {
    // The model call in flight had no effect: it is made again, and counts once.
    at = "model";
    turn -= 1;
  } else if (run.status === "running" && run.at === "execute_tool") {
    const recovered = recoverBatch(batch, new Set(run.started), riskOf);
    interrupted = recovered.interrupted;
    // Calls run again are counted again as execute_tool is entered.
    toolCallCount -= recovered.rerun;
    at = recovered.rerun > 0 ? "execute_tool" : "append_tool_result";
  }
  const point: ResumePoint = {
    at,
    turn,
    toolCallCount,
    usage: { ...run.usage },
    batch,
    batchState: { ...run.batchState, repeat: { ...run.batchState.repeat } },
    call: {
      ...(run.call.usageAnchor ? { usageAnchor: run.call.usageAnchor } : {}),
      overflowCompacted: run.call.overflowCompacted,
      modelErrorAttempts: run.call.modelErrorAttempts,
    },
    answers,
    ...(answeredBy !== undefined ? { answeredBy } : {}),
  };
  return { point, interrupted };
}

/**
 * A batch whose process died while it ran: calls that finished keep their results; a call that started and did not
 * finish runs again if its tool only reads, and otherwise (write, exec, or a tool not given to resume) gets an
 * `INTERRUPTED` error result: it may have had its effect, so the model checks and decides.
 */
export function recoverBatch(batch: CallRecord[], started: ReadonlySet<string>, riskOf: (tool: string) => ToolRisk | undefined): { interrupted: string[]; rerun: number } {
  const interrupted: string[] = [];
  let rerun = 0;
  for (const record of batch) {
    if (record.status !== "allowed" || record.result) continue;
    // A call that had not started yet simply runs.
    if (!started.has(record.call.id)) {
      rerun++;
      continue;
    }
    interrupted.push(record.call.id);
    if (riskOf(record.call.name) === "read") {
      rerun++;
      continue;
    }
    record.status = "finished";
    record.result = {
      content:
        `INTERRUPTED: ${record.call.name} had started when the run's process died, and did not finish; its outcome is unknown ` +
        `(it may have done some or all of its work). Check the state it acts on before calling it again.`,
      isError: true,
    };
  }
  return { interrupted, rerun };
}

/** The stored conversation as messages (its shape was checked on load). */
export function storedMessages(run: StoredRun): Message[] {
  return run.messages as Message[];
}
