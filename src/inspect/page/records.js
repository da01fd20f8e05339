// The records the server sends (src/inspect/protocol.ts), applied to the page's model in order.

import { chartView, leafPaths } from "./chart-model.js";
import { addEntry, addProblem, model, selectSession, sessionFor, viewOf } from "./state.js";

// ---------------------------------------------------------------- records from the server

export function applyRecord(r) {
  model.recordOrder++;
  switch (r.kind) {
    case "chart":
      model.charts.set(r.chartId, chartView(r.chartId, r.chart));
      return;
    case "problem":
      addProblem(r.message, r.time, "server");
      return;
    case "run": {
      const s = sessionFor(`run:${r.sessionId}`, "run", r.sessionId);
      s.chartId = r.chartId;
      s.input = r.input;
      s.parentSession = r.parentSession;
      s.created = Date.parse(r.time) || Date.now();
      autoSelect(s);
      return;
    }
    case "enter": {
      const s = sessionFor(`run:${r.sessionId}`, "run", r.sessionId);
      const line = r.line || {};
      addEntry(s, {
        seq: line.seq,
        time: line.time,
        names: [line.state],
        turn: line.turn,
        details: line.details || {},
        context: r.context,
        messageCount: r.messageCount,
        event: r.event,
      });
      if (line.state === "done") s.ended = true;
      return;
    }
    case "messages": {
      const s = sessionFor(`run:${r.sessionId}`, "run", r.sessionId);
      s.messages.length = r.start;
      s.messages.push(...r.messages);
      return;
    }
    case "agent": {
      const s = sessionFor(`run:${r.sessionId}`, "run", r.sessionId);
      const event = r.event || {};
      if (event.type === "state" && !s.entries.some((e) => e.context !== undefined)) {
        // A run fed only its events: its transitions are its state events.
        addEntry(s, { seq: s.entries.length, time: r.time, names: [event.state], turn: event.turn, details: {} });
      } else {
        s.notes.push({ at: s.entries.length - 1, time: r.time, kind: "agent", event });
        s.version++;
      }
      if (event.type === "turn_end") s.ended = true;
      // A suspended run (docs/durable.md) has stopped without a turn_end: it waits on its pending calls.
      if (event.type === "suspended") {
        s.suspended = event.pending || [];
        s.ended = true;
      }
      return;
    }
    case "trace_line": {
      // A line of a trace recorded elsewhere, live (statecraft inspect --database): its session is a run that goes
      // on until its done line, and again when a later run of the session adds lines.
      const s = sessionFor(`run:${r.sessionId}`, "run", r.sessionId);
      const given = model.traceFileName ? `trace:${model.traceFileName}:${r.sessionId}` : undefined;
      // The same session read from the given trace file yields to the live one (which has every line too).
      if (given && model.sessions.delete(given) && model.selectedKey === given) selectSession(s.key, false);
      const line = r.line || {};
      if (line.parentSession) s.parentSession = line.parentSession;
      if (line.kind === "state") {
        addEntry(s, { seq: line.seq, time: line.time, names: [line.state], turn: line.turn, details: line.details || {} });
        s.ended = line.state === "done";
        if (!s.ended) s.suspended = undefined;
      } else {
        s.notes.push({ at: s.entries.length - 1, time: line.time, kind: "line", line });
        if (line.kind === "suspended") {
          s.suspended = line.pending || [];
          s.ended = true;
        }
        if (line.kind === "resumed") {
          s.suspended = undefined;
          s.ended = false;
        }
        s.version++;
      }
      return;
    }
    case "run_end": {
      const s = model.sessions.get(`run:${r.sessionId}`);
      if (s) {
        s.ended = true;
        s.version++;
      }
      return;
    }
    case "actor": {
      // Every actor is listed; one that is not a machine with states (a promise, a callback, a spawner with only
      // root transitions) has no chart, only its snapshots and events.
      const s = sessionFor(`actor:${r.sessionId}`, "actor", r.sessionId);
      const chart = r.chartId ? model.charts.get(r.chartId) : undefined;
      s.chartId = chart && chart.chart.states.length > 0 ? r.chartId : undefined;
      s.name = r.name;
      s.origin = r.origin;
      s.app = r.app;
      s.systemId = r.systemId;
      s.parentId = r.parentId;
      s.created = Date.parse(r.time) || Date.now();
      // An actor is reported before its first snapshot exists (in-process): then its first step is that snapshot.
      const snap = r.snapshot || {};
      if (snap.value !== undefined || snap.context !== undefined || snap.output !== undefined) actorSnapshot(s, { time: r.time, event: { type: "xstate.init" }, snapshot: snap });
      s.version++;
      autoSelect(s);
      return;
    }
    case "actor_end": {
      const s = model.sessions.get(`actor:${r.sessionId}`);
      if (s && !s.ended) {
        s.ended = true;
        s.endReason = r.reason;
        s.version++;
      }
      return;
    }
    case "snapshot": {
      const s = model.sessions.get(`actor:${r.sessionId}`);
      if (s) actorSnapshot(s, r);
      return;
    }
    case "event": {
      const type = r.event && typeof r.event.type === "string" ? r.event.type : "(event)";
      model.events.push({ order: model.recordOrder, time: r.time, target: r.sessionId, source: r.sourceId, type, event: r.event, eventId: r.eventId });
      const s = model.sessions.get(`actor:${r.sessionId}`);
      if (s) {
        s.notes.push({ at: s.entries.length - 1, time: r.time, kind: "event", event: r.event, sourceId: r.sourceId });
        s.version++;
      }
      return;
    }
    case "permission":
      model.permissions.set(r.id, { ...r });
      return;
    case "permission_answer": {
      const p = model.permissions.get(r.id);
      if (p) Object.assign(p, { answer: r.answer, by: r.by, answeredAt: r.time });
      return;
    }
    default:
      addProblem(`the server sent a record of an unknown kind: ${String(r.kind)}`);
  }
}

/**
 * A snapshot of an actor: every one it reported is a step of its timeline (a change of context only too, so the
 * context shown at a step is the context at that step), except one that repeats the step before it exactly.
 */
function actorSnapshot(s, r) {
  const snap = r.snapshot || {};
  const leaves = snap.value !== undefined && snap.value !== null ? leafPaths(snap.value) : [];
  const last = s.entries[s.entries.length - 1];
  if (snap.status === "done" || snap.status === "error" || snap.status === "stopped") s.ended = true;
  const signature = JSON.stringify([leaves, snap.context ?? null, snap.status ?? null, snap.output ?? null, snap.error ?? null]);
  if (last && !r.transitions && last.signature === signature) {
    s.version++;
    return;
  }
  const view = viewOf(s);
  const names = leaves.map((p) => (view && view.byPath.get(p) ? view.byPath.get(p).name : p));
  addEntry(s, {
    seq: s.entries.length,
    time: r.time,
    names,
    pathKey: leaves.join(","),
    signature,
    details: { event: r.event, ...(snap.output !== undefined ? { output: snap.output } : {}), ...(snap.error !== undefined ? { error: snap.error } : {}) },
    context: snap.context,
    status: snap.status,
    event: r.event && typeof r.event.type === "string" ? r.event.type : undefined,
    eventId: r.eventId,
    taken: r.transitions,
  });
}

/** Follows the newest live session until the user picks one. */
function autoSelect(s) {
  if (model.userPicked) return;
  if (s.kind === "actor" && s.parentId && model.sessions.has(`actor:${s.parentId}`)) return;
  const current = model.sessions.get(model.selectedKey);
  if (!current || current.kind === "trace" || s.kind !== "trace") selectSession(s.key, false);
}
