import { AgentError, type ErrorInfo } from "../../errors/agent-error.js";
import type { EngineContext } from "../context.js";
import type { StopReason } from "../stop-reasons.js";
import { closeBatch } from "./execution.js";
import { whatWouldAllow } from "./permissions.js";

/**
 * What ends a run, as the machine knows it. Each maps to one of the seed's eight reasons and one error code
 * (`stopFor`), so the whole mapping lives in this file.
 */
export type StopCause =
  | "final_answer"
  | "max_turns"
  /** `maxTokens` reached: still the seed's `max_turns`, with code `MAX_TOKENS`. */
  | "max_tokens"
  | "max_tool_calls"
  | "timeout"
  | "user_abort"
  | "permission_denied"
  /** A call's fatal error (`TOOL_FATAL`, or a call repeated past the loop guard). */
  | "tool_fatal"
  /** The final answer still did not match the run's `output` schema: `model_error`, `OUTPUT_INVALID`. */
  | "output_invalid"
  /** The failure recover could not recover from (`outcome.failure`): its reason follows from where it happened. */
  | "failure"
  /** `done` was reached with no reason set: a defect of the engine itself. */
  | "engine_defect";

/** Why the run stops. */
export interface Stop {
  reason: StopReason;
  error?: ErrorInfo;
}

/**
 * Sets why the run stops, unless an earlier step already did: the first reason wins. Every stop of the machine comes
 * here (the `stop` action), and nothing else writes `outcome.stopReason`.
 */
export function stopWith(context: EngineContext, cause: StopCause): Partial<EngineContext> {
  if (context.outcome.stopReason) return {};
  const { reason, error } = stopFor(cause, context);
  return { outcome: { ...context.outcome, stopReason: reason, ...(error ? { stopError: error } : {}) } };
}

/** The reason and error of each cause, read from the context as the run stops. */
export function stopFor(cause: StopCause, context: EngineContext): Stop {
  switch (cause) {
    case "final_answer":
      return { reason: "final_answer" };
    case "max_turns":
      return {
        reason: "max_turns",
        error: { code: "MAX_TURNS", message: `stopped after ${context.turn} model calls (maxTurns); raise maxTurns (now ${context.run.maxTurns}) to let the agent go on` },
      };
    case "max_tokens":
      return {
        reason: "max_turns",
        error: {
          code: "MAX_TOKENS",
          message: `stopped after ${context.usage.input + context.usage.output} tokens (maxTokens = ${context.loop.maxTokens}); raise maxTokens to let the agent go on`,
        },
      };
    case "max_tool_calls":
      return {
        reason: "max_tool_calls",
        error: {
          code: "MAX_TOOL_CALLS",
          message: `stopped after ${context.toolCallCount} tool calls (maxToolCalls); raise maxToolCalls (now ${context.run.maxToolCalls}) to let the agent go on`,
        },
      };
    case "timeout":
      return { reason: "timeout", error: { code: "TIMEOUT", message: `stopped after ${context.run.timeoutMs} ms (timeoutMs); raise timeoutMs for longer runs` } };
    case "user_abort":
      return { reason: "user_abort", error: { code: "USER_ABORT", message: "the run was aborted by the caller" } };
    case "permission_denied":
      return deniedStop(context);
    case "tool_fatal":
      return fatalStop(context);
    case "output_invalid": {
      const attempts = context.outcome.outputAttempts ?? 0;
      const why = context.outcome.outputErrors ?? "it does not match";
      const limit = attempts <= (context.deps.output?.retries ?? 0) ? ` (maxTurns = ${context.run.maxTurns} left no model call to ask again)` : "";
      return {
        reason: "model_error",
        error: { code: "OUTPUT_INVALID", message: `the final answer did not match the output schema after ${attempts} ${attempts === 1 ? "attempt" : "attempts"}${limit}: ${why}` },
      };
    }
    case "failure":
      return failureStop(context);
    case "engine_defect":
      return { reason: "model_error", error: { code: "ENGINE_FAILED", message: "the engine failed: it reached done without a stop reason" } };
  }
}

/** The first denied call of the response, and what would have allowed it. */
function deniedStop(context: EngineContext): Stop {
  const denied = context.batch.find((r) => r.status === "denied" && r.permission?.decision === "deny");
  const name = denied?.call.name ?? "a tool";
  const why = denied?.result?.content.replace(/^Permission denied: /, "").replace(/\. \S+ was not run\.$/, "") ?? "denied";
  return { reason: "permission_denied", error: { code: "PERMISSION_DENIED", message: `permission denied for ${name}: ${why}. ${whatWouldAllow(denied?.permission)}` } };
}

/** The first fatal call of the batch. */
function fatalStop(context: EngineContext): Stop {
  const fatal = context.batch.find((r) => r.fatal === true && r.error !== undefined);
  if (!fatal) return stopFor("engine_defect", context);
  const { code, message } = fatal.error!;
  return { reason: "tool_error", error: { code, message: code === "REPEATED_CALL" ? message : `tool ${fatal.call.name} failed fatally: ${message}` } };
}

/**
 * A failure nobody recovered from: a crash while running the tool batch ends `tool_error` (`TOOL_CRASHED`); a failed
 * model request, context build or hook ends `model_error` with its own code; an engine defect keeps `ENGINE_FAILED`.
 */
function failureStop(context: EngineContext): Stop {
  const failure = context.outcome.failure;
  if (!failure) return stopFor("engine_defect", context);
  const reason = failure.code === "TOOL_CRASHED" ? "tool_error" : "model_error";
  return { reason, error: failure.toJSON() };
}

/**
 * The tool batch's work failed as a whole (not one call's error, which each call reports as it finishes): a crash
 * inside a tool or the code that runs it, `TOOL_CRASHED`, unless the engine itself says it failed (`ENGINE_FAILED`).
 */
export function toolsCrash(error: unknown): AgentError {
  if (error instanceof AgentError && error.code === "ENGINE_FAILED") return error;
  const message = error instanceof Error ? error.message || error.name : String(error);
  return new AgentError("TOOL_CRASHED", `a tool crashed while the batch ran: ${message}`, { cause: error });
}

/** The machine's output: why it stopped (set on the way into done). */
export function outputOf(context: EngineContext): Stop {
  const { stopReason, stopError } = context.outcome;
  if (!stopReason) return stopFor("engine_defect", context);
  return stopError ? { reason: stopReason, error: stopError } : { reason: stopReason };
}

/**
 * Entering done: nothing is left half-recorded. Text the model streamed before being cut off is kept as an assistant
 * message marked `cutOff`; tool calls of an unfinished response get results saying they did not run. The reason was
 * set by the `stop` action that led here (done's own entry sets `engine_defect` when none did).
 */
export function closeRun(context: EngineContext): Partial<EngineContext> {
  const reason = context.outcome.stopReason;
  // streamingText is emptied when a response completes: text left in it belongs to a call that was cut off.
  const partial = context.call.streamingText;
  const cutOff = partial !== "" ? { ...context, messages: context.messages.append({ role: "assistant", content: partial, cutOff: true }) } : context;
  const closed = closeBatch(cutOff, `Not run: the run stopped (${reason}) before this call finished.`);
  return {
    ...closed,
    ...(partial !== "" ? { outcome: { ...context.outcome, finalText: partial }, call: { ...context.call, streamingText: "" } } : {}),
  };
}
