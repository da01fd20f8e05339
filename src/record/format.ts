import type { ErrorInfo } from "../errors/agent-error.js";
import type { EngineStateName } from "./engine-states.js";
import type { StopReason } from "./stop-reasons.js";
import type { FinishReason, Usage } from "../models/model.js";
import type { PermissionRecord } from "./permission-record.js";

/** The trace format version this build writes. Readers accept this and older versions. */
export const TRACE_VERSION = 1;

/** Fields every trace line carries. */
export interface TraceLineBase {
  /** Format version. */
  v: number;
  sessionId: string;
  /** Per session, from 0, one more per line. */
  seq: number;
  /** ISO 8601 time the line was recorded. */
  time: string;
  /** Set on every line of a forked or subagent session: the session it came from. */
  parentSession?: string;
}

/** A model's answer as a trace line records it (docs/trace.md, "response"). */
export interface TracedResponse {
  text: string;
  toolCalls: Array<{ id?: string; name: string; arguments: string; providerId?: string }>;
  finishReason: FinishReason;
  usage?: Usage;
  thinking?: string;
}

/** A tool result as a trace line records it (`results`). */
export interface TracedToolResult {
  toolCallId: string;
  name: string;
  content: string;
  isError: boolean;
  details?: Record<string, unknown>;
  durationMs?: number;
  error?: ErrorInfo;
}

/** What any state's details may carry besides its own fields: the answer that led into it, new decisions and results. */
export interface CommonDetails {
  response?: TracedResponse;
  permissions?: Array<PermissionRecord & { name: string; reason?: string }>;
  results?: TracedToolResult[];
}

/** The details of each state (docs/trace.md, "State details"). */
export interface StateDetails {
  /** `input` and `options` on the run's first line (seq 0) only. */
  build_context: CommonDetails & { input?: string; options?: Record<string, unknown> };
  call_model: CommonDetails & {
    messages: number;
    claimed?: { source: "steering" | "follow_up"; messages: string[] };
    compaction?: { tokensBefore: number; tokensAfter: number; summary: string };
    retry?: true;
  };
  stream_text: CommonDetails;
  parse_tool_call: CommonDetails;
  validate_tool: CommonDetails & { calls: Array<{ id: string; name: string; input: unknown }> };
  ask_permission: CommonDetails & { calls: string[] };
  execute_tool: CommonDetails & { run: string[] };
  append_tool_result: CommonDetails;
  recover: CommonDetails & {
    errors?: Array<{ toolCallId: string; name: string; code: string; message: string; fatal?: true }>;
    error?: ErrorInfo;
  };
  /** The final answer checked against `output`: its attempt number, and the parsed value or the errors. */
  validate_output: CommonDetails & { attempt: number; valid: boolean; output?: unknown; errors?: string };
  done: CommonDetails & {
    /** With `output`: the validated answer (as `result.output`). */
    output?: unknown;
    reason: StopReason;
    error?: ErrorInfo;
    turns: number;
    toolCalls: number;
    usage: { input: number; output: number; cached: number; reasoning: number };
    durationMs: number;
    text: string;
  };
}

/**
 * One state entered: what led into it is in `details`, typed per state. Narrow on `state` (`line.state === "done"`)
 * to get that state's details. Given a state name, the line of that state only.
 */
export type StateTraceLine<S extends EngineStateName = EngineStateName> = {
  [K in S]: TraceLineBase & {
    kind: "state";
    state: K;
    /** Model calls started so far in this run. */
    turn: number;
    details: StateDetails[K];
    /** On the first line of a forked session: where it was forked from. */
    forkedAt?: { sessionId: string; seq: number; run?: number };
  };
}[S];

/** A model request retried by the provider. */
export interface RetryTraceLine extends TraceLineBase {
  kind: "retry";
  turn: number;
  attempt: number;
  delayMs: number;
  error: ErrorInfo;
}

/** Older turns were replaced by a summary. */
export interface CompactionTraceLine extends TraceLineBase {
  kind: "compaction";
  turn: number;
  tokensBefore: number;
  tokensAfter: number;
}

/** A call whose permission question waits for an answer while the run is suspended. */
export interface PendingCall {
  callId: string;
  name: string;
  input: unknown;
  reason: string;
}

/** The run stopped at permission questions (docs/durable.md); no `done` line follows. */
export interface SuspendedTraceLine extends TraceLineBase {
  kind: "suspended";
  turn: number;
  runId: string;
  pending: PendingCall[];
}

/** A suspended (or interrupted) run went on: its lines continue with the next `seq`. */
export interface ResumedTraceLine extends TraceLineBase {
  kind: "resumed";
  turn: number;
  runId: string;
  answers: Record<string, string>;
  by: "human";
  answeredBy?: string;
  afterMs: number;
  /** A durable run resumed after its process died. */
  recovered?: true;
  interrupted?: unknown[];
}

/** A line of every kind this version writes: a discriminated union on `kind` (and on `state` for state lines). */
export type TraceLine = StateTraceLine | RetryTraceLine | CompactionTraceLine | SuspendedTraceLine | ResumedTraceLine;

/** The kinds this version knows. */
export const TRACE_LINE_KINDS = ["state", "retry", "compaction", "suspended", "resumed"] as const satisfies readonly TraceLine["kind"][];

/**
 * A line of a kind this version does not know (written by a later one): kept as it is. It is a type of its own,
 * outside `TraceLine`: a `kind: string` member would stop `line.kind === "state"` from narrowing the union.
 */
export interface UnknownTraceLine extends TraceLineBase {
  kind: string;
  [key: string]: unknown;
}

/** What a reader that keeps every line gives: a known line or an unknown one; tell them apart with `isUnknownTraceLine`. */
export type AnyTraceLine = TraceLine | UnknownTraceLine;

const KNOWN: ReadonlySet<string> = new Set(TRACE_LINE_KINDS);

/** True for a line of a kind this version does not know; in the other branch the line narrows as a `TraceLine`. */
export function isUnknownTraceLine(line: AnyTraceLine): line is UnknownTraceLine {
  return !KNOWN.has(line.kind);
}

/** True for a line of a kind this version knows (the opposite of `isUnknownTraceLine`). */
export function isKnownTraceLine(line: AnyTraceLine): line is TraceLine {
  return KNOWN.has(line.kind);
}
