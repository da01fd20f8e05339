// The sequence view: the events between the actors of one actor tree (a root and everything it spawned or invoked),
// one lifeline per actor, one arrow per event in the order they were sent. Selecting an event shows its payload and
// the snapshot of its target just before and just after it. Every text goes in as textContent.

import { rowWindow, setAttr, VirtualRows } from "./virtual-rows.js";

const NS = "http://www.w3.org/2000/svg";
const COLUMN = 150;
const ROW = 26;
const OUTSIDE = "(outside)";

/** The actors of the tree `session` belongs to, root first, and the events sent to or from them, in order. */
export function sequenceOf(session, sessions, events) {
  const actorKey = (id) => `actor:${id}`;
  let root = session;
  for (let guard = 0; root.parentId && sessions.has(actorKey(root.parentId)) && guard < 1000; guard++) root = sessions.get(actorKey(root.parentId));
  const tree = [root];
  const ids = new Set([root.id]);
  for (let i = 0; i < tree.length; i++) {
    for (const s of sessions.values()) {
      if (s.kind === "actor" && s.parentId === tree[i].id && !ids.has(s.id)) {
        ids.add(s.id);
        tree.push(s);
      }
    }
  }
  const list = events.filter((e) => ids.has(e.target) || (e.source !== undefined && ids.has(e.source)));
  const outside = list.some((e) => e.source === undefined || !ids.has(e.source));
  const lifelines = [...(outside ? [{ id: OUTSIDE, name: "outside" }] : []), ...tree.map((s) => ({ id: s.id, name: s.name || s.id }))];
  return { root, lifelines, events: list };
}

/**
 * The snapshots of the event's target just before and just after it handled the event. In-process, the steps an
 * event caused carry its number: exact. Over the WebSocket there is none: the n-th event of a type sent to an actor is
 * taken to be the n-th it handled (its mailbox is first in, first out; an event that changed nothing has no step,
 * which can shift the match). No step at all: `before` is the target as it was when the event was sent.
 */
export function aroundEvent(target, event, events) {
  if (!target) return { before: undefined, after: undefined };
  const entries = target.entries;
  let steps = [];
  if (event.eventId !== undefined) {
    steps = entries.filter((entry) => entry.eventId === event.eventId);
  } else {
    const nth = events.filter((e) => e.target === event.target && e.type === event.type && e.order < event.order).length;
    // Where the target started handling an event of this type: its first step on it (microsteps that follow on the
    // same event belong to the same handling).
    const starts = [];
    for (let i = 0; i < entries.length; i++) {
      if (entries[i].event === event.type && !(i > 0 && entries[i - 1].event === event.type && entries[i].taken)) starts.push(i);
    }
    const start = starts[nth];
    if (start !== undefined && entries[start].order > event.order) {
      let end = start;
      while (end + 1 < entries.length && entries[end + 1].event === event.type && entries[end + 1].taken) end++;
      steps = entries.slice(start, end + 1);
    }
  }
  if (steps.length === 0) {
    let before;
    for (const entry of entries) if (entry.order < event.order) before = entry;
    return { before, after: undefined };
  }
  return { before: entries[steps[0].index - 1], after: steps[steps.length - 1] };
}

function svgEl(tag, attrs) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

/** Rows drawn above and below the visible ones: the list is virtualised (only those rows are in the DOM). */
const OVERSCAN = 10;

/**
 * Draws the view into `host` (the scrolling box): a header of lifelines and a listbox of events, each row an arrow
 * between them. Only the rows in view and a margin are drawn, between spacers as tall as the rest; a redraw builds
 * only the rows that came into view, and the header only when the lifelines change.
 */
export class SequenceView {
  constructor(host, onSelect) {
    this.host = host;
    this.onSelect = onSelect;
    this.shape = undefined;
  }

