/**
 * `statecraft/trace`: reading and debugging traces: read a trace, show a run, replay it offline, fork it, make it a
 * regression case. `statecraft` re-exports the same names, so code written against the main entry keeps working.
 * (The `statecraft trace` commands live in src/cli/commands/trace-actions.ts, loaded by the command line only.)
 */
export {
  TRACE_VERSION,
  TRACE_LINE_KINDS,
  isKnownTraceLine,
  isUnknownTraceLine,
  type TraceLine,
  type TraceLineBase,
  type StateTraceLine,
  type StateDetails,
  type CommonDetails,
  type TracedResponse,
  type TracedToolResult,
  type RetryTraceLine,
  type CompactionTraceLine,
  type SuspendedTraceLine,
  type ResumedTraceLine,
  type UnknownTraceLine,
  type AnyTraceLine,
} from "../record/format.js";
export { readTrace, type ReadTraceOptions } from "../record/reader.js";
export type { RecordedResponse, RecordedRawCall } from "./recording.js";
export {
  loadSession,
  lastSessionId,
  summarizeSessions,
  splitRuns,
  type TraceSession,
  type SessionSummary,
  type ForkPoint,
} from "./session.js";
export { replay, type ReplayOptions, type ReplayResult, type Divergence } from "./replay.js";
export { fork, forkStart, type ForkOptions, type ForkStart } from "./fork.js";
export { scriptOf, type SessionScript } from "./script.js";
export {
  buildTimeline,
  formatTimeline,
  describeLine,
  timeSummary,
  tokensPerTurn,
  type SessionTimeline,
  type RunTimeline,
  type TimelineEntry,
  type TimeSummary,
  type TurnTokens,
} from "./timeline.js";
