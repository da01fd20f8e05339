import type { ErrorInfo } from "../errors/agent-error.js";
import type { EngineStateName } from "../machine/states.js";

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

/** One state entered: what led into it is in `details` (see docs/trace.md). */
export interface StateTraceLine extends TraceLineBase {
  kind: "state";
  state: EngineStateName;
  /** Model calls started so far in this run. */
  turn: number;
  details: Record<string, unknown>;
  /** On the first line of a forked session: where it was forked from. */
  forkedAt?: { sessionId: string; seq: number };
}

/** A model request retried by the provider. */
export interface RetryTraceLine extends TraceLineBase {
  kind: "retry";
  turn: number;
  attempt: number;
  delayMs: number;
  error: ErrorInfo;
}

/** Lines of other kinds (compaction, …) written by later features; readers keep them as they are. */
export interface OtherTraceLine extends TraceLineBase {
  kind: string;
  [key: string]: unknown;
}

export type TraceLine = StateTraceLine | RetryTraceLine | OtherTraceLine;