  /** `view` is `{ scrollTop, height }` of the host, read before this frame wrote anything (no forced layout). */
  draw(sequence, selectedOrder, view) {
    const shape = `${sequence.root.key}|${sequence.lifelines.map((l) => l.id).join(",")}`;
    if (shape !== this.shape) this.build(sequence, shape, view.scrollTop);
    const count = sequence.events.length;
    const { first, last } = rowWindow(view.scrollTop, view.height, count, ROW, OVERSCAN);
    const size = String(count);
    const selected = String(selectedOrder);
    this.rows.draw(
      count,
      first,
      last,
      (index) => this.row(sequence.events[index], index),
      (index, el) => el.dataset.order === String(sequence.events[index].order),
      (index, el) => {
        setAttr(el, "aria-selected", el.dataset.order === selected ? "true" : "false");
        setAttr(el, "aria-setsize", size);
      },
    );
    return { first, last };
  }

  /**
   * The parts that change only with the lifelines: the arrow head, the header and the empty list. `scrollTop` is
   * the host's, read at the start of the frame: reading it here, after this frame's writes, would lay the page out.
   */
  build(sequence, shape, scrollTop) {
    this.shape = shape;
    this.column = new Map(sequence.lifelines.map((l, i) => [l.id, i]));
    this.lifelines = sequence.lifelines.length;
    this.width = Math.max(1, sequence.lifelines.length) * COLUMN;
    const header = document.createElement("div");
    header.className = "sequence-head";
    header.style.width = `${this.width}px`;
    for (const l of sequence.lifelines) {
      const name = document.createElement("span");
      name.textContent = l.name;
      name.dataset.lifeline = l.id;
      name.style.width = `${COLUMN}px`;
      header.append(name);
    }
    const list = document.createElement("ol");
    list.className = "sequence-events";
    list.setAttribute("role", "listbox");
    list.setAttribute("aria-label", "events");
    list.tabIndex = 0;
    list.style.width = `${this.width}px`;
    const defs = svgEl("svg", { width: 0, height: 0, "aria-hidden": "true" });
    const marker = svgEl("marker", { id: "seq-head", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto" });
    marker.append(svgEl("path", { d: "M0,0 L10,5 L0,10 z" }));
    const d = svgEl("defs", {});
    d.append(marker);
    defs.append(d);
    this.host.replaceChildren(defs, header, list);
    // Writing it lays the page out too: only when there is a position to keep.
    if (scrollTop > 0) this.host.scrollTop = scrollTop;
    this.rows = new VirtualRows(list, ROW);
  }

  row(e, index) {
    const column = this.column;
    const width = this.width;
    const from = column.get(e.source !== undefined && column.has(e.source) ? e.source : OUTSIDE) ?? 0;
    const to = column.get(e.target) ?? 0;
    const li = document.createElement("li");
    li.setAttribute("role", "option");
    li.setAttribute("aria-posinset", String(index + 1));
    li.dataset.order = String(e.order);
    li.dataset.type = e.type;
    li.dataset.from = e.source ?? OUTSIDE;
    li.dataset.to = e.target;
    const svg = svgEl("svg", { width, height: ROW, "aria-hidden": "true" });
    for (let i = 0; i < this.lifelines; i++) svg.append(svgEl("line", { x1: i * COLUMN + COLUMN / 2, y1: 0, x2: i * COLUMN + COLUMN / 2, y2: ROW, class: "lifeline" }));
    const x1 = from * COLUMN + COLUMN / 2;
    const x2 = to * COLUMN + COLUMN / 2;
    if (from === to) {
      svg.append(svgEl("path", { d: `M${x1},6 h22 v12 h-20`, class: "message", "marker-end": "url(#seq-head)" }));
    } else {
      svg.append(svgEl("path", { d: `M${x1},${ROW - 6} L${x2 + (x2 > x1 ? -4 : 4)},${ROW - 6}`, class: "message", "marker-end": "url(#seq-head)" }));
    }
    const label = svgEl("text", { x: from === to ? x1 + 28 : (x1 + x2) / 2, y: from === to ? 16 : ROW - 10, "text-anchor": from === to ? "start" : "middle", class: "message-label" });
    label.textContent = e.type;
    svg.append(label);
    li.append(svg);
    li.addEventListener("click", () => this.onSelect(e.order));
    return li;
  }
}
