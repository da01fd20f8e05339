import type { AnyActorRef, AnyStateMachine, InspectionEvent } from "xstate";
import { guardText } from "./chart.js";
import type { InspectorHub } from "./hub.js";
import type { ActorSnapshot, StatelyInspectionEvent, TakenTransition } from "./protocol.js";
import { toJson } from "./serialize.js";
import { redactValue, secretValues } from "../record/redact.js";

/** XState's inspect option accepts an observer or a function; this is both. */
export type InspectObserver = ((event: InspectionEvent) => void) & { next(event: InspectionEvent): void };

export function asObserver(fn: (event: InspectionEvent) => void): InspectObserver {
  return Object.assign((event: InspectionEvent) => fn(event), { next: fn });
}

/** Whether an actor's logic is a state machine (only machines have a chart and states to follow). */
export function isStateMachine(logic: unknown): logic is AnyStateMachine {
  return !!logic && typeof logic === "object" && "root" in logic && "config" in logic && typeof (logic as { transition?: unknown }).transition === "function";
}

export function snapshotData(snapshot: unknown): ActorSnapshot {
  if (!snapshot || typeof snapshot !== "object") return {};
  const s = snapshot as Record<string, unknown>;
  const out: ActorSnapshot = {};
  if (typeof s.status === "string") out.status = s.status;
  if (s.value !== undefined) out.value = toJson(s.value);
  if (s.context !== undefined) out.context = toJson(s.context);
  if (s.output !== undefined) out.output = toJson(s.output);
  if (s.error !== undefined) out.error = toJson(s.error);
  return out;
}

/** The transitions a microstep took, by state paths. */
export function takenTransitions(transitions: readonly unknown[]): TakenTransition[] {
  return transitions.map((t) => {
    const def = t as { source?: { path?: string[] }; target?: ReadonlyArray<{ path?: string[] }>; eventType?: string; guard?: unknown };
    return {
      from: (def.source?.path ?? []).join("."),
      to: (def.target ?? []).map((n) => (n.path ?? []).join(".")),
      event: def.eventType ?? "",
      ...(def.guard !== undefined ? { guard: guardText(def.guard) } : {}),
    };
  });
}

function eventJson(event: unknown) {
  return toJson(event, { maxDepth: 6 });
}

/** snapshotData and eventJson, redacted as the trace is: any actor's context may hold a key or a password. */
function redacting() {
  const secrets = secretValues();
  return {
    snapshot: (snapshot: unknown) => redactValue(snapshotData(snapshot), secrets),
    event: (event: unknown) => redactValue(eventJson(event), secrets),
  };
}

/**
 * The inspect observer for any XState v5 actor system in this process. Every actor is recorded (machines with their
 * chart, promise / callback / observable actors and machines without states with their snapshots and events only);
 * machines' snapshots come after every microstep too, so eventless hops show. Inspection never throws into the app:
 * whatever goes wrong while recording becomes a problem line.
 */
export function processInspector(hub: InspectorHub): InspectObserver {
  const { snapshot: snapshotJson, event: eventData } = redacting();
  /** Machines whose microsteps are recorded, with the text of the last snapshot recorded for each. */
  const machines = new Map<string, string>();
  let failures = 0;
  /**
   * Each event sent, numbered, waiting in its target's queue until the target's macrostep on it ends: the steps it
   * caused carry its number, so a page can tell which step answered which event. Matched by identity, first in first
   * out (the same event object may be sent many times: an action's static event).
   */
  const queues = new Map<string, Array<{ event: object; id: number }>>();
  let eventCount = 0;
  const idOf = (sessionId: string, event: unknown, done: boolean) => {
    const queue = queues.get(sessionId);
    if (!queue || !event || typeof event !== "object") return undefined;
    const at = queue.findIndex((q) => q.event === event);
    if (at < 0) return undefined;
    const { id } = queue[at]!;
    if (done) {
      queue.splice(at, 1);
      if (queue.length === 0) queues.delete(sessionId);
    }
    return id;
  };
  const record = (inspection: InspectionEvent) => {
    const actorRef = inspection.actorRef as AnyActorRef;
    const sessionId = actorRef.sessionId;
    const time = new Date().toISOString();
    switch (inspection.type) {
      case "@xstate.actor": {
        const logic = (actorRef as { logic?: unknown }).logic;
        const machine = isStateMachine(logic) ? logic : undefined;
        const configId = machine ? safely(() => machine.id) : undefined;
        const name = actorRef.id === sessionId && configId ? configId : actorRef.id;
        let chartId: string | undefined;
        if (machine) {
          try {
            chartId = hub.chartOf(machine);
            machines.set(sessionId, "");
          } catch (error) {
            hub.problem(`the statechart of actor ${name} (${sessionId}) could not be drawn: ${(error as Error)?.message ?? String(error)}; its snapshots and events are still shown`);
          }
        }
        let snapshot: unknown;
        try {
          snapshot = actorRef.getSnapshot();
        } catch {
          snapshot = undefined; // not initialised yet: its first snapshot event follows
        }
        const parent = (actorRef as { _parent?: AnyActorRef })._parent;
        // XState reports an actor before it sets its systemId: read it from the options it was created with.
        const systemId = (actorRef as { options?: { systemId?: unknown } }).options?.systemId ?? (actorRef as { systemId?: unknown }).systemId;
        hub.add({
          kind: "actor",
          time,
          sessionId,
          name,
          ...(typeof systemId === "string" ? { systemId } : {}),
          ...(chartId ? { chartId } : {}),
          ...(parent ? { parentId: parent.sessionId } : {}),
          ...(inspection.rootId ? { rootId: inspection.rootId } : {}),
          origin: "process",
          app: "this process",
          snapshot: snapshotJson(snapshot),
        });
        return;
      }
      case "@xstate.snapshot": {
        const snapshot = snapshotJson(inspection.snapshot);
        const eventId = idOf(sessionId, inspection.event, true);
        if ((snapshot.status ?? "active") !== "active") queues.delete(sessionId);
        const last = machines.get(sessionId);
        if (last !== undefined) {
          // A machine's macrostep snapshot repeats its last microstep's when one was taken: recorded once.
          const text = JSON.stringify(snapshot);
          if (text === last) return;
          machines.set(sessionId, text);
        }
        hub.add({ kind: "snapshot", time, sessionId, event: eventData(inspection.event), snapshot, ...(eventId ? { eventId } : {}) });
        return;
      }
      case "@xstate.microstep": {
        if (!machines.has(sessionId)) return;
        const snapshot = snapshotJson(inspection.snapshot);
        const text = JSON.stringify(snapshot);
        // A microstep that took no transition and changed nothing (an event nothing handles, such as a region's
        // `xstate.done.state.*` with no onDone) is no step.
        if (inspection._transitions.length === 0 && text === machines.get(sessionId)) return;
        machines.set(sessionId, text);
        const eventId = idOf(sessionId, inspection.event, false);
        hub.add({ kind: "snapshot", time, sessionId, event: eventData(inspection.event), snapshot, transitions: takenTransitions(inspection._transitions), ...(eventId ? { eventId } : {}) });
        return;
      }
      case "@xstate.event": {
        const source = inspection.sourceRef?.sessionId;
        const event = inspection.event as unknown;
        let eventId: number | undefined;
        if (event && typeof event === "object") {
          eventId = ++eventCount;
          const queue = queues.get(sessionId) ?? [];
          // Bounded: an actor that never processes what it is sent (stopped, or not a machine) must not grow it.
          if (queue.length >= 1000) queue.shift();
          queue.push({ event, id: eventId });
          queues.set(sessionId, queue);
        }
        hub.add({ kind: "event", time, sessionId, event: eventData(inspection.event), ...(source ? { sourceId: source } : {}), ...(eventId ? { eventId } : {}) });
        return;
      }
      default:
        return;
    }
  };
  return asObserver((inspection) => {
    try {
      record(inspection);
    } catch (error) {
      // Said a few times, then no more: an app sending thousands of events must not fill the problems list.
      if (++failures <= 5) {
        hub.problem(`the inspector could not record an ${String(inspection?.type)} event: ${(error as Error)?.message ?? String(error)}${failures === 5 ? " (later failures are not reported)" : ""}`);
      }
    }
  });
}

