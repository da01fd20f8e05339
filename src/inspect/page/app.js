// The statecraft inspector page. Plain ES module, no build step; it talks only to the server that served it
// (WebSocket on the same host and port, the trace at /trace) and lays charts out with the vendored ELK.
// Every piece of run data is put into the page as text (textContent), never as markup.

import { actorLabel, pickerOrder } from "./actor-tree.js";
import { elkGraph, SIZES } from "./chart-graph.js";
import { chartView, leafPaths, statesOf, takenEdges } from "./chart-model.js";
import { chartSvg } from "./chart-svg.js";
import { aroundEvent, SequenceView, sequenceOf } from "./sequence.js";
import { rowWindow, setAttr, VirtualRows } from "./virtual-rows.js";

const $ = (id) => document.getElementById(id);

/** Everything the page knows. Records from the server are applied in order; trace files add sessions of their own. */
const model = {
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

/** Every record gets the next number as it is applied: entries and events are ordered against each other by it. */
let recordOrder = 0;

let socket;
let connected = false;
let reconnectDelay = 500;
/** The request this page has answered and not yet seen settled: its buttons stay off meanwhile. */
let answering;
/** The inspector this page was served by, and whether the one connected now is another (then the token is stale). */
let serverInstance;
let staleToken = false;
// The server puts its page token in the HTML; answers to permission requests carry it (other clients have none).
const PAGE_TOKEN = document.querySelector('meta[name="statecraft-token"]')?.getAttribute("content") ?? "";

// ---------------------------------------------------------------- sessions

function newSession(key, kind, id) {
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

function sessionFor(key, kind, id) {
  let session = model.sessions.get(key);
  if (!session) {
    session = newSession(key, kind, id);
    model.sessions.set(key, session);
  }
  return session;
}

/** The chart a session is drawn on: an actor's own (none for actors that are not machines with states), else the default. */
function viewOf(session) {
  if (session.kind === "actor") return session.chartId ? model.charts.get(session.chartId) : undefined;
  return model.charts.get(session.chartId ?? model.defaultChartId);
}

/** Appends a transition and works out which arrows of the chart it took. */
function addEntry(session, entry) {
  const view = viewOf(session);
  const prev = session.entries[session.entries.length - 1];
  entry.index = session.entries.length;
  entry.order = recordOrder;
  entry.edges = view ? takenEdges(view, prev, entry) : new Set();
  session.entries.push(entry);
  session.version++;
}

// ---------------------------------------------------------------- records from the server

function applyRecord(r) {
  recordOrder++;
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
      model.events.push({ order: recordOrder, time: r.time, target: r.sessionId, source: r.sourceId, type, event: r.event, eventId: r.eventId });
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

// ---------------------------------------------------------------- trace files

/** Parses a trace (JSONL) into sessions; unreadable lines are reported, not skipped silently. */
function loadTrace(fileName, text) {
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

async function loadGivenTrace() {
  if (!model.traceFileName || model.traceLoaded) return;
  model.traceLoaded = true;
  try {
    const res = await fetch("trace", { cache: "no-store" });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const keys = loadTrace(model.traceFileName, await res.text());
    const current = model.sessions.get(model.selectedKey);
    if (keys.length && !model.userPicked && (!current || current.kind === "trace")) selectSession(keys[0], false);
  } catch (error) {
    model.traceLoaded = false;
    addProblem(`could not load the trace file ${model.traceFileName}: ${error.message}`);
  }
  scheduleRender();
}

async function openFiles(files) {
  let first;
  for (const file of files) {
    const keys = loadTrace(file.name, await file.text());
    first ??= keys[0];
  }
  if (first) selectSession(first, true);
  scheduleRender();
}

// ---------------------------------------------------------------- selection

function selectSession(key, byUser) {
  if (byUser) model.userPicked = true;
  if (model.selectedKey !== key) {
    model.selectedKey = key;
    model.follow = true;
    model.selectedIndex = -1;
    rendered.timelineKey = undefined;
  }
  scheduleRender();
}

function selectIndex(index, byUser) {
  const s = model.sessions.get(model.selectedKey);
  if (!s || s.entries.length === 0) return;
  model.selectedIndex = Math.max(0, Math.min(index, s.entries.length - 1));
  if (byUser) model.follow = model.selectedIndex === s.entries.length - 1;
  scheduleRender();
}

// ---------------------------------------------------------------- problems

/** `origin` "server" for problems the server recorded (sent again on a reconnect), "page" for the page's own. */
function addProblem(message, time, origin = "page") {
  model.problems.push({ message, time: time || new Date().toISOString(), origin });
  scheduleRender();
}

// ---------------------------------------------------------------- rendering

const rendered = { chartId: undefined, chartToken: 0, timelineKey: undefined, paintedKey: undefined, problems: 0, sessionsVersion: "" };
let renderQueued = false;
/** Records received since the last frame: applied together at the next one, then drawn once. */
const incoming = [];
/** Between the server's hello and its replay (the first `records` message). */
let awaitingReplay = false;

function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => {
    renderQueued = false;
    const records = incoming.splice(0);
    for (const r of records) applyRecord(r);
    render();
  });
}

/** The scroll boxes' positions and heights, read once per frame before anything is written (no forced layout). */
function readGeometry() {
  const box = (el) => ({ scrollTop: el.scrollTop, height: el.clientHeight });
  return { timeline: box($("timeline")), sequence: box($("sequence")) };
}

let geometry;

function render() {
  geometry = readGeometry();
  renderSessions();
  const s = model.sessions.get(model.selectedKey);
  $("empty-hint").hidden = model.sessions.size > 0;
  if (s) {
    if (model.follow || model.selectedIndex < 0) model.selectedIndex = s.entries.length - 1;
    model.selectedIndex = Math.min(model.selectedIndex, s.entries.length - 1);
  }
  renderChart(s);
  renderTimeline(s);
  renderSelected(s);
  renderGauges(s);
  renderOutput(s);
  renderCalls(s);
  renderPermission();
  renderProblems();
  renderEvents(s);
  // Last: these lay the page out, which the writes above would otherwise have to redo mid-frame.
  if (rendered.timelineScroll !== undefined) {
    $("timeline").scrollTop = rendered.timelineScroll;
    rendered.timelineScroll = undefined;
  }
  if (rendered.reveal) {
    rendered.reveal = false;
    revealCurrent();
  }
}

/** " (suspended: waiting on edit_file call_1)" for a session whose run waits on answers, else "". */
function suspendedLabel(s) {
  if (!s.suspended) return "";
  const calls = s.suspended.map((c) => `${c.name} ${c.callId}`).join(", ");
  return ` (suspended: waiting on ${calls})`;
}

// ---------------------------------------------------------------- events between actors

const shownSequence = { key: undefined, view: undefined };

function renderEvents(s) {
  const pane = $("sequence-pane");
  if (!s || s.kind !== "actor") {
    pane.hidden = true;
    shownSequence.key = undefined;
    return;
  }
  const sequence = sequenceOf(s, model.sessions, model.events);
  pane.hidden = false;
  // The rows drawn depend on where the list is scrolled to: a scroll redraws them (see start()).
  shownSequence.view ??= new SequenceView($("sequence"), (order) => {
    model.selectedEvent = order;
    scheduleRender();
  });
  shownSequence.view.draw(sequence, model.selectedEvent, geometry.sequence);
  // The detail is drawn again only when what it shows changed: the selection, or the steps around it.
  const detail = $("sequence-detail");
  const e = model.selectedEvent === undefined ? undefined : sequence.events.find((x) => x.order === model.selectedEvent);
  const target = e ? model.sessions.get(`actor:${e.target}`) : undefined;
  const around = e ? aroundEvent(target, e, model.events) : undefined;
  const key = e ? `${sequence.root.key}|${e.order}|${around.before ? around.before.order : ""}|${around.after ? around.after.order : ""}` : `${sequence.root.key}|none|${sequence.events.length > 0}`;
  if (shownSequence.key === key) return;
  shownSequence.key = key;
  if (!e) {
    detail.replaceChildren(textElement("p", sequence.events.length ? "select an event to see its payload and its target before and after" : "no events between these actors yet", "muted"));
    return;
  }
  const source = e.source ? model.sessions.get(`actor:${e.source}`) : undefined;
  const { before, after } = around;
  const snap = (entry) => (entry ? { state: entry.names.join(", ") || entry.status, ...(entry.context !== undefined ? { context: entry.context } : {}), ...(entry.status ? { status: entry.status } : {}) } : "none");
  detail.replaceChildren(
    textElement("h2", `${e.type}: ${source ? source.name : "outside"} → ${target ? target.name : e.target}`),
    block("event", e.event),
    block(`${target ? target.name : "target"} before`, snap(before), "before"),
    block(`${target ? target.name : "target"} after`, snap(after), "after"),
  );
}

function sessionLabel(s, depth = 0) {
  const short = s.id.length > 12 ? s.id.slice(0, 8) : s.id;
  if (s.suspended) {
    const input = s.kind === "run" && s.input ? ` · ${snippet(s.input, 40)}` : "";
    return `${s.kind === "run" ? "run" : s.file} · ${short}${input}${suspendedLabel(s)}`;
  }
  if (s.kind === "run") {
    const input = s.input ? ` · ${snippet(s.input, 40)}` : "";
    return `run ${short}${input}${s.ended ? "" : " (live)"}`;
  }
  if (s.kind === "actor") return actorLabel(s, depth);
  return `${s.file} · ${short}${s.parentSession ? ` (from ${s.parentSession.slice(0, 8)})` : ""} · ${s.entries.length} states`;
}

function renderSessions() {
  const select = $("session");
  const list = pickerOrder(model.sessions.values());
  const signature = list.map(({ session: s, depth }) => `${s.key}|${sessionLabel(s, depth)}`).join("\n") + `#${model.selectedKey}`;
  if (signature === rendered.sessionsVersion) return;
  rendered.sessionsVersion = signature;
  select.replaceChildren(
    ...list.map(({ session: s, depth }) => {
      const option = document.createElement("option");
      option.value = s.key;
      option.dataset.depth = String(depth);
      if (s.kind === "actor" && s.parentId) option.dataset.parent = `actor:${s.parentId}`;
      option.textContent = sessionLabel(s, depth);
      option.selected = s.key === model.selectedKey;
      return option;
    }),
  );
  select.disabled = list.length === 0;
}

async function renderChart(s) {
  if (s && s.kind === "actor" && !s.chartId) return renderNoChart(s);
  const chartId = s ? (s.chartId ?? model.defaultChartId) : model.defaultChartId;
  const view = model.charts.get(chartId);
  if (!view) return;
  if (rendered.chartId !== chartId) {
    rendered.chartId = chartId;
    rendered.paintedKey = undefined;
    const token = ++rendered.chartToken;
    $("chart-name").textContent = view.chart.machineId;
    const host = $("chart");
    if (!window.ELK) {
      host.replaceChildren(textElement("p", "The layout library did not load (vendor/elk-api.js); the timeline still works.", "problem-text"));
      return;
    }
    host.dataset.chart = "";
    host.dataset.layout = "running";
    try {
      const { svg, ms } = await layoutChart(view);
      if (token !== rendered.chartToken) return;
      host.replaceChildren(svg);
      host.dataset.chart = chartId;
      host.dataset.layout = "done";
      host.dataset.layoutMs = String(Math.round(ms));
      applyZoom();
      // Paint with whatever is selected now (the selection may have moved while ELK laid the chart out).
      rendered.paintedKey = undefined;
      scheduleRender();
      return;
    } catch (error) {
      if (token !== rendered.chartToken) return;
      host.dataset.layout = "failed";
      const message = `the chart of ${view.chart.machineId} could not be laid out: ${error && error.message ? error.message : String(error)}`;
      host.replaceChildren(textElement("p", `The chart could not be drawn: ${message}`, "problem-text"));
      addProblem(message);
      return;
    }
  }
  paintChart(s, view);
}

/** An actor with no states to draw (a promise, callback or observable actor, a machine with only root transitions). */
function renderNoChart(s) {
  const key = `none:${s.key}`;
  if (rendered.chartId === key) return;
  rendered.chartId = key;
  rendered.paintedKey = undefined;
  ++rendered.chartToken; // a chart still being laid out for another session must not land here
  $("chart-name").textContent = s.name || "";
  const host = $("chart");
  host.dataset.chart = "";
  const note = textElement("p", `${s.name || "This actor"} has no states to draw (it is not a state machine, or a machine with no states); its snapshots and events are in the timeline.`, "muted");
  note.dataset.noChart = s.name || "";
  host.replaceChildren(note);
}

/**
 * "fit" scales the chart to the pane's width so the whole machine is in view (down to a floor past which a very
 * large machine scrolls instead); the buttons zoom from there to read the labels.
 */
let zoom = "fit";

function applyZoom() {
  const host = $("chart");
  const svg = host.querySelector("svg");
  if (!svg || !svg.viewBox || !svg.viewBox.baseVal || !svg.viewBox.baseVal.width) return;
  const { width, height } = svg.viewBox.baseVal;
  const fit = Math.min(1.4, Math.max(0.3, (host.clientWidth - 8) / width));
  const scale = zoom === "fit" ? fit : zoom;
  svg.style.maxWidth = "none";
  svg.setAttribute("width", String(Math.round(width * scale)));
  svg.setAttribute("height", String(Math.round(height * scale)));
  host.dataset.zoom = scale.toFixed(2);
}

function zoomBy(factor) {
  const current = Number($("chart").dataset.zoom) || 1;
  zoom = Math.min(4, Math.max(0.2, current * factor));
  applyZoom();
}

/** Keeps the current state in view in a chart larger than its pane. */
function revealCurrent() {
  const host = $("chart");
  const current = host.querySelector('[data-state][aria-current="true"]');
  if (!current || host.scrollWidth <= host.clientWidth && host.scrollHeight <= host.clientHeight) return;
  const box = current.getBoundingClientRect();
  const pane = host.getBoundingClientRect();
  if (box.left < pane.left || box.right > pane.right || box.top < pane.top || box.bottom > pane.bottom) {
    host.scrollBy({ left: box.left + box.width / 2 - (pane.left + pane.width / 2), top: box.top + box.height / 2 - (pane.top + pane.height / 2) });
  }
}

/** ELK runs in a worker (the page stays responsive while a large machine is laid out); layouts are kept per chart. */
let elk;
const layouts = new Map();

/** Text widths at the chart's font, for ELK to size nodes and labels. */
const measureText = (() => {
  let ctx;
  return (text) => {
    if (!ctx) {
      ctx = document.createElement("canvas").getContext("2d");
      ctx.font = `${SIZES.font}px ${getComputedStyle(document.body).fontFamily}`;
    }
    return ctx.measureText(String(text)).width;
  };
})();

function layoutEngine() {
  elk ??= new window.ELK({ workerUrl: "vendor/elk-worker.min.js" });
  return elk;
}

/**
 * Starts the layout worker as the page loads and lays out a small chart in it: loading ELK and its first layouts
 * (its code not yet compiled) take a core for a second or more, which would otherwise fall on the first machine
 * to arrive — while that app's events stream in.
 */
function warmUpLayout() {
  if (!window.ELK) {
    $("chart").dataset.layoutEngine = "failed";
    return;
  }
  const warm = {
    states: [
      { id: "w0", name: "a", path: ["a"], type: "compound" },
      { id: "w1", name: "b", path: ["a", "b"], type: "atomic", parent: "w0" },
      { id: "w2", name: "c", path: ["a", "c"], type: "atomic", parent: "w0" },
      { id: "w3", name: "d", path: ["d"], type: "final" },
    ],
    anyStates: [],
    edges: [
      { from: "[*]", to: "a", kind: "initial", arrow: 0 },
      { from: "b", to: "c", kind: "event", label: "GO", arrow: 1 },
      { from: "c", to: "b", kind: "event", label: "BACK", arrow: 2 },
      { from: "a", to: "d", kind: "event", label: "END", arrow: 3 },
    ],
  };
  const { markers, ...input } = elkGraph(warm, (text) => String(text).length * 7);
  const host = $("chart");
  host.dataset.layoutEngine = "loading";
  layoutEngine()
    .layout(input)
    .then(
      () => (host.dataset.layoutEngine = "ready"),
      // The real chart's layout fails the same way and says why in a problem line.
      () => (host.dataset.layoutEngine = "failed"),
    );
}

async function layoutChart(view) {
  let laid = layouts.get(view.chartId);
  if (!laid) {
    const elk = layoutEngine();
    const graph = elkGraph(view.chart, measureText);
    const { markers, ...input } = graph;
    const started = performance.now();
    laid = { graph, result: await elk.layout(input), ms: performance.now() - started };
    layouts.set(view.chartId, laid);
  }
  return { svg: chartSvg(view.chart, laid.result, laid.graph), ms: laid.ms };
}

/** Marks the selected transition's state current, the states before it visited and the arrows taken. */
function paintChart(s, view) {
  const host = $("chart");
  if (host.dataset.chart !== view.chartId) return;
  const index = s ? model.selectedIndex : -1;
  const key = `${s ? s.key : ""}|${index}|${s ? s.version : 0}`;
  if (rendered.paintedKey === key) return;
  rendered.paintedKey = key;
  const current = new Set();
  let visited = new Set();
  let taken = new Set();
  if (s && index >= 0) {
    // Visited states and arrows taken up to the selection, extended from the last painting when it moved forward
    // (a live actor's steps only add to them): a long run costs its new steps per frame, not all of them.
    let cache = s.paintCache;
    if (!cache || cache.chartId !== view.chartId || cache.index > index) cache = { chartId: view.chartId, index: -1, visited: new Set(), taken: new Set() };
    for (let i = cache.index + 1; i <= index; i++) {
      const entry = s.entries[i];
      for (const state of statesOf(view, entry.names)) for (const a of view.chain(state)) cache.visited.add(a.name);
      for (const e of entry.edges) cache.taken.add(String(view.chart.edges[e].arrow));
    }
    cache.index = index;
    s.paintCache = cache;
    visited = cache.visited;
    taken = cache.taken;
    for (const state of statesOf(view, s.entries[index].names)) current.add(state.name);
  }
  // The events the current states accept: arrows leaving them, an ancestor, or an "any state" node above them.
  const sources = new Set();
  for (const name of current) {
    const state = view.byName.get(name);
    for (const a of state ? view.chain(state) : []) sources.add(a.name).add(`${a.name}.*`);
  }
  if (current.size) sources.add("*");
  const enabled = new Set(view.chart.edges.filter((e) => sources.has(e.from) && (e.kind === "event" || e.kind === "after")).map((e) => String(e.arrow)));
  // Only the attributes that change are written: each write restyles the chart, unchanged or not.
  for (const el of host.querySelectorAll("[data-state]")) {
    const name = el.getAttribute("data-state");
    toggleAttr(el, "aria-current", current.has(name), "true");
    toggleAttr(el, "data-visited", visited.has(name));
  }
  for (const el of host.querySelectorAll("[data-edge], [data-edge-label]")) {
    const index = el.getAttribute("data-edge") ?? el.getAttribute("data-edge-label");
    toggleAttr(el, "data-taken", taken.has(index));
    toggleAttr(el, "data-enabled", enabled.has(index));
  }
  rendered.reveal = true;
}

function toggleAttr(el, name, on, value = "") {
  if (on) setAttr(el, name, value);
  else if (el.hasAttribute(name)) el.removeAttribute(name);
}

/** Height of a timeline row in px (style.css gives the rows this height): the list is virtualised by it. */
const ROW_HEIGHT = 22;
/** Rows drawn above and below the visible ones. */
const OVERSCAN = 12;

/**
 * The timeline is virtualised: only the rows in view (and a margin) are in the DOM, between two spacers that keep the
 * list as tall as all its rows, so thousands of steps cost a few dozen elements.
 */
function renderTimeline(s) {
  const list = $("timeline");
  const scrubber = $("scrubber");
  if (!s) {
    if (rendered.timelineKey !== undefined || !timelineRows) timelineRows = new VirtualRows(list, ROW_HEIGHT, "spacer");
    rendered.timelineKey = undefined;
    scrubber.disabled = true;
    scrubber.max = "0";
    scrubber.value = "0";
    return;
  }
  const count = s.entries.length;
  if (rendered.timelineKey !== s.key || !timelineRows) {
    rendered.timelineKey = s.key;
    timelineRows = new VirtualRows(list, ROW_HEIGHT, "spacer");
  }
  // Keep the selected row in view when following (it is the newest) or when the selection moved. The scroll box's
  // position was read at the start of the frame; what is written here is used from here on, not read back.
  const view = { ...geometry.timeline };
  const selectedTop = model.selectedIndex * ROW_HEIGHT;
  const moved = rendered.timelineSelected !== `${s.key}|${model.selectedIndex}`;
  rendered.timelineSelected = `${s.key}|${model.selectedIndex}`;
  if ((model.follow || moved) && model.selectedIndex >= 0 && (selectedTop < view.scrollTop || selectedTop + ROW_HEIGHT > view.scrollTop + view.height)) {
    view.scrollTop = Math.max(0, selectedTop - view.height + ROW_HEIGHT);
    // Set at the end of the frame, after every write (setting it lays the page out).
    rendered.timelineScroll = view.scrollTop;
  }
  drawTimelineWindow(s, view);
  const max = String(Math.max(0, count - 1));
  scrubber.disabled = count === 0;
  if (scrubber.min !== "0") scrubber.min = "0";
  if (scrubber.max !== max) scrubber.max = max;
  const value = String(Math.max(0, model.selectedIndex));
  if (scrubber.value !== value) scrubber.value = value;
  $("follow").checked = model.follow;
}

/** The timeline's rows, kept from frame to frame (see virtual-rows.js). */
let timelineRows;

/** Draws the rows in view of the timeline scrolled as `view` says (`{ scrollTop, height }`). */
function drawTimelineWindow(s, view) {
  if (!timelineRows) return;
  const count = s.entries.length;
  // Following a stream, the newest rows are in view and every frame brings new ones: rows beyond the view would be
  // built only to be thrown away at the next frame.
  const pinned = model.follow && model.selectedIndex === count - 1;
  const { first, last } = rowWindow(view.scrollTop, view.height, count, ROW_HEIGHT, pinned ? 0 : OVERSCAN);
  const start = s.entries[0] ? Date.parse(s.entries[0].time) : NaN;
  const size = String(count);
  const selected = String(model.selectedIndex);
  timelineRows.draw(
    count,
    first,
    last,
    (i) => {
      const row = timelineRow(s, s.entries[i], start);
      row.setAttribute("aria-posinset", String(i + 1));
      // The newest row of a session keeps gaining notes (its summary counts retries): built again once it changed.
      row.builtAt = i === count - 1 ? s.version : undefined;
      return row;
    },
    (i, row) => row.builtAt === undefined || (i === count - 1 && row.builtAt === s.version),
    (i, row) => {
      setAttr(row, "aria-selected", row.dataset.index === selected ? "true" : "false");
      setAttr(row, "aria-setsize", size);
    },
  );
}

function timelineRow(s, entry, start) {
  const li = document.createElement("li");
  li.setAttribute("role", "option");
  li.dataset.index = String(entry.index);
  li.dataset.seq = String(entry.seq);
  li.dataset.transitionState = entry.names.join(",");
  const t = Date.parse(entry.time);
  li.append(
    textElement("span", `#${entry.seq}`, "seq"),
    textElement("time", formatTime(entry.time), "clock"),
    textElement("span", Number.isFinite(t) && Number.isFinite(start) ? `+${((t - start) / 1000).toFixed(3)}s` : "", "rel"),
    textElement("span", entry.turn !== undefined ? `turn ${entry.turn}` : "", "turn"),
    textElement("strong", entry.names.join(", ") || entry.status || "snapshot", "name"),
    textElement("span", summary(s, entry), "summary"),
  );
  li.addEventListener("click", () => selectIndex(entry.index, true));
  return li;
}

/** One line saying what a transition carried. */
function summary(s, entry) {
  const d = entry.details || {};
  const parts = [];
  if (s.kind === "actor") {
    const ev = d.event && d.event.type;
    if (ev) parts.push(`on ${ev}`);
    return parts.join(" · ");
  }
  if (typeof d.input === "string") parts.push(`input: ${snippet(d.input, 60)}`);
  if (d.response) {
    if (d.response.text) parts.push(`text: ${snippet(d.response.text, 60)}`);
    if (d.response.toolCalls && d.response.toolCalls.length) parts.push(`calls ${d.response.toolCalls.map((c) => c.name).join(", ")}`);
  }
  if (typeof d.messages === "number") parts.push(`${d.messages} messages`);
  if (Array.isArray(d.calls)) parts.push(`calls: ${d.calls.map((c) => (typeof c === "string" ? c : c.name)).join(", ")}`);
  if (Array.isArray(d.run)) parts.push(`runs ${d.run.length}`);
  if (Array.isArray(d.permissions)) parts.push(d.permissions.map((p) => `${p.name}: ${p.decision} by ${p.by}`).join(", "));
  if (Array.isArray(d.results)) parts.push(`results: ${d.results.map((r) => `${r.name} ${r.isError ? "✗" : "✓"}`).join(", ")}`);
  if (Array.isArray(d.errors)) parts.push(`errors: ${d.errors.map((e) => e.code).join(", ")}`);
  if (d.error && d.error.code) parts.push(`error ${d.error.code}`);
  if (d.reason) parts.push(`reason: ${d.reason}`);
  const retries = s.notes.filter((n) => n.at === entry.index && ((n.kind === "line" && n.line.kind === "retry") || (n.kind === "agent" && n.event.type === "retry")));
  if (retries.length) parts.push(`${retries.length} retr${retries.length === 1 ? "y" : "ies"}`);
  return parts.join(" · ");
}

function renderSelected(s) {
  const out = $("selected");
  const panel = $("inspect");
  const entry = s && model.selectedIndex >= 0 ? s.entries[model.selectedIndex] : undefined;
  if (!entry) {
    out.textContent = s ? "no transition yet" : "nothing selected";
    out.removeAttribute("data-seq");
    out.removeAttribute("data-selected-state");
    panel.replaceChildren();
    rendered.inspectKey = undefined;
    return;
  }
  const name = entry.names.join(", ");
  out.textContent = `seq ${entry.seq} · ${name}${entry.turn !== undefined ? ` · turn ${entry.turn}` : ""} · ${formatTime(entry.time)}`;
  out.dataset.seq = String(entry.seq);
  out.dataset.selectedState = name;
  const key = `${s.key}|${entry.index}|${s.version}`;
  if (rendered.inspectKey === key) return;
  rendered.inspectKey = key;
  panel.replaceChildren(...inspectParts(s, entry));
}

/** What the selected transition shows: what led there, the context at that point, what happened during it. */
function inspectParts(s, entry) {
  const parts = [];
  const heading = textElement("h2", `#${entry.seq} ${entry.names.join(", ")}`);
  parts.push(heading);
  const facts = [];
  facts.push(["time", `${formatTime(entry.time)}`]);
  if (entry.turn !== undefined) facts.push(["turn", String(entry.turn)]);
  if (entry.event) facts.push(["event", entry.event]);
  if (s.kind === "actor" && entry.status) facts.push(["status", entry.status]);
  if (s.kind === "actor" && s.endReason && entry.index === s.entries.length - 1) facts.push(["ended", s.endReason]);
  const counters = countersAt(s, entry.index);
  if (counters) {
    facts.push(["turns", `${counters.turns}${counters.maxTurns !== undefined ? ` / ${counters.maxTurns}` : ""}`]);
    facts.push(["tool calls", `${counters.toolCalls}${counters.maxToolCalls !== undefined ? ` / ${counters.maxToolCalls}` : ""}`]);
    if (counters.elapsedMs !== undefined) facts.push(["elapsed", `${formatMs(counters.elapsedMs)}${counters.timeoutMs !== undefined ? ` / ${formatMs(counters.timeoutMs)}` : ""}`]);
  }
  const dl = document.createElement("dl");
  dl.className = "facts";
  for (const [k, v] of facts) dl.append(textElement("dt", k), textElement("dd", v));
  parts.push(dl);

  const errors = errorsOf(entry);
  if (errors.length) parts.push(block("errors", errors, "errors"));
  if (s.kind !== "actor" && entry.details && Object.keys(entry.details).length) parts.push(block("what led here (trace details)", entry.details));
  if (s.kind === "actor" && entry.details && entry.details.event) parts.push(block("event", entry.details.event));
  if (s.kind === "actor" && entry.details && entry.details.output !== undefined) parts.push(block("output", entry.details.output));

  const batch = entry.context && Array.isArray(entry.context.batch) ? entry.context.batch : undefined;
  if (batch && batch.length) {
    parts.push(
      block(
        "calls of this response",
        batch.map((r) => ({ call: r.call, status: r.status, ...(r.permission ? { permission: r.permission } : {}), ...(r.result ? { result: r.result } : {}), ...(r.error ? { error: r.error } : {}) })),
      ),
    );
  }
  if (s.kind !== "actor") {
    const messages = messagesAt(s, entry.index);
    const section = document.createElement("section");
    section.className = "messages";
    section.append(textElement("h3", `messages so far (${messages.length})`));
    const ol = document.createElement("ol");
    for (const m of messages) {
      const li = document.createElement("li");
      li.dataset.role = m.role;
      li.append(textElement("span", m.role + (m.name ? ` ${m.name}` : ""), "role"));
      if (m.content) li.append(textElement("pre", m.content, "text"));
      if (m.toolCalls && m.toolCalls.length) li.append(textElement("pre", m.toolCalls.map((c) => `${c.name}(${JSON.stringify(c.input)})`).join("\n"), "json"));
      if (m.isError) li.dataset.error = "";
      ol.append(li);
    }
    section.append(ol);
    parts.push(section);
  }
  const notes = s.notes.filter((n) => n.at === entry.index);
  if (notes.length) {
    parts.push(
      block(
        "during this state",
        notes.map((n) => (n.kind === "line" ? n.line : n.kind === "event" ? { received: n.event, ...(n.sourceId ? { from: n.sourceId } : {}) } : n.event)),
      ),
    );
  }
  if (entry.context !== undefined) {
    const details = document.createElement("details");
    details.className = "context";
    if (s.kind === "actor") details.open = true;
    details.append(textElement("summary", "context at this point"), textElement("pre", JSON.stringify(entry.context, null, 2), "json"));
    parts.push(details);
  }
  return parts;
}

function errorsOf(entry) {
  const out = [];
  const d = entry.details || {};
  if (d.error) out.push(d.error);
  if (Array.isArray(d.errors)) out.push(...d.errors);
  for (const r of (d.results || [])) if (r.error) out.push({ toolCallId: r.toolCallId, ...r.error });
  const c = entry.context || {};
  if (c.failure && !out.length) out.push(c.failure);
  if (c.stopError && !out.some((e) => e.code === c.stopError.code)) out.push(c.stopError);
  if (entry.status === "error" && c) out.push({ message: "the actor failed" });
  return out;
}

/** The conversation as it stood when the transition happened: the run's own, or rebuilt from a trace's details. */
function messagesAt(s, index) {
  const entry = s.entries[index];
  if (s.kind === "run" && entry.messageCount !== undefined) {
    return s.messages.slice(0, entry.messageCount).map((m) => ({
      role: m.role,
      content: m.content,
      name: m.name,
      isError: m.isError,
      toolCalls: m.toolCalls,
    }));
  }
  const out = [];
  for (let i = 0; i <= index; i++) {
    const d = s.entries[i].details || {};
    if (typeof d.input === "string") out.push({ role: "user", content: d.input });
    if (d.response) out.push({ role: "assistant", content: d.response.text || "", toolCalls: (d.response.toolCalls || []).map((c) => ({ name: c.name, input: safeParse(c.arguments) })) });
    for (const r of d.results || []) out.push({ role: "tool", name: r.name, content: r.content, isError: r.isError });
  }
  return out;
}

/** turns, tool calls and elapsed time at a transition, with their limits when known. */
function countersAt(s, index) {
  if (s.kind === "actor") return undefined;
  const entry = s.entries[index];
  const ctx = entry.context;
  const first = s.entries[0];
  const options = (first && first.details && first.details.options) || {};
  if (ctx && typeof ctx === "object" && typeof ctx.turn === "number") {
    const live = !s.ended && model.follow && index === s.entries.length - 1;
    const at = live ? Date.now() : Date.parse(entry.time);
    // The engine keeps a run's fixed settings under `run`.
    const run = ctx.run && typeof ctx.run === "object" ? ctx.run : ctx;
    return {
      turns: ctx.turn,
      maxTurns: run.maxTurns,
      toolCalls: ctx.toolCallCount ?? 0,
      maxToolCalls: run.maxToolCalls,
      elapsedMs: typeof run.startedAt === "number" ? Math.max(0, at - run.startedAt) : undefined,
      timeoutMs: run.timeoutMs,
    };
  }
  let toolCalls = 0;
  for (let i = 0; i <= index; i++) {
    const d = s.entries[i].details || {};
    if (Array.isArray(d.run)) toolCalls += d.run.length;
    if (typeof d.toolCalls === "number") toolCalls = d.toolCalls;
  }
  const startedAt = first ? Date.parse(first.time) : NaN;
  const live = s.kind === "run" && !s.ended && model.follow && index === s.entries.length - 1;
  const at = live ? Date.now() : Date.parse(entry.time);
  return {
    turns: entry.turn ?? 0,
    maxTurns: options.maxTurns,
    toolCalls,
    maxToolCalls: options.maxToolCalls,
    elapsedMs: Number.isFinite(startedAt) && Number.isFinite(at) ? Math.max(0, at - startedAt) : undefined,
    timeoutMs: options.timeoutMs,
  };
}

function renderGauges(s) {
  const section = $("gauges");
  const entry = s && model.selectedIndex >= 0 ? s.entries[model.selectedIndex] : undefined;
  section.hidden = !!s && s.kind === "actor";
  const counters = s && entry ? countersAt(s, entry.index) : undefined;
  const view = s ? viewOf(s) : model.charts.get(model.defaultChartId);
  setGauge("gauge-turns", "turns-value", counters && counters.turns, counters && counters.maxTurns, String);
  setGauge("gauge-tools", "tools-value", counters && counters.toolCalls, counters && counters.maxToolCalls, String);
  setGauge("gauge-time", "time-value", counters && counters.elapsedMs, counters && counters.timeoutMs, formatMs);
  const guards = view ? guardsByGauge(view.chart) : { turns: [], tools: [], time: [] };
  $("turns-guards").textContent = guards.turns.length ? `guards: ${guards.turns.join(", ")}` : "";
  $("tools-guards").textContent = guards.tools.length ? `guards: ${guards.tools.join(", ")}` : "";
  $("time-guards").textContent = guards.time.length ? `guards: ${guards.time.join(", ")}` : "";
}

function setGauge(meterId, valueId, value, max, format) {
  const meter = $(meterId);
  const has = typeof value === "number" && Number.isFinite(value);
  const limit = typeof max === "number" && max > 0 ? max : has ? Math.max(value, 1) : 1;
  meter.max = limit;
  meter.value = has ? Math.min(value, limit) : 0;
  meter.high = limit * 0.8;
  meter.optimum = 0;
  const text = has ? `${format(value)}${typeof max === "number" ? ` / ${format(max)}` : ""}` : "–";
  meter.setAttribute("aria-valuetext", text);
  meter.setAttribute("title", text);
  $(valueId).textContent = text;
}

/** The guards (and named delays) each gauge's counter feeds, by name: shown next to the gauge. */
function guardsByGauge(chart) {
  const names = new Set();
  for (const g of chart.guards) for (const part of g.split(/\s*(?:&&|\|\|)\s*/)) names.add(part.replace(/^!/, ""));
  const delays = chart.edges.filter((e) => e.kind === "after" && typeof e.delay === "string").map((e) => `after ${e.delay}`);
  const all = [...names, ...new Set(delays)];
  return {
    turns: all.filter((n) => /turn/i.test(n)),
    tools: all.filter((n) => /tool.?(call|limit)/i.test(n)),
    time: all.filter((n) => /time|deadline/i.test(n)),
  };
}

/** The text the model streamed up to the selected transition. */
function renderOutput(s) {
  const out = $("output");
  let text = "";
  if (s && s.kind !== "actor" && model.selectedIndex >= 0) {
    const streamed = s.notes.filter((n) => n.kind === "agent" && n.event.type === "text_delta" && n.at <= model.selectedIndex);
    if (streamed.length) text = streamed.map((n) => n.event.text).join("");
    else {
      const texts = [];
      for (let i = 0; i <= model.selectedIndex; i++) {
        const d = s.entries[i].details || {};
        if (d.response && d.response.text) texts.push(d.response.text);
      }
      text = texts.join("\n\n");
    }
  }
  if (out.textContent !== text) {
    out.textContent = text;
    out.scrollTop = out.scrollHeight;
  }
}

/** Tool calls up to the selected transition: name, arguments, permission, result. */
function renderCalls(s) {
  const list = $("calls");
  const calls = new Map();
  const call = (id, name) => {
    if (!calls.has(id)) calls.set(id, { id, name, input: undefined, status: "requested" });
    const c = calls.get(id);
    if (name && !c.name) c.name = name;
    return c;
  };
  if (s && s.kind !== "actor") {
    for (let i = 0; i <= model.selectedIndex && i < s.entries.length; i++) {
      const d = s.entries[i].details || {};
      if (Array.isArray(d.calls)) for (const c of d.calls) if (c && typeof c === "object") Object.assign(call(c.id, c.name), { input: c.input });
      for (const p of d.permissions || []) Object.assign(call(p.toolCallId, p.name), { permission: `${p.decision} by ${p.by}` });
      for (const r of d.results || []) Object.assign(call(r.toolCallId, r.name), { result: r.content, isError: r.isError, status: r.isError ? "error" : "done" });
      for (const n of s.notes) {
        if (n.at !== i || n.kind !== "agent") continue;
        const e = n.event;
        if (e.type === "tool_start") Object.assign(call(e.call.id, e.call.name), { input: e.call.input, status: "running" });
        if (e.type === "tool_result") Object.assign(call(e.call.id, e.call.name), { input: e.call.input, result: e.result.content, isError: e.result.isError, status: e.result.isError ? "error" : "done" });
        if (e.type === "permission_request") Object.assign(call(e.call.id, e.call.name), { input: e.call.input, permission: "asked" });
      }
    }
  }
  const items = [...calls.values()].map((c) => {
    const li = document.createElement("li");
    li.dataset.call = c.name || "";
    li.dataset.status = c.status;
    li.append(textElement("strong", c.name || c.id, "call-name"), textElement("span", c.status + (c.permission ? ` · ${c.permission}` : ""), "call-status"));
    if (c.input !== undefined) li.append(textElement("pre", JSON.stringify(c.input, null, 2), "json call-input"));
    if (c.result !== undefined) li.append(textElement("pre", c.result, c.isError ? "text call-result error" : "text call-result"));
    return li;
  });
  const signature = JSON.stringify([...calls.values()]);
  if (list.dataset.signature !== signature) {
    list.dataset.signature = signature;
    list.replaceChildren(...items);
  }
}

function renderPermission() {
  const pending = [...model.permissions.values()].filter((p) => !p.answer);
  const section = $("permission");
  if (pending.length === 0) {
    section.hidden = true;
    section.dataset.request = "";
    return;
  }
  const p = pending[0];
  section.hidden = false;
  // Only what the page shows whole may be allowed from it: the server sends a call cut only when it is too large,
  // and then refuses an Allow from the page too.
  const whole = p.whole === true;
  if (section.dataset.request !== p.id) {
    section.dataset.request = p.id;
    const call = p.call || {};
    const input = JSON.stringify(call.input, null, 2) ?? "";
    $("permission-text").textContent = `${call.name || "a tool"} wants to run (${p.reason}) · session ${String(p.sessionId).slice(0, 8)}`;
    $("permission-input").textContent = input;
    $("permission-input").scrollTop = 0;
    const note = $("permission-note");
    note.dataset.kind = whole ? (input.length > LONG_INPUT ? "long" : "") : "cut";
    if (!whole) note.textContent = `Allow is off: ${p.unshown || "this page was not sent the whole call"}. Deny it here, or answer it in the terminal.`;
    else if (input.length > LONG_INPUT) note.textContent = `The input is ${input.length.toLocaleString("en")} characters long: scroll through all of it before you allow it.`;
    else note.textContent = "";
  }
  $("permission-more").textContent = pending.length > 1 ? `${pending.length - 1} more waiting` : "";
  const busy = !connected || staleToken || answering === p.id;
  $("allow").disabled = busy || !whole;
  $("deny").disabled = busy;
}

/** Inputs longer than this get a note saying to read all of them (the box scrolls). */
const LONG_INPUT = 2000;

function answer(value) {
  const id = $("permission").dataset.request;
  if (!id || !connected) return;
  const p = model.permissions.get(id);
  if (value === "allow" && !(p && p.whole === true)) return;
  answering = id;
  $("allow").disabled = true;
  $("deny").disabled = true;
  socket.send(JSON.stringify({ type: "@statecraft.answer", id, answer: value, token: PAGE_TOKEN }));
}

function renderProblems() {
  const box = $("problems");
  if (model.problems.length === rendered.problems) return;
  rendered.problems = model.problems.length;
  box.hidden = model.problems.length === 0;
  const list = document.createElement("ul");
  list.setAttribute("aria-label", "problems");
  list.append(...model.problems.slice(-5).map((p) => textElement("li", `${formatTime(p.time)} ${p.message}`)));
  box.replaceChildren(textElement("strong", `${model.problems.length} problem${model.problems.length === 1 ? "" : "s"}${model.problems.length > 5 ? " (the last 5)" : ""}`), list);
}

// ---------------------------------------------------------------- helpers

function textElement(tag, text, className) {
  const el = document.createElement(tag);
  el.textContent = text;
  if (className) el.className = className;
  return el;
}

function block(title, value, className) {
  const section = document.createElement("section");
  if (className) section.className = className;
  section.append(textElement("h3", title), textElement("pre", JSON.stringify(value, null, 2), "json"));
  return section;
}

function snippet(text, max) {
  const one = String(text).replace(/\s+/g, " ").trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

function safeParse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function formatTime(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso ?? "");
  const pad = (n, w = 2) => String(n).padStart(w, "0");
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

function formatMs(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return "–";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round((ms % 60_000) / 1000);
  return `${Math.floor(ms / 60_000)} min${seconds ? ` ${seconds} s` : ""}`;
}

// ---------------------------------------------------------------- connection

function connect() {
  const ws = new WebSocket(`ws://${location.host}/`);
  socket = ws;
  setConnection("connecting", "connecting…");
  ws.addEventListener("open", () => {
    reconnectDelay = 500;
    ws.send(JSON.stringify({ type: "@statecraft.hello" }));
  });
  ws.addEventListener("message", (message) => {
    let data;
    try {
      data = JSON.parse(message.data);
    } catch {
      addProblem("the server sent a message that is not JSON");
      return;
    }
    if (data.type === "hello") {
      // A reconnect replays everything: start the server's part afresh, keep the trace files opened here.
      for (const [key, s] of model.sessions) if (s.kind !== "trace") model.sessions.delete(key);
      model.charts.clear();
      model.permissions.clear();
      model.problems = model.problems.filter((p) => p.origin !== "server");
      rendered.problems = -1;
      model.defaultChartId = data.defaultChartId;
      model.traceFileName = data.traceFile;
      model.events = [];
      model.selectedEvent = undefined;
      incoming.length = 0;
      awaitingReplay = true;
      const origins = Array.isArray(data.allowOrigins) ? data.allowOrigins : [];
      const allowed = $("allowed-origins");
      allowed.hidden = origins.length === 0;
      allowed.replaceChildren(...origins.map((o) => textElement("li", o)));
      answering = undefined;
      // Reconnected to another inspector on the same port: this page holds the previous one's token.
      if (!staleToken && serverInstance !== undefined && data.instance !== serverInstance) {
        staleToken = true;
        addProblem("the inspector on this port was restarted: reload this page to answer permission requests (it holds the previous inspector's token)");
      }
      serverInstance ??= data.instance;
      connected = true;
      setConnection("connected", "connected");
      rendered.chartId = undefined;
      rendered.timelineKey = undefined;
      return;
    }
    // Streamed records are applied at the next frame, all that came since the last one together (scheduleRender).
    // The first records after hello are the replay: applied at once (the given trace is loaded after it). Later
    // ones are records the server sent together; they wait for the next frame with the rest.
    if (data.type === "records" && !awaitingReplay) {
      incoming.push(...data.records);
      scheduleRender();
      return;
    }
    if (data.type === "records") {
      awaitingReplay = false;
      for (const r of incoming.splice(0)) applyRecord(r);
      for (const r of data.records) applyRecord(r);
      loadGivenTrace();
      scheduleRender();
      return;
    }
    if (data.type === "record") {
      incoming.push(data.record);
      scheduleRender();
    }
  });
  ws.addEventListener("close", () => {
    connected = false;
    setConnection("disconnected", "disconnected — retrying");
    scheduleRender();
    setTimeout(connect, reconnectDelay);
    reconnectDelay = Math.min(reconnectDelay * 2, 5000);
  });
}

function setConnection(state, text) {
  const el = $("connection");
  el.dataset.connection = state;
  el.textContent = text;
}

// ---------------------------------------------------------------- start

function start() {
  $("ws-url").textContent = `ws://${location.host}`;
  $("session").addEventListener("change", (e) => selectSession(e.target.value, true));
  $("scrubber").addEventListener("input", (e) => selectIndex(Number(e.target.value), true));
  $("follow").addEventListener("change", (e) => {
    model.follow = e.target.checked;
    scheduleRender();
  });
  $("sequence").addEventListener("scroll", () => scheduleRender());
  $("timeline").addEventListener("scroll", () => {
    const s = model.sessions.get(model.selectedKey);
    const list = $("timeline");
    if (s && rendered.timelineKey === s.key) drawTimelineWindow(s, { scrollTop: list.scrollTop, height: list.clientHeight });
  });
  $("timeline").addEventListener("keydown", (e) => {
    if (e.key === "ArrowDown" || e.key === "ArrowRight") selectIndex(model.selectedIndex + 1, true);
    else if (e.key === "ArrowUp" || e.key === "ArrowLeft") selectIndex(model.selectedIndex - 1, true);
    else if (e.key === "Home") selectIndex(0, true);
    else if (e.key === "End") selectIndex(Number.MAX_SAFE_INTEGER, true);
    else return;
    e.preventDefault();
  });
  $("zoom-in").addEventListener("click", () => zoomBy(1.25));
  $("zoom-out").addEventListener("click", () => zoomBy(0.8));
  $("zoom-fit").addEventListener("click", () => {
    zoom = "fit";
    applyZoom();
  });
  window.addEventListener("resize", () => {
    if (zoom === "fit") applyZoom();
  });
  $("allow").addEventListener("click", () => answer("allow"));
  $("deny").addEventListener("click", () => answer("deny"));
  $("trace-input").addEventListener("change", (e) => {
    if (e.target.files && e.target.files.length) openFiles([...e.target.files]);
    e.target.value = "";
  });
  const drop = $("drop");
  let depth = 0;
  document.addEventListener("dragenter", (e) => {
    if (!e.dataTransfer || ![...e.dataTransfer.types].includes("Files")) return;
    depth++;
    drop.hidden = false;
  });
  document.addEventListener("dragleave", () => {
    depth = Math.max(0, depth - 1);
    if (depth === 0) drop.hidden = true;
  });
  document.addEventListener("dragover", (e) => e.preventDefault());
  document.addEventListener("drop", (e) => {
    e.preventDefault();
    depth = 0;
    drop.hidden = true;
    if (e.dataTransfer && e.dataTransfer.files.length) openFiles([...e.dataTransfer.files]);
  });
  // The time gauge of a live run keeps moving between events.
  setInterval(() => {
    const s = model.sessions.get(model.selectedKey);
    if (s && s.kind !== "actor" && !s.ended && model.follow) renderGauges(s);
  }, 250);
  warmUpLayout();
  connect();
  render();
}

start();
