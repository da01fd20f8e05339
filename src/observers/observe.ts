import type { ActorRefLike, InspectionEvent } from "xstate";
import type { EngineContext } from "../machine/context.js";
import { engineStateOf, type EngineEmitted } from "../machine/engine.js";
import type { EmittedEvent } from "../events.js";
import type { EngineStateName } from "../machine/states.js";
import type { RunSummary } from "./run-summary.js";
import type { ObservedRun, TraceContext } from "./observed-run.js";
import type { SubagentStart } from "../tools/define-tool.js";

/** A state the engine entered, with the context as it stood on entry: a snapshot to read, never to change. */
export interface StateEntered<Context = ObservedRun> {
  state: EngineStateName;
  /** The state it came from (undefined for the first). */
  from: EngineStateName | undefined;
  /**
   * The context as it stood on entry: a value, which the engine never changes afterwards (its actions replace what
   * they change), so an observer may keep it and read it later.
   */
  context: Context;
  /** The event that led here (an actor's done event carries its output). */
  event: { type: string };
  /** Wall-clock time of entry. */
  time: number;
}

/**
 * What watches a run (docs/architecture.md, "Observers"): the trace, transcript, audit and checkpoint writers, the
 * inspector, the caller's own (`QueryOptions.observers`). Each method is optional; all are called synchronously, in
 * the run's order, and must not throw (one that throws ends the run `model_error`, `ENGINE_FAILED`).
 */
export interface EngineObserver<Context = ObservedRun> {
  /** A state was entered (every one, transient hops included, in order). */
  state?(entered: StateEntered<Context>): void;
  /**
   * The machine emitted an event for the caller; `context` is the context as the transition that emitted it left it
   * (a transition that stays in its state, such as a tool call finishing in execute_tool, enters no state).
   */
  emitted?(event: EmittedEvent, context: Context): void;
  /** The run ended (or stopped at questions to be resumed): called once, with the summary `turn_end` and the result carry. */
  finished?(summary: RunSummary): void;
  /**
   * A subagent run (agentTool) starts inside this run's tool call `start.toolCallId`: the observer to watch it with,
   * if any (it hears the child run as this one hears its own). Called while the tool call runs.
   */
  subagent?(start: SubagentStart): EngineObserver | undefined;
  /**
   * Run `sessionId` stops at questions: the W3C trace context that stands for it (statecraft/otel: its span), stored
   * with the suspended run and given to the run that resumes it as `run.resumedFrom`. Called once, before it is stored.
   */
  traceContext?(sessionId: string): TraceContext | undefined;
}

export type { SubagentStart } from "../tools/define-tool.js";

/**
 * Turns XState's inspection stream of one engine actor into an ordered sequence of "state entered" and "event
 * emitted" notifications. `actor.subscribe` skips transient states and `emit` is deferred to the end of a
 * macrostep, so neither alone gives the real order; the inspection stream does: each microstep's emitted events
 * are held until the microstep reports the state it led into, then delivered after it.
 *
 * Give the function it returns to `createActor` as `inspect` as it is, not called from another inspector: it then takes
 * the events straight from the actor's system (`deliverDirectly`), and a function that wrapped it would stop hearing
 * them after the first. Inspectors of one's own go beside it, through `actor.system.inspect`.
 */