function safely<T>(get: () => T): T | undefined {
  try {
    return get();
  } catch {
    return undefined;
  }
}

/**
 * Records the events one `@statelyai/inspect` WebSocket client sends. Its session ids (`x:0`, …) are only unique in
 * its own process, so they are prefixed with the client's number; `app` names the client in the picker. `end()`
 * (the connection closed) marks every actor it reported that had not ended as ended.
 */
export function socketIngest(hub: InspectorHub, client: number, app = `client ${client}`): { ingest(event: StatelyInspectionEvent): void; end(): void } {
  const { snapshot: snapshotJson, event: eventData } = redacting();
  const prefix = (id: string | undefined) => (id === undefined || id === "anonymous" ? undefined : `ws${client}/${id}`);
  /** Actors of this client not ended yet. */
  const live = new Set<string>();
  const ingest = (event: StatelyInspectionEvent) => {
    const sessionId = prefix(event.sessionId) ?? `ws${client}/anonymous`;
    const ms = Number(event.createdAt);
    const time = new Date(Number.isFinite(ms) && ms > 0 ? ms : Date.now()).toISOString();
    const track = (status: string | undefined) => {
      if (status === "done" || status === "error" || status === "stopped") live.delete(sessionId);
      else live.add(sessionId);
    };
    switch (event.type) {
      case "@xstate.actor": {
        const name = typeof event.name === "string" && event.name ? event.name : event.sessionId;
        const chartId = typeof event.definition === "string" ? hub.chartOfDefinition(event.definition, name) : undefined;
        const parentId = prefix(event.parentId);
        const rootId = prefix(event.rootId);
        const snapshot = snapshotJson(event.snapshot);
        track(snapshot.status);
        hub.add({
          kind: "actor",
          time,
          sessionId,
          name,
          ...(chartId ? { chartId } : {}),
          ...(parentId ? { parentId } : {}),
          ...(rootId ? { rootId } : {}),
          origin: "socket",
          app,
          snapshot,
        });
        return;
      }
      case "@xstate.snapshot": {
        const snapshot = snapshotJson(event.snapshot);
        if (live.has(sessionId)) track(snapshot.status);
        hub.add({ kind: "snapshot", time, sessionId, event: eventData(event.event), snapshot });
        return;
      }
      case "@xstate.event": {
        const sourceId = prefix(event.sourceId);
        hub.add({ kind: "event", time, sessionId, event: eventData(event.event), ...(sourceId ? { sourceId } : {}) });
        return;
      }
    }
  };
  return {
    ingest(event) {
      try {
        ingest(event);
      } catch (error) {
        hub.problem(`WebSocket client ${client} sent an ${String(event?.type)} event the inspector could not record: ${(error as Error)?.message ?? String(error)}`);
      }
    },
    end() {
      const time = new Date().toISOString();
      for (const sessionId of live) hub.add({ kind: "actor_end", time, sessionId, reason: `the connection of ${app} closed` });
      live.clear();
    },
  };
}
