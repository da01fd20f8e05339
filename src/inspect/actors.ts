import type { AnyActorRef, AnyStateMachine, InspectionEvent } from "xstate";
import { guardText } from "./chart.js";
import type { InspectorHub } from "./hub.js";
import type { ActorSnapshot, StatelyInspectionEvent, TakenTransition } from "./protocol.js";
import { toJson } from "./serialize.js";
import { redactValue, secretValues } from "../trace/redact.js";

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
 * The inspect observer for any XState v5 actor system in this process: actors that are state machines get their
 * chart, and their snapshots (after every microstep too, so eventless hops show), events and transitions are recorded.
 */
export function processInspector(hub: InspectorHub): InspectObserver {
  const machines = new Set<string>();
  const { snapshot: snapshotJson, event: eventData } = redacting();
  return asObserver((inspection) => {
    const actorRef = inspection.actorRef as AnyActorRef;
    const sessionId = actorRef.sessionId;
    const time = new Date().toISOString();
    switch (inspection.type) {
      case "@xstate.actor": {
        const logic = (actorRef as { logic?: unknown }).logic;
        const chartId = isStateMachine(logic) ? hub.chartOf(logic) : undefined;
        if (chartId) machines.add(sessionId);
        const configId = isStateMachine(logic) ? logic.id : undefined;
        let snapshot: unknown;
        try {
          snapshot = actorRef.getSnapshot();
        } catch {
          snapshot = undefined; // not initialised yet: its first snapshot event follows
        }
        const parent = (actorRef as { _parent?: AnyActorRef })._parent;
        hub.add({
          kind: "actor",
          time,
          sessionId,
          name: actorRef.id === sessionId && configId ? configId : actorRef.id,
          ...(chartId ? { chartId } : {}),
          ...(parent ? { parentId: parent.sessionId } : {}),
          ...(inspection.rootId ? { rootId: inspection.rootId } : {}),
          origin: "process",
          snapshot: snapshotJson(snapshot),
        });
        return;
      }
      case "@xstate.snapshot":
        if (machines.has(sessionId)) hub.add({ kind: "snapshot", time, sessionId, event: eventData(inspection.event), snapshot: snapshotJson(inspection.snapshot) });
        return;
      case "@xstate.microstep":
        if (machines.has(sessionId)) {
          hub.add({
            kind: "snapshot",
            time,
            sessionId,
            event: eventData(inspection.event),
            snapshot: snapshotJson(inspection.snapshot),
            transitions: takenTransitions(inspection._transitions),
          });
        }
        return;
      case "@xstate.event": {
        if (!machines.has(sessionId)) return;
        const source = inspection.sourceRef?.sessionId;
        hub.add({ kind: "event", time, sessionId, event: eventData(inspection.event), ...(source ? { sourceId: source } : {}) });
        return;
      }
      default:
        return;
    }
  });
}

/**
 * Records the events one `@statelyai/inspect` WebSocket client sends. Its session ids (`x:0`, …) are only unique in
 * its own process, so they are prefixed with the client's number.
 */
export function socketIngest(hub: InspectorHub, client: number): (event: StatelyInspectionEvent) => void {
  const { snapshot: snapshotJson, event: eventData } = redacting();
  const prefix = (id: string | undefined) => (id === undefined || id === "anonymous" ? undefined : `ws${client}/${id}`);
  return (event) => {
    const sessionId = prefix(event.sessionId)!;
    const ms = Number(event.createdAt);
    const time = new Date(Number.isFinite(ms) && ms > 0 ? ms : Date.now()).toISOString();
    switch (event.type) {
      case "@xstate.actor": {
        const name = typeof event.name === "string" && event.name ? event.name : event.sessionId;
        const chartId = typeof event.definition === "string" ? hub.chartOfDefinition(event.definition, name) : undefined;
        const parentId = prefix(event.parentId);
        const rootId = prefix(event.rootId);
        hub.add({
          kind: "actor",
          time,
          sessionId,
          name,
          ...(chartId ? { chartId } : {}),
          ...(parentId ? { parentId } : {}),
          ...(rootId ? { rootId } : {}),
          origin: "socket",
          snapshot: snapshotJson(event.snapshot),
        });
        return;
      }
      case "@xstate.snapshot":
        hub.add({ kind: "snapshot", time, sessionId, event: eventData(event.event), snapshot: snapshotJson(event.snapshot) });
        return;
      case "@xstate.event": {
        const sourceId = prefix(event.sourceId);
        hub.add({ kind: "event", time, sessionId, event: eventData(event.event), ...(sourceId ? { sourceId } : {}) });
        return;
      }
    }
  };
}
