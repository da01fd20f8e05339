// The chart pane: the selected session's chart laid out by ELK (in a worker) and drawn, then painted with the
// selected step (current and visited states, arrows taken, events the current states accept); zoom and scroll.

import { elkGraph, SIZES } from "./chart-graph.js";
import { statesOf } from "./chart-model.js";
import { chartSvg } from "./chart-svg.js";
import { $, textElement } from "./dom.js";
import { scheduleRender } from "./frame.js";
import { addProblem, model, rendered } from "./state.js";
import { setAttr } from "./virtual-rows.js";

export async function renderChart(s) {
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

export function zoomBy(factor) {
  const current = Number($("chart").dataset.zoom) || 1;
  zoom = Math.min(4, Math.max(0.2, current * factor));
  applyZoom();
}

/** Keeps the current state in view in a chart larger than its pane. */
export function revealCurrent() {
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
export function warmUpLayout() {
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

/** Back to fitting the chart to its pane. */
export function zoomFit() {
  zoom = "fit";
  applyZoom();
}

/** On a resize, a fitted chart is fitted again. */
export function refit() {
  if (zoom === "fit") applyZoom();
}
