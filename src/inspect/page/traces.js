// Trace files (JSONL): the one the server was given (served at /trace) and those opened or dropped on the page, each
// session of a file a session of the page.

import { scheduleRender } from "./frame.js";
import { addEntry, addProblem, model, newSession, selectSession } from "./state.js";

// ---------------------------------------------------------------- trace files

/** Parses a trace (JSONL) into sessions; unreadable lines are reported, not skipped silently. */
function loadTrace(fileName, text, { skipLive = false } = {}) {
  const lines = text.split(/\r?\n/);
  const bad = [];
  const bySession = new Map();
  lines.forEach((raw, i) => {
    if (raw.trim() === "") return;
    let line;
    try {
      line = JSON.parse(raw);
    } catch {
      bad.push(`${i + 1} (not JSON)`);
      return;
    }
    if (!line || typeof line !== "object" || typeof line.sessionId !== "string" || typeof line.kind !== "string") {
      bad.push(`${i + 1} (no sessionId or kind)`);
      return;
    }
    if (!bySession.has(line.sessionId)) bySession.set(line.sessionId, []);
    bySession.get(line.sessionId).push(line);
  });
  if (bad.length) addProblem(`${fileName}: ${bad.length} line${bad.length === 1 ? "" : "s"} could not be read: line ${bad.slice(0, 20).join(", ")}${bad.length > 20 ? ", …" : ""}`);
  if (bySession.size === 0) {
    addProblem(`${fileName}: no trace lines found (a trace holds one JSON object per line, each with a sessionId and a kind)`);
    return [];
  }
  const keys = [];
  for (const [sessionId, sessionLines] of bySession) {
    // The given trace of an inspector that also gets its lines live: the live session has them all.
    if (skipLive && model.sessions.has(`run:${sessionId}`)) continue;
    const key = `trace:${fileName}:${sessionId}`;
    const s = newSession(key, "trace", sessionId);
    s.file = fileName;
    model.sessions.set(key, s);
    sessionLines.sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
    for (const line of sessionLines) {
      if (line.parentSession) s.parentSession = line.parentSession;
      if (line.kind === "state") {
        addEntry(s, { seq: line.seq, time: line.time, names: [line.state], turn: line.turn, details: line.details || {} });
        if (line.state === "done") s.ended = true;
      } else {
        s.notes.push({ at: s.entries.length - 1, time: line.time, kind: "line", line });
        if (line.kind === "suspended") s.suspended = line.pending || [];
        if (line.kind === "resumed") s.suspended = undefined;
      }
    }
    s.ended = true;
    s.created = Date.parse(sessionLines[0].time) || 0;
    keys.push(key);
  }
  return keys;
}

export async function loadGivenTrace() {
  if (!model.traceFileName || model.traceLoaded) return;
  model.traceLoaded = true;
  try {
    const res = await fetch("trace", { cache: "no-store" });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const keys = loadTrace(model.traceFileName, await res.text(), { skipLive: true });
    const current = model.sessions.get(model.selectedKey);
    if (keys.length && !model.userPicked && (!current || current.kind === "trace")) selectSession(keys[0], false);
  } catch (error) {
    model.traceLoaded = false;
    addProblem(`could not load the trace file ${model.traceFileName}: ${error.message}`);
  }
  scheduleRender();
}

export async function openFiles(files) {
  let first;
  for (const file of files) {
    const keys = loadTrace(file.name, await file.text());
    first ??= keys[0];
  }
  if (first) selectSession(first, true);
  scheduleRender();
}
