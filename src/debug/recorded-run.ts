import type { ErrorInfo } from "../errors/agent-error.js";
import type { StateTraceLine, AnyTraceLine } from "../record/format.js";
import type { TracedRunOptions, TracedTool } from "../record/settings-record.js";

// A recorded run as its trace lines tell it (options, model calls, tool batches, decisions, the stop): what
// analyseRun (recording.ts) reads the lines into, and what replay, fork and script work from.

/** A tool as the build_context line records it (its schema and how it runs; its code is not in the trace). */
export type RecordedTool = TracedTool;

/**
 * The run's options as the build_context line records them, read back (a trace is untrusted input: what a line lacks
 * is filled in, so an old trace or an edited one reads as `continued: false` and with the guards' defaults left out).
 */
export interface RecordedOptions extends Omit<TracedRunOptions, "continued" | "maxRepeatedCalls" | "maxDelegationDepth" | "steeringMode" | "followUpMode" | "depth" | "tools"> {
  continued: boolean;
  maxRepeatedCalls?: number;
  maxDelegationDepth?: number;
  tools: RecordedTool[];
}

/** A tool call as the model produced it (a response's `toolCalls`). */
export interface RecordedRawCall {
  /** The engine's id for the call (absent on a `done` line). */
  id?: string;
  name: string;
  arguments: string | Record<string, unknown>;
  providerId?: string;
}

/** A model output as recorded on the line after its call. */
export interface RecordedResponse {
  text: string;
  toolCalls: RecordedRawCall[];
  finishReason: string;
  usage?: { input: number; output: number; cached?: number; reasoning?: number };
  thinking?: string;
}

/** How one model call ended, as far as the trace tells. */
export type ModelCallOutcome =
  | { kind: "response"; response: RecordedResponse; seq: number }
  /** The request failed: the recover line's error. */
  | { kind: "error"; error: ErrorInfo; seq: number }
  /** The run stopped while the call was in progress (an abort, the deadline); `seq` is the done line's. */
  | { kind: "cut"; seq: number; text?: string }
  /** The trace ends (or is damaged) before the call's outcome. */
  | { kind: "unknown" };

/** What happened during a call before its outcome: retries and the first text delta (`stream_text`), in order. */
export type ModelCallStreamEntry =
  | { type: "retry"; attempt: number; delayMs: number; error: { code: string; message: string }; seq: number }
  | { type: "text"; seq: number };

/** One model call of a run (one `call_model` line), in call order. */
export interface RecordedModelCall {
  index: number;
  turn: number;
  /** The call_model line's seq. */
  seq: number;
  /** Messages the call was sent (the call_model line's `messages`). */
  messages?: number;
  stream: ModelCallStreamEntry[];
  outcome: ModelCallOutcome;
}

export interface RecordedResult {
  content: string;
  isError: boolean;
  details?: Record<string, unknown>;
  /** Present when the tool ran to an end (result or thrown error); absent for results the engine wrote itself. */
  durationMs?: number;
  error?: ErrorInfo;
  /** The result's parts (an image the tool returned), as the line holds them: images and files by hash. */
  parts?: unknown[];
  /** The line that carries the result. */
  seq: number;
  /** The run's result for a call a crash interrupted (a recovered run's `INTERRUPTED`): what the call gave, for the replay. */
  interrupted?: boolean;
}

export interface RecordedPermission {
  decision: "allow" | "allow_always" | "deny";
  by: string;
  rule?: string;
  input?: unknown;
  /** The line that carries the decision. */
  seq: number;
}

/** One tool call of a response and what the trace says about it. */
export interface RecordedCall {
  position: number;
  id?: string;
  name: string;
  arguments: string | Record<string, unknown>;
  providerId?: string;
  /** The input after validation (validate_tool's `calls`), when recorded. */
  input?: unknown;
  hasInput: boolean;
  permission?: RecordedPermission;
  result?: RecordedResult;
  /** Listed in an execute_tool line's `run`: the engine started it. */
  ran: boolean;
}

/** The tool calls of one model response. */
export interface RecordedBatch {
  /** The model call (index) whose response this is. */
  callIndex: number;
  turn: number;
  /** The line that carries the response. */
  seq: number;
  calls: RecordedCall[];
}

/** Why a run's lines can't be read as a run. */
export interface RunProblem {
  /** The seq where the run stops making sense (a missing or misplaced line, an unknown state). */
  seq: number;
  kind: "missing" | "order" | "unknown_state" | "malformed" | "no_build_context" | "no_done" | "bad_options";
  message: string;
  /** The line found where `seq` was expected, if any. */
  found?: AnyTraceLine;
}

/** One run of a session (its lines from seq 0 to done), analysed. */
export interface RecordedRun {
  /** 0-based position of the run in its session. */
  index: number;
  lines: AnyTraceLine[];
  build?: StateTraceLine;
  /** The request's text (its text parts joined when it had parts). */
  input: string;
  /** The request's parts, when it had parts (images and files by hash, as the line holds them): see `requestOf`. */
  inputParts?: unknown[];
  options?: RecordedOptions;
  modelCalls: RecordedModelCall[];
  batches: RecordedBatch[];
  done?: StateTraceLine;
  /** The first problem with the run's lines; undefined when they read as a complete run. */
  problem?: RunProblem;
}
