import { AgentError, type AgentErrorCode } from "../errors/agent-error.js";
import type { CallRecord, EngineContext, ResumePoint } from "../machine/context.js";
import type { Message } from "../models/messages.js";
import type { PermissionAnswer } from "../permissions/types.js";
import { RUN_RECORD_VERSION, type StoredCall, type StoredRun, type StoredSettings } from "./run-store.js";

/** A suspended run's context as stored: everything resume() needs, nothing it can make again (tools, model, hooks). */
export function storedRunOf(context: EngineContext, settings: StoredSettings, traceSeq: number, now: number): StoredRun {
  const anchor = context.call.usageAnchor;
  return {
    v: RUN_RECORD_VERSION,
    sessionId: context.run.sessionId,
    runId: context.durable.runId,
    status: "suspended",
    since: new Date(now).toISOString(),
    cwd: context.run.cwd,
    settings,
    activeMs: Math.max(0, now - context.run.startedAt),
    traceSeq,
    turn: context.turn,
    toolCallCount: context.toolCallCount,
    usage: { ...context.usage },
    messages: context.messages.map((m) => ({ ...m })),
    batch: context.batch.map(storedCall),
    batchState: { open: context.batchState.open, hitToolLimit: context.batchState.hitToolLimit, repeat: { ...context.batchState.repeat } },
    call: {
      ...(anchor ? { usageAnchor: { tokens: anchor.tokens, messageCount: anchor.messageCount } } : {}),
      overflowCompacted: context.call.overflowCompacted,
      modelErrorAttempts: context.call.modelErrorAttempts,
    },
    inbox: { steering: context.inbox.steering.map((m) => ({ role: "user", content: m.content })), followUp: context.inbox.followUp.map((m) => ({ role: "user", content: m.content })) },
    pending: context.durable.pending ?? [],
  };
}

function storedCall(record: CallRecord): StoredCall {
  const { error, ...rest } = record;
  return JSON.parse(JSON.stringify({ ...rest, ...(error ? { error: { code: error.code, message: error.message } } : {}) })) as StoredCall;
}

/** The stored run as the machine's resume point, with the answers resume() was given. */
export function resumePointOf(run: StoredRun, answers: Readonly<Record<string, PermissionAnswer>>, answeredBy: string | undefined): ResumePoint {
  return {
    turn: run.turn,
    toolCallCount: run.toolCallCount,
    usage: { ...run.usage },
    batch: run.batch.map((stored) => {
      const { error, ...rest } = stored;
      const record = { ...rest } as unknown as CallRecord;
      if (error) record.error = new AgentError(error.code as AgentErrorCode, error.message);
      return record;
    }),
    batchState: { ...run.batchState, repeat: { ...run.batchState.repeat } },
    call: {
      ...(run.call.usageAnchor ? { usageAnchor: run.call.usageAnchor } : {}),
      overflowCompacted: run.call.overflowCompacted,
      modelErrorAttempts: run.call.modelErrorAttempts,
    },
    answers,
    ...(answeredBy !== undefined ? { answeredBy } : {}),
  };
}

/** The stored conversation as messages (its shape was checked on load). */
export function storedMessages(run: StoredRun): Message[] {
  return run.messages as Message[];
}
