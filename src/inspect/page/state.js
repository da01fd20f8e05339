// What the page knows (sessions, charts, events, problems, permission requests), what is selected, and the
// connection's state. Records from the server are applied to it in order (records.js); trace files add sessions of
// their own (traces.js); the rest of the page draws from it.

import { takenEdges } from "./chart-model.js";
import { scheduleRender } from "./frame.js";

/** Everything the page knows. Records from the server are applied in order; trace files add sessions of their own. */
export const model = {
  /** Every record gets the next number as it is applied: entries and events are ordered against each other by it. */
  recordOrder: 0,
  charts: new Map(),
  defaultChartId: undefined,
  sessions: new Map(),
  permissions: new Map(),
  problems: [],
  traceFileName: undefined,
  traceLoaded: false,
  selectedKey: undefined,
  userPicked: false,
  selectedIndex: -1,
  follow: true,
  /** Events sent to actors, in order: { order, time, target, source, type, event } (the sequence view). */
  events: [],
  /** The order of the event selected in the sequence view. */
  selectedEvent: undefined,
};

/** The connection to the server (connection.js) and the answer this page is waiting to see settled. */
export const live = {
  socket: undefined,
  connected: false,
  /** The request this page has answered and not yet seen settled: its buttons stay off meanwhile. */
  answering: undefined,
  /** The inspector this page was served by, and whether the one connected now is another (then the token is stale). */
  serverInstance: undefined,
  staleToken: false,
};
// The server puts its page token in the HTML; answers to permission requests carry it (other clients have none).
export const PAGE_TOKEN = document.querySelector('meta[name="statecraft-token"]')?.getAttribute("content") ?? "";

/** What was drawn last, so that a frame redraws only what changed. */
export const rendered = { chartId: undefined, chartToken: 0, timelineKey: undefined, paintedKey: undefined, problems: 0, sessionsVersion: "" };

// ---------------------------------------------------------------- sessions

export function newSession(key, kind, id) {
  return {
    key,
    kind, // "run" | "trace" | "actor"
    id,
    chartId: undefined,
    input: undefined,
    name: undefined,
    origin: undefined,
    parentId: undefined,
    parentSession: undefined,
    file: undefined,
    ended: false,
    created: Date.now(),
    /** One per transition, in order: { seq, time, names, turn, details, context, messageCount, event, taken, edges } */
    entries: [],
    /** Things that happened during a transition: { at, time, kind, event | line } */
    notes: [],
    /** The run's conversation (runs only). */
    messages: [],
    /** Trace lines that are not state lines, kept for the timeline. */
    version: 0,
  };
}

export function sessionFor(key, kind, id) {
  let session = model.sessions.get(key);
  if (!session) {
    session = newSession(key, kind, id);
    model.sessions.set(key, session);
  }
  return session;
}

/** The chart a session is drawn on: an actor's own (none for actors that are not machines with states), else the default. */
export function viewOf(session) {
  if (session.kind === "actor") return session.chartId ? model.charts.get(session.chartId) : undefined;
  return model.charts.get(session.chartId ?? model.defaultChartId);
}

/** Appends a transition and works out which arrows of the chart it took. */
export function addEntry(session, entry) {
  const view = viewOf(session);
  const prev = session.entries[session.entries.length - 1];
  entry.index = session.entries.length;
  entry.order = model.recordOrder;
  entry.edges = view ? takenEdges(view, prev, entry) : new Set();
  session.entries.push(entry);
  session.version++;
}

// ---------------------------------------------------------------- selection

export function selectSession(key, byUser) {
  if (byUser) model.userPicked = true;
  if (model.selectedKey !== key) {
    model.selectedKey = key;
    model.follow = true;
    model.selectedIndex = -1;
    rendered.timelineKey = undefined;
  }
  scheduleRender();
}

export function selectIndex(index, byUser) {
  const s = model.sessions.get(model.selectedKey);
  if (!s || s.entries.length === 0) return;
  model.selectedIndex = Math.max(0, Math.min(index, s.entries.length - 1));
  if (byUser) model.follow = model.selectedIndex === s.entries.length - 1;
  scheduleRender();
}

// ---------------------------------------------------------------- problems

/** `origin` "server" for problems the server recorded (sent again on a reconnect), "page" for the page's own. */
export function addProblem(message, time, origin = "page") {
  model.problems.push({ message, time: time || new Date().toISOString(), origin });
  scheduleRender();
}