export function observeEngine(observers: readonly EngineObserver<EngineContext>[]): (event: InspectionEvent) => void {
  // About forty inspection events per tool step, most of them about child actors or of no interest: the dispatch
  // does as little as it can per event, and each notification goes only to the observers that take it.
  const stateObservers = observers.filter((o) => o.state !== undefined);
  const emitObservers = observers.filter((o) => o.emitted !== undefined);
  let root: ActorRefLike | undefined;
  let current: EngineStateName | undefined;
  let pending: EngineEmitted[] = [];

  const flush = (context: EngineContext) => {
    const events = pending;
    pending = [];
    for (let i = 0; i < events.length; i++) for (let j = 0; j < emitObservers.length; j++) emitObservers[j].emitted!(events[i], context);
  };

  const enter = (value: unknown, context: EngineContext, event: { type: string }) => {
    const state = (typeof value === "string" ? value : engineStateOf(value)) as EngineStateName;
    if (state === current) return;
    // Transitions taken while the actor starts are not reported as microsteps: an `always` that leaves the initial
    // state at once (a run aborted before it began) would hide it.
    if (current === undefined && state !== "build_context") enter("build_context", context, { type: "xstate.init" });
    const entered: StateEntered<EngineContext> = { state, from: current, context, event, time: Date.now() };
    current = state;
    for (let i = 0; i < stateObservers.length; i++) stateObservers[i].state!(entered);
  };

  const dispatch = (inspection: InspectionEvent) => {
    // The first event names the root actor; child actors (model, tools) are not the engine's states.
    if (root === undefined) {
      root = inspection.actorRef;
      if (inspection.type === "@xstate.actor") deliverDirectly(root, dispatch);
    } else if (inspection.actorRef !== root) return;
    switch (inspection.type) {
      case "@xstate.action": {
        const action = inspection.action as { type: string; params?: { event?: EngineEmitted } };
        if (action.type === "xstate.emit" && action.params?.event) pending.push(action.params.event);
        return;
      }
      case "@xstate.microstep": {
        const snapshot = inspection.snapshot as unknown as { value: unknown; context: EngineContext };
        enter(snapshot.value, snapshot.context, inspection.event);
        if (pending.length > 0) flush(snapshot.context);
        return;
      }
      case "@xstate.snapshot": {
        const snapshot = inspection.snapshot as unknown as { value?: unknown; context?: EngineContext };
        if (snapshot.context && snapshot.value !== undefined) enter(snapshot.value, snapshot.context, inspection.event);
        if (pending.length > 0 && snapshot.context) flush(snapshot.context);
        return;
      }
      default:
        return;
    }
  };
  return dispatch;
}

/** The internals of XState's actor system (5.x) that `deliverDirectly` uses; absent or different, it does nothing. */
interface InspectedSystem {
  _sendInspectionEvent?: unknown;
  inspect?: unknown;
}

/**
 * XState hands every inspection event to its system's `_sendInspectionEvent`, which copies it (`{ ...event, rootId }`)
 * for its inspectors: about thirty copies a step, the largest self-time line of a step's profile (bench/notes.md, "A
 * faster step"). When `observeEngine` is an actor's only inspector (given as `createActor`'s `inspect`, it hears the
 * root actor's `@xstate.actor` event first), the system's delivery is replaced by `dispatch` itself: the same events,
 * in the same order, not copied (`rootId` is the one field they lack, which `observeEngine` does not read). Every event
 * still reaches `dispatch` exactly once: through the replacement, or through the inspector XState keeps registered if
 * some code of XState's calls its own delivery without the system's property. Another inspector added later
 * (`actor.system.inspect`) puts XState's delivery back first, so it hears everything as usual. An XState whose system
 * lacks these functions is left alone.
 */
function deliverDirectly(root: ActorRefLike, dispatch: (inspection: InspectionEvent) => void): void {
  const system = (root as { system?: InspectedSystem }).system;
  if (!system) return;
  const original = system._sendInspectionEvent;
  const register = system.inspect;
  if (typeof original !== "function" || typeof register !== "function") return;
  system._sendInspectionEvent = dispatch;
  system.inspect = (...observer: unknown[]) => {
    system._sendInspectionEvent = original;
    system.inspect = register;
    return (register as (...args: unknown[]) => unknown).apply(system, observer);
  };
}

/**
 * The engine's own observers (trace, transcript, audit, checkpoint, inspector) read the whole context; a caller's
 * read the public view of it, which the context must always satisfy (checked here, at compile time).
 */
export type InternalObserver = EngineObserver<EngineContext>;
export const contextIsObservable = (context: EngineContext): ObservedRun => context;
