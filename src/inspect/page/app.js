// The statecraft inspector page. Plain ES modules, no build step; it talks only to the server that served it
// (WebSocket on the same host and port, the trace at /trace) and lays charts out with the vendored ELK.
// Every piece of run data is put into the page as text (textContent), never as markup. This module draws a frame
// from the model (state.js) with the parts of the page, and wires the page's controls.

import { actorLabel, pickerOrder } from "./actor-tree.js";
import { refit, renderChart, revealCurrent, warmUpLayout, zoomBy, zoomFit } from "./chart-pane.js";
import { connect } from "./connection.js";
import { $, block, snippet, textElement } from "./dom.js";
import { onFrame, renderRequests, scheduleRender } from "./frame.js";
import { applyRecord } from "./records.js";
import { aroundEvent, SequenceView, sequenceOf } from "./sequence.js";
import { renderSelected } from "./selected.js";
import { answer, renderCalls, renderGauges, renderOutput, renderPermission, renderProblems } from "./side.js";
import { model, rendered, selectIndex, selectSession } from "./state.js";
import { drawTimelineWindow, renderTimeline } from "./timeline.js";
import { openFiles } from "./traces.js";

/** The scroll boxes' positions and heights, read once per frame before anything is written (no forced layout). */
function readGeometry() {
  const box = (el) => ({ scrollTop: el.scrollTop, height: el.clientHeight });
  const timeline = $("timeline");
  // A list shorter than its max-height grows with the rows drawn into it: the rows to draw are those that fit at
  // its full height, else a frame that adds rows leaves a gap above them until the next one.
  const full = parseFloat(getComputedStyle(timeline).maxHeight);
  const rowsHeight = Number.isFinite(full) ? full - 2 * timeline.clientTop : timeline.clientHeight;
  return { timeline: { ...box(timeline), rowsHeight: Math.max(timeline.clientHeight, rowsHeight) }, sequence: box($("sequence")) };
}

let geometry;

/**
 * A frame that draws the whole page and takes longer than this (ms: its script and the layout it forces) is too
 * much for one frame while a stream pours in: then a frame draws one half of the page — the chart and the timeline,
 * or the panels and the sequence view — and the next frame the other, until drawing it all is cheap again.
 */
const SPLIT_MS = 8;
/** What the last frames that drew the whole page, or each half, cost (ms). */
const cost = { whole: 0, first: 0, second: 0 };
/** Drawing in halves: the half the next frame draws, and how many frames had been asked for when the first was drawn. */
let half = "first";
let requestsAtFirst = 0;

function render() {
  geometry = readGeometry();
  const started = performance.now();
  const s = model.sessions.get(model.selectedKey);
  $("empty-hint").hidden = model.sessions.size > 0;
  if (s) {
    if (model.follow || model.selectedIndex < 0) model.selectedIndex = s.entries.length - 1;
    model.selectedIndex = Math.min(model.selectedIndex, s.entries.length - 1);
  }
  const drawn = half === "second" ? "second" : cost.whole > SPLIT_MS ? "first" : "whole";
  if (drawn !== "second") {
    renderSessions();
    // A session drawn for the first time builds its chart request, timeline and panels in this frame; its sequence
    // view (a row of SVG per event in view) waits for the next one, so that no one frame builds the whole page.
    const firstDraw = s !== undefined && rendered.timelineKey !== s.key;
    renderChart(s);
    renderTimeline(s, geometry.timeline);
    if (drawn === "whole") drawPanels(s, !(firstDraw && s.kind === "actor"));
  } else drawPanels(s, true);
  // Last: these lay the page out, which the writes above would otherwise have to redo mid-frame.
  if (rendered.timelineScroll !== undefined) {
    const list = $("timeline");
    list.scrollTop = rendered.timelineScroll;
    // Read back (the write laid the page out, so this costs nothing): the scroll event it causes is told apart.
    rendered.timelineScrolledTo = list.scrollTop;
    rendered.timelineScroll = undefined;
  }
  if (rendered.reveal) {
    rendered.reveal = false;
    revealCurrent();
  }
  cost[drawn] = performance.now() - started;
  if (drawn === "first") {
    half = "second";
    scheduleRender();
    requestsAtFirst = renderRequests();
  } else if (drawn === "second") {
    half = "first";
    // Back to whole frames once both halves together fit in one.
    cost.whole = cost.first + cost.second;
    // Records applied (or a click) since the first half was drawn have not been drawn there yet.
    if (renderRequests() !== requestsAtFirst) scheduleRender();
  }
}

/** The selected step's panel, the side panels and (unless `withEvents` is false: then at the next frame) the sequence view. */
function drawPanels(s, withEvents) {
  renderSelected(s);
  renderGauges(s);
  renderOutput(s);
  renderCalls(s);
  renderPermission();
  renderProblems();
  if (withEvents) renderEvents(s);
  else scheduleRender();
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
    // A scroll the last frame made (following a stream) shows the rows that frame drew: drawing them again here
    // would lay the page out once more before the next frame's own reads.
    if (list.scrollTop === rendered.timelineScrolledTo) return;
    rendered.timelineScrolledTo = undefined;
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
  $("zoom-fit").addEventListener("click", zoomFit);
  window.addEventListener("resize", refit);
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
  onFrame(applyRecord, render);
  warmUpLayout();
  connect();
  render();
}

start();
