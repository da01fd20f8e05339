import { createActor, type Actor } from "xstate";
import type { AgentEvent, RunResult } from "./events.js";
import { effectsActor } from "./actors/effects.js";
import type { EngineContext } from "./machine/context.js";
import { engineMachine } from "./machine/engine.js";
import { observeEngine, type InternalObserver } from "./observers/observe.js";
import { runResultOf, runSummary, turnEndOf, type CompletedRunSummary, type RunSummary } from "./observers/run-summary.js";
import type { EventBridge } from "./event-bridge.js";
import type { RunStore } from "./durable/run-store.js";
import { storedRunOf } from "./durable/stored-run.js";
import { storedSettingsOf, type RunSettings } from "./run-settings.js";
import type { RunObservers } from "./run-observers.js";
import type { TraceContext } from "./record/run-record.js";

export type EngineActor = Actor<typeof engineMachine>;
type Suspended = Extract<AgentEvent, { type: "suspended" }>;

/** What the driver needs besides the prepared run: its observers, its bridge and how it ends. */
export interface DriverParts {
  observers: RunObservers;
  bridge: EventBridge;
  /** Where a suspended run is kept. */
  store: RunStore;
  secrets: readonly string[];
  signal?: AbortSignal;
  /** Before the first event: the actor that will run. */
  started?(actor: EngineActor): void;
  /** The run is over (its last event known): the final context, and the suspension if it stopped at questions. Called again (to be ignored) as the driver stops. */
  settle(context: EngineContext, suspended?: Suspended): void;
  /** The run's result, known before its last event is yielded. */
  finished(result: RunResult): void;
  /** The caller asks for the run to stop: how (set once the actor exists). */
  onAbort(abort: () => void): void;
  /** The caller asked to stop before the run started. */
  aborted(): boolean;
}

/**
 * Drives one run: the engine actor, its events through the bridge to the caller, and its one summary, from which
 * `turn_end`, the `RunResult` and every observer's `finished` come. It stops the actor however the run ends; the
 * writers, the lock and the inspector are closed by its caller.
 */
export async function* driveRun(prepared: RunSettings, parts: DriverParts): AsyncGenerator<AgentEvent, RunResult, undefined> {
  const { bridge } = parts;
  const hosted = prepared.hosted;
  const machine = hosted ? engineMachine.provide({ ...(hosted.time?.machine ?? {}), actors: { effects: effectsActor(hosted.effects) } }) : engineMachine;
  // The run ends when done is entered: the summary's duration is the done line's.
  let doneAt: number | undefined;
  const endTime: InternalObserver = { state: (entered) => void (entered.state === "done" && (doneAt = entered.time)) };
  const actor = createActor(machine, {
    input: prepared.input,
    inspect: observeEngine([endTime, ...parts.observers.all]),
    ...(hosted?.time ? { clock: hosted.time.clock } : {}),
  });
  parts.started?.(actor);
  const ended = { finished: false, crash: undefined as unknown };
  actor.subscribe({
    complete: () => {
      ended.finished = true;
      bridge.poke();
    },
    error: (error) => {
      ended.crash = error;
      ended.finished = true;
      bridge.poke();
    },
  });
  const abort = () => {
    if (actor.getSnapshot().status === "active") actor.send({ type: "ABORT" });
  };
  parts.onAbort(abort);
  parts.signal?.addEventListener("abort", abort, { once: true });
  try {
    actor.start();
    if (parts.aborted()) abort();
    for (;;) {
      for (let event = bridge.next(); event !== undefined; event = bridge.next()) {
        if (event.type === "suspended") return yield* suspend(actor, event, prepared, parts);
        yield event;
      }
      bridge.drained();
      if (ended.finished) break;
      await bridge.waitForMore();
    }
    const context = actor.getSnapshot().context;
    // A resumed run that ran to its end is no longer resumable: its stored state goes.
    if (prepared.resumed && ended.crash === undefined) await prepared.resumed.store.delete(prepared.input.sessionId);
    const summary = runSummary(context, { time: doneAt ?? Date.now(), crash: ended.crash, secrets: parts.secrets }) as CompletedRunSummary;
    const turnEnd = turnEndOf(summary);
    // The session is free again before the caller sees the end (it may start the next run right away).
    parts.settle(context);
    announce(parts.observers.all, summary);
    const result = runResultOf(summary, context);
    // Known before the last event is yielded: `run.result` settles even when the caller breaks out at turn_end.
    parts.finished(result);
    yield turnEnd;
    return result;
  } finally {
    bridge.catchUp();
    // A consumer that stops early (break, return) ends the run: abort it so done is recorded, then stop it.
    if (actor.getSnapshot().status === "active") abort();
    actor.stop();
    parts.settle(actor.getSnapshot().context);
    parts.signal?.removeEventListener("abort", abort);
  }
}

/**
 * The machine stopped in ask_permission at questions it may not answer now: the run is stored, the actor stopped
 * (nothing is held open, the process may exit), and `suspended` is the last event instead of `turn_end`.
 */
async function* suspend(actor: EngineActor, event: Suspended, prepared: RunSettings, parts: DriverParts): AsyncGenerator<AgentEvent, RunResult, undefined> {
  const context = actor.getSnapshot().context;
  actor.stop();
  parts.observers.close();
  const stored = storedRunOf(context, storedSettingsOf(prepared), parts.observers.trace?.nextSeq() ?? 0, Date.now());
  const traceContext = traceContextOf(parts.observers.all, context.run.sessionId);
  await parts.store.save(traceContext ? { ...stored, traceContext } : stored);
  parts.settle(context, event);
  const summary = runSummary(context, { time: Date.now(), suspended: { runId: event.runId, pending: event.pending } });
  announce(parts.observers.all, summary);
  const result = runResultOf(summary, context);
  parts.finished(result);
  yield event;
  return result;
}

/** The trace context the first observer that keeps one leaves for the run's resumption. */
function traceContextOf(observers: readonly InternalObserver[], sessionId: string): TraceContext | undefined {
  for (const observer of observers) {
    const found = observer.traceContext?.(sessionId);
    if (found) return found;
  }
  return undefined;
}

/** Every observer hears the run's summary once. */
function announce(observers: readonly InternalObserver[], summary: RunSummary): void {
  for (const observer of observers) observer.finished?.(summary);
}
