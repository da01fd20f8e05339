import type { Actor } from "xstate";
import type { engineMachine } from "../machine/engine.js";
import type { AnyTraceLine } from "../record/format.js";
import { detailsOf, isState, type RecordedBatch, type RecordedRun } from "./recording.js";
import type { ReplayRecorder } from "./replay-recorder.js";

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

/** The deadline timer's delay in a replay: a marker the replay's clock recognises (it is never waited for). */
export const DEADLINE_MARKER = 2_000_000_017;

/**
 * Reproduces the recorded run's stop from outside (the caller's abort, the deadline) where it came, and ends a replay
 * that waits where the recording has no answer.
 */
export class ReplayStops {
  readonly plan: StopPlan | undefined;
  /** The replayed run's `signal`. */
  readonly controller = new AbortController();
  /** Read by the `timedOut` guard. */
  expired = false;
  /** Set once the engine has ended. */
  finished = false;
  private actor?: Actor<typeof engineMachine>;
  private deadline?: { id: object; fire: () => void };
  private deadlinePending = false;
  private stopped = false;
  private reached = false;

  /**
   * The replay's clock: the deadline timer (`DEADLINE_MARKER`) is held, never waited for, and fires when the
   * recorded run timed out; every other timer is real.
   */
  readonly clock = {
    setTimeout: (fn: (...args: unknown[]) => void, ms: number): unknown => {
      if (ms !== DEADLINE_MARKER) return setTimeout(fn, ms);
      const id = {};
      this.deadline = { id, fire: fn };
      if (this.deadlinePending) queueMicrotask(() => this.fireDeadline());
      return id;
    },
    clearTimeout: (id: unknown) => {
      if (this.deadline?.id === id) this.deadline = undefined;
      else clearTimeout(id as ReturnType<typeof setTimeout>);
    },
  };

  constructor(
    recording: RecordedRun,
    private readonly recorder: ReplayRecorder,
    private readonly notes: string[],
  ) {
    this.plan = stopPlan(recording);
  }

  /** Before the actor is created: the actor takes its first steps (and reads the signal) as it is created. */
  beforeStart(): void {
    if (this.plan?.style === "before-start") this.stop();
  }

  attach(actor: Actor<typeof engineMachine>): void {
    this.actor = actor;
  }

  /** After each replayed line: the stop comes at the line the recorded one came after. */
  afterLine(line: AnyTraceLine): void {
    const plan = this.plan;
    if (!plan || this.stopped || line.seq !== plan.atSeq) return;
    this.reached = true;
    if (plan.style === "guard") {
      // The guard of the next (transient) state reads it: set, don't send.
      this.stopped = true;
      if (plan.reason === "user_abort") this.controller.abort();
      else this.expired = true;
      return;
    }
    this.checkStop();
  }

  /** Sends the stop once its line is reached and (in execute_tool) as many calls finished as had in the recording. */
  checkStop(): void {
    const plan = this.plan;
    if (!plan || this.stopped || plan.style !== "event" || !this.reached) return;
    if (plan.waitFinished !== undefined && this.recorder.finishedInBatch < plan.waitFinished) return;
    this.stop();
  }

  /**
   * Waits where the recorded run was stopped from outside, until the replay stops it too. Should the stop not come
   * (the replay went elsewhere), the run is stopped once everything else has settled, so a replay always ends.
   */
  hang(signal?: AbortSignal): Promise<never> {
    setImmediate(() => {
      if (this.stopped || this.finished) return;
      this.notes.push("the replay waited where the recording has no answer; it was stopped there");
      if (this.plan && this.plan.style !== "before-start") this.stop();
      else {
        this.stopped = true;
        this.actor?.send({ type: "ABORT" });
      }
    });
    return new Promise<never>((_resolve, reject) => {
      if (signal?.aborted) reject(signal.reason);
      signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
  }

  private stop(): void {
    this.stopped = true;
    const reason = this.plan?.reason ?? "user_abort";
    if (this.plan?.style === "before-start") {
      this.controller.abort();
      return;
    }
    if (reason === "timeout") this.fireDeadline();
    else this.actor?.send({ type: "ABORT" });
  }

  private fireDeadline(): void {
    const deadline = this.deadline;
    if (!deadline) {
      this.deadlinePending = true;
      return;
    }
    this.deadline = undefined;
    this.deadlinePending = false;
    deadline.fire();
  }
}
