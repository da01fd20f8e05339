import type { ErrorInfo } from "../errors/agent-error.js";
import type { AgentEvent, RunResult, RunUsage } from "../events.js";
import type { EngineContext } from "../machine/context.js";
import type { StopReason } from "../machine/stop-reasons.js";
import type { PendingCall } from "../record/format.js";
import { redactText } from "../record/redact.js";

/** What a run amounts to, the same for `turn_end`, the `RunResult`, the trace's `done` line and `finished()`. */
export interface RunTotals {
  sessionId: string;
  /** Model calls made. */
  turns: number;
  toolCalls: number;
  usage: RunUsage;
  /** The final assistant text (the last model output's text). */
  text: string;
  /** From the run's start to its end (or its suspension). */
  durationMs: number;
}

/** A run that ran to its end. */
export interface CompletedRunSummary extends RunTotals {
  status: "completed";
  reason: StopReason;
  error?: ErrorInfo;
  /** With `output`: the validated final answer. */
  output?: unknown;
}

/** A run that stopped at permission questions, to be resumed. */
export interface SuspendedRunSummary extends RunTotals {
  status: "suspended";
  runId: string;
  pending: PendingCall[];
}

/** The run's one summary: built once, when the run ends, and given to every observer's `finished`. */
export type RunSummary = CompletedRunSummary | SuspendedRunSummary;

/** How the run ended, beyond what its context says. */
export interface RunEnd {
  /** When it ended (epoch ms). */
  time: number;
  /** The engine itself failed (the actor errored): the run ends `model_error`, `ENGINE_FAILED`. */
  crash?: unknown;
  /** It stopped at these questions. */
  suspended?: { runId: string; pending: PendingCall[] };
  /** Redacted from the error's message (the CLI prints it, callers keep it). */
  secrets?: readonly string[];
}

/** The summary of a run from its final context. */
export function runSummary(context: EngineContext, end: RunEnd): RunSummary {
  const totals: RunTotals = {
    sessionId: context.run.sessionId,
    turns: context.turn,
    toolCalls: context.toolCallCount,
    usage: { ...context.usage },
    text: context.outcome.finalText,
    durationMs: end.time - context.run.startedAt,
  };
  if (end.suspended) return { status: "suspended", runId: end.suspended.runId, pending: end.suspended.pending, ...totals };
  let reason: StopReason = context.outcome.stopReason ?? "model_error";
  let error = context.outcome.stopError;
  if (end.crash !== undefined) {
    reason = "model_error";
    error = { code: "ENGINE_FAILED", message: `the engine failed: ${(end.crash as Error)?.message ?? String(end.crash)}` };
  }
  if (error && end.secrets) error = { ...error, message: redactText(error.message, end.secrets) };
  const output = reason === "final_answer" && context.outcome.output !== undefined ? { output: context.outcome.output } : {};
  return { status: "completed", reason, ...(error ? { error } : {}), ...totals, ...output };
}

/** The run's last event, from its summary. */
export function turnEndOf(summary: CompletedRunSummary): Extract<AgentEvent, { type: "turn_end" }> {
  return {
    type: "turn_end",
    reason: summary.reason,
    sessionId: summary.sessionId,
    turns: summary.turns,
    toolCalls: summary.toolCalls,
    usage: summary.usage,
    ...(summary.error ? { error: summary.error } : {}),
    ...(summary.output !== undefined ? { output: summary.output } : {}),
  };
}

/** The run's result, from its summary and the conversation it ended with (the system prompt left out). */
export function runResultOf(summary: RunSummary, context: EngineContext): RunResult {
  const messages = context.messages.filter((m) => m.role !== "system");
  const { sessionId, turns, toolCalls, usage, text } = summary;
  if (summary.status === "suspended") return { status: "suspended", runId: summary.runId, pending: summary.pending, text, messages, usage, sessionId, turns, toolCalls };
  return {
    status: "completed",
    reason: summary.reason,
    text,
    messages,
    usage,
    sessionId,
    turns,
    toolCalls,
    ...(summary.error ? { error: summary.error } : {}),
    ...(summary.output !== undefined ? { output: summary.output } : {}),
  };
}
