// The timeline: one row per step of the selected session, virtualised (only the rows in view are in the DOM), and
// the scrubber. Selecting a row is time travel: the whole page shows that step.

import { formatTime, snippet, $, textElement } from "./dom.js";
import { model, rendered, selectIndex } from "./state.js";
import { rowWindow, setAttr, VirtualRows } from "./virtual-rows.js";

/** Height of a timeline row in px (style.css gives the rows this height): the list is virtualised by it. */
const ROW_HEIGHT = 22;
/** Rows drawn above and below the visible ones. */
const OVERSCAN = 12;

/**
 * The timeline is virtualised: only the rows in view (and a margin) are in the DOM, between two spacers that keep the
 * list as tall as all its rows, so thousands of steps cost a few dozen elements.
 */
export function renderTimeline(s, box) {
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
  const view = { ...box };
  // The list grows with its rows up to its max height: this frame's rows make it this tall.
  if (box.rowsHeight !== undefined) view.height = Math.max(box.height, Math.min(box.rowsHeight, count * ROW_HEIGHT));
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

/**
 * Draws the rows in view of the timeline scrolled as `view` says (`{ scrollTop, height, rowsHeight? }`; `rowsHeight`,
 * when given, is the height to fill with rows: the list's full height while it is still growing).
 */
export function drawTimelineWindow(s, view) {
  if (!timelineRows) return;
  const count = s.entries.length;
  // Following a stream, the newest rows are in view and every frame brings new ones: rows beyond the view would be
  // built only to be thrown away at the next frame.
  const pinned = model.follow && model.selectedIndex === count - 1;
  const { first, last } = rowWindow(view.scrollTop, view.rowsHeight ?? view.height, count, ROW_HEIGHT, pinned ? 0 : OVERSCAN);
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
    (i, row) => {
      fillRow(row, s, s.entries[i], start);
      row.builtAt = i === count - 1 ? s.version : undefined;
    },
  );
}

/** The texts of a row, in the order of its cells. */
function rowTexts(s, entry, start) {
  const t = Date.parse(entry.time);
  return [
    `#${entry.seq}`,
    formatTime(entry.time),
    Number.isFinite(t) && Number.isFinite(start) ? `+${((t - start) / 1000).toFixed(3)}s` : "",
    entry.turn !== undefined ? `turn ${entry.turn}` : "",
    entry.names.join(", ") || entry.status || "snapshot",
    summary(s, entry),
  ];
}

/** Makes a row built earlier show `entry`, writing only the texts that differ (each write lays its cell out again). */
function fillRow(li, s, entry, start) {
  setAttr(li, "data-index", String(entry.index));
  setAttr(li, "data-seq", String(entry.seq));
  setAttr(li, "data-transition-state", entry.names.join(","));
  setAttr(li, "aria-posinset", String(entry.index + 1));
  const texts = rowTexts(s, entry, start);
  const cells = li.children;
  for (let k = 0; k < texts.length; k++) if (cells[k].textContent !== texts[k]) cells[k].textContent = texts[k];
}

function timelineRow(s, entry, start) {
  const li = document.createElement("li");
  li.setAttribute("role", "option");
  li.dataset.index = String(entry.index);
  li.dataset.seq = String(entry.seq);
  li.dataset.transitionState = entry.names.join(",");
  const [seq, clock, rel, turn, name, summaryText] = rowTexts(s, entry, start);
  li.append(
    textElement("span", seq, "seq"),
    textElement("time", clock, "clock"),
    textElement("span", rel, "rel"),
    textElement("span", turn, "turn"),
    textElement("strong", name, "name"),
    textElement("span", summaryText, "summary"),
  );
  // The row may be filled with another step later (fillRow): the step is read when it is clicked.
  li.addEventListener("click", () => selectIndex(Number(li.dataset.index), true));
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
