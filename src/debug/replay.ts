import type { AnyTraceLine } from "../record/format.js";
import { analyseRun, compactionsIn, compactionSummaries } from "./recording.js";
import { splitRuns, type TraceSession } from "./session.js";
import { sessionBlobs } from "./blobs.js";

export interface ReplayOptions {
  /** Lines of context shown before the divergence (default 3). */
  contextLines?: number;
}

/** Where a replay first stopped matching its recording. */
export interface Divergence {
  /** The seq (in the recording's numbering) of the first line that differs. */
  seq: number;
  /** The run of the session (1-based) it is in. */
  run: number;
  /** The recorded state there (`retry` etc. for other lines, `(missing line)`, `(end of recording)`). */
  recorded: string;
  /** The state the replay reached there (`(end of run)` when it had stopped). */
  replayed: string;
  /** `diverged at seq N: recorded <state>, replayed <state>` */
  message: string;
  /** What differs there, in words. */
  reason: string;
  /** The lines around it, recorded and replayed, and what the replay noticed. */
  context: string[];
}

export interface ReplayResult {
  identical: boolean;
  divergence?: Divergence;
  sessionId: string;
  /** Runs replayed (a session has one per request). */
  runs: number;
  /** Lines of the recording. */
  lines: number;
  /** The lines the replay produced, per run, numbered like the recording's. */
  replayed: AnyTraceLine[][];
}

/**
 * Re-runs a recorded session through the real engine machine, with the outside world played back from the trace:
 * the model answers with its recorded outputs (errors and retries included), tools return their recorded results
 * (nothing runs), permission decisions are the recorded ones (the real ask_permission actor asks a stand-in policy
 * and a stand-in person), and a stop that came from outside (an abort, the deadline) is reproduced at the recorded
 * point. The replay's lines are compared with the recording: states, turns, tool calls (name and input; ids are
 * compared by position), decisions, results and the stop. The first difference is the divergence.
 * A session that can't be read as runs (a missing or misplaced line, an unknown state, no build_context) is a
 * divergence too; replay never throws for a bad trace.
 */
export async function replay(session: TraceSession, options: ReplayOptions = {}): Promise<ReplayResult> {
  // Loaded on first use: the main entry re-exports replay, and a run that never replays should not load the replayer.
  const [{ compareRun, divergenceAt }, { replayRun }] = await Promise.all([import("./replay-compare.js"), import("./replay-run.js")]);
  const contextLines = options.contextLines ?? 3;
  const runs = splitRuns(session.lines);
  const result: ReplayResult = { identical: true, sessionId: session.sessionId, runs: runs.length, lines: session.lines.length, replayed: [] };
  if (runs.length === 0) {
    result.identical = false;
    result.divergence = divergenceAt(0, 1, "(no lines)", "(not replayed)", "the session has no lines", []);
    return result;
  }
  const cwd = analyseRun(runs[0], 0).options?.cwd;
  const blobs = sessionBlobs(session);
  const summaries = compactionSummaries(session.lines, cwd, session.sessionId);
  let compactions = 0;
  for (let i = 0; i < runs.length; i++) {
    const recorded = analyseRun(runs[i], i);
    const outcome = await replayRun(recorded, session.sessionId, summaries.slice(compactions), blobs);
    compactions += compactionsIn(runs[i]);
    result.replayed.push(outcome.lines);
    const divergence = compareRun(recorded, outcome, runs.length, contextLines);
    if (divergence) {
      result.identical = false;
      result.divergence = divergence;
      return result;
    }
  }
  return result;
}
