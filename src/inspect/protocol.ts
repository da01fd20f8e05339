import type { MachineChart } from "./chart.js";
import type { Json } from "./serialize.js";

/*
 * Two protocols meet in the inspector's WebSocket:
 * - `@statelyai/inspect`'s: what its `createWebSocketInspector({ url })` sends for any XState v5 actor (the three
 *   event shapes below, as of @statelyai/inspect 0.7; recognised by their `@xstate.` type and `_version`);
 * - the inspector's own with its pages: the server keeps the records of what it saw in order (up to `maxBytes`) and
 *   sends each page the list on connect ("the run so far"), then every new record; pages send hello and permission
 *   answers, the answers with the page token (any client may send inspection events; only the page may answer).
 */

/** Fields every `@statelyai/inspect` event carries. */
export interface StatelyBaseEvent {
  /** The actor's session id (`x:0`, …): unique per actor in the sending process. */
  sessionId: string;
  rootId?: string;
  /** Milliseconds since the epoch, as a decimal string. */
  createdAt: string;
  id: string | null;
  _version: string;
}

/** An actor was created: its machine's definition (the config as JSON text) and first snapshot. */
export interface StatelyActorEvent extends StatelyBaseEvent {
  type: "@xstate.actor";
  name: string;
  definition?: string;
  parentId?: string;
  snapshot?: { status?: string; value?: unknown; context?: unknown; output?: unknown };
}

/** An actor's snapshot after it processed `event`. */
export interface StatelySnapshotEvent extends StatelyBaseEvent {
  type: "@xstate.snapshot";
  event: { type: string; [key: string]: unknown };
  snapshot: { status?: string; value?: unknown; context?: unknown; output?: unknown; error?: unknown };
}

/** An event was sent to an actor. */
export interface StatelyEventEvent extends StatelyBaseEvent {
  type: "@xstate.event";
  event: { type: string; [key: string]: unknown };
  sourceId?: string;
}

export type StatelyInspectionEvent = StatelyActorEvent | StatelySnapshotEvent | StatelyEventEvent;

/** Whether a message received on the WebSocket is an `@statelyai/inspect` event. */
export function isStatelyInspectionEvent(message: unknown): message is StatelyInspectionEvent {
  if (!message || typeof message !== "object") return false;
  const m = message as { type?: unknown; sessionId?: unknown };
  return (m.type === "@xstate.actor" || m.type === "@xstate.snapshot" || m.type === "@xstate.event") && typeof m.sessionId === "string";
}

/** A transition a microstep took, by state paths (dotted keys from the root; `""` is the machine itself). */
export interface TakenTransition {
  from: string;
  to: string[];
  event: string;
  guard?: string;
}

/** What the inspector saw, in order. Every page gets all of them. */
export type InspectorRecord =
  /** A machine's chart, sent once before the first record that names it. */
  | { kind: "chart"; chartId: string; chart: MachineChart }
  /** An XState actor was created (in this process or in a client of the WebSocket). */
  | {
      kind: "actor";
      time: string;
      sessionId: string;
      name: string;
      /** Absent for actors that are not state machines (promises, callbacks…): they have no chart. */
      chartId?: string;
      parentId?: string;
      rootId?: string;
      /** Where it came from: `process` (this process's `inspect`) or `socket` (a WebSocket client). */
      origin: "process" | "socket";
      /** Which app it belongs to, for the picker: `this process`, `client N`, or the name a client gave (`?app=NAME`). */
      app?: string;
      /** Its system id (`createActor(logic, { systemId })`, `spawn(logic, { systemId })`), when it has one. */
      systemId?: string;
      snapshot: ActorSnapshot;
    }
  /** An actor's snapshot: after a macrostep, or after a microstep (then with the transitions taken). */
  | {
      kind: "snapshot";
      time: string;
      sessionId: string;
      event: Json;
      snapshot: ActorSnapshot;
      transitions?: TakenTransition[];
      /** The `eventId` of the event record this step handled (in-process actors only). */
      eventId?: number;
    }
  /** An actor will report no more: its WebSocket client's connection closed before it ended. */
  | { kind: "actor_end"; time: string; sessionId: string; reason: string }
  /** An event sent to an actor. */
  | {
      kind: "event";
      time: string;
      sessionId: string;
      event: Json;
      sourceId?: string;
      /** A number for the event, in-process: the steps it caused carry it too (`snapshot.eventId`). */
      eventId?: number;
    }
  /** An agent run started being inspected. */
  | { kind: "run"; time: string; sessionId: string; chartId: string; input?: string; parentSession?: string }
  /**
   * A state the run entered: the line its trace gets for it, the event that led there, and the run's context as it
   * stood then (its conversation is sent apart, in `messages` records; `messageCount` says how much of it existed).
   */
  | { kind: "enter"; sessionId: string; line: Json; event: string; context: Json; messageCount: number }
  /** Messages appended to the run's conversation since the last such record, starting at index `start`. */
  | { kind: "messages"; sessionId: string; start: number; messages: Json[] }
  /** An event of the run (text, tool calls and results, permission requests, retries, turn end). */
  | { kind: "agent"; time: string; sessionId: string; event: Json }
  /**
   * A line of a trace recorded elsewhere, arriving as it is written (`addTraceLines`: `statecraft inspect --database`
   * feeds the lines workers write to PostgreSQL). Its session is shown as a run, ended at its `done` line.
   */
  | { kind: "trace_line"; sessionId: string; line: Json }
  /** The run is over (its generator returned). */
  | { kind: "run_end"; time: string; sessionId: string }
  /**
   * A permission request waiting for an answer from a page. `whole` says whether `call` is all of the call (it is
   * not cut like other records' values, up to a limit): when it is not, `unshown` says why and the page may only deny.
   */
  | { kind: "permission"; time: string; id: string; sessionId: string; call: Json; reason: string; whole: boolean; unshown?: string }
  /** The answer to a permission request; `by` says who gave it. */
  | { kind: "permission_answer"; time: string; id: string; answer: "allow" | "deny"; by: PermissionAnsweredBy }
  /** Something the inspector could not use, said rather than dropped (a client's unreadable message, …). */
  | { kind: "problem"; time: string; message: string };

/** Who answered a permission request: a page, the caller (another prompt answered first), or the inspector closing or losing its pages. */
export type PermissionAnsweredBy = "page" | "elsewhere" | "closed" | "no_page";

export interface ActorSnapshot {
  status?: string;
  value?: Json;
  context?: Json;
  output?: Json;
  error?: Json;
}

/** Server → page. */
export type ServerMessage =
  | {
      type: "hello";
      /** The chart of trace files and agent runs (the engine's, unless another machine was given). */
      defaultChartId: string;
      /** The name of the trace file given on the command line, served at `/trace`. */
      traceFile?: string;
      /** This inspector, among those that may serve the port over time (not a secret). */
      instance: string;
      /** How many records follow at once: the page shows them as one update. */
      replay: number;
      /** The origins of browser apps allowed to connect (`allowOrigins`). */
      allowOrigins: string[];
    }
  /** The first after hello is the replay (`replay` records); later ones are records added in one turn, in order. */
  | { type: "records"; records: InspectorRecord[] }
  | { type: "record"; record: InspectorRecord };

/**
 * Page → server. `token` is the server's page token, which only its page has (in the HTML it serves, as
 * `<meta name="statecraft-token">`): an answer without it is refused, whoever sends it.
 */
export type PageMessage =
  | { type: "@statecraft.hello" }
  | { type: "@statecraft.answer"; id: string; answer: "allow" | "deny"; token: string };
