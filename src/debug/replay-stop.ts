import { detailsOf, isState, type RecordedBatch, type RecordedRun } from "./recording.js";

/** How a stop that came from outside the engine is reproduced. */
export interface StopPlan {
  reason: "user_abort" | "timeout";
  /**
   * `before-start`: the caller's signal was aborted before the run began. `guard`: a guard of a transient state saw
   * the abort or the deadline (its flag is set when the replay reaches `atSeq`). `event`: the abort or the deadline
   * arrived while the engine waited in the state at `atSeq` (sent when the replay writes that line).
   */
  style: "before-start" | "guard" | "event";
  atSeq: number;
  /** execute_tool: the calls that had finished when the stop came; the stop waits for as many. */
  waitFinished?: number;
  /** The batch the stop came in (its unfinished calls wait instead of answering). */
  batch?: RecordedBatch;
}

/** How the recorded run's outside stop is reproduced, if it had one. */
export function stopPlan(run: RecordedRun): StopPlan | undefined {
  const done = run.done;
  if (!done) return undefined;
  const reason = detailsOf(done).reason;
  if (reason !== "user_abort" && reason !== "timeout") return undefined;
  const at = run.lines.indexOf(done);
  const before = run.lines[at - 1];
  if (!before) return undefined;
  const lastState = [...run.lines.slice(0, at)].reverse().find((l) => l.kind === "state");
  if (isState(lastState, "append_tool_result")) return { reason, style: "guard", atSeq: lastState.seq - 1 };
  if (reason === "user_abort" && before.seq === 0) return { reason, style: "before-start", atSeq: 0 };
  const plan: StopPlan = { reason, style: "event", atSeq: before.seq };
  const batch = run.batches[run.batches.length - 1];
  if (batch && batch.seq < before.seq) plan.batch = batch;
  if (isState(lastState, "execute_tool") && lastState === before && batch) {
    plan.waitFinished = batch.calls.filter((c) => c.ran && c.result?.durationMs !== undefined).length;
  }
  return plan;
}
