// Draws a chart laid out by ELK as SVG, with the page's hooks on it: data-state on every state node (history states
// too), data-any-state, path[data-edge] per arrow (data-edges, data-from, data-to, data-kind) and data-edge-label on
// its label. Every text goes in as textContent, never as markup.

import { anyStateText, SIZES, stateLines, stateTitle } from "./chart-graph.js";

const NS = "http://www.w3.org/2000/svg";

function el(tag, attrs = {}, text) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The SVG of a laid-out chart. `laid` is ELK's answer for elkGraph(chart), coordinates absolute. */
export function chartSvg(chart, laid, graph) {
  const byId = new Map(chart.states.map((s) => [s.id, s]));
  const anyById = new Map(chart.anyStates.map((a) => [a.id, a]));
  const markers = new Map((graph.markers || []).map((m) => [m.id, m]));
  const width = Math.ceil(laid.width || 100);
  const height = Math.ceil(laid.height || 60);
  const svg = el("svg", { xmlns: NS, viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": `statechart of ${chart.machineId}` });
  const defs = el("defs");
  const arrowHead = el("marker", { id: "arrow-head", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
  arrowHead.append(el("path", { d: "M0,0 L10,5 L0,10 z", class: "arrow-head" }));
  defs.append(arrowHead);
  svg.append(defs);

  const nodesLayer = el("g", { class: "nodes" });
  const edgesLayer = el("g", { class: "edges" });
  const labelsLayer = el("g", { class: "edge-labels" });
  svg.append(nodesLayer, edgesLayer, labelsLayer);

  const drawNode = (n, parentState) => {
    const state = byId.get(n.id);
    const any = anyById.get(n.id);
    const mark = markers.get(n.id);
    const { x = 0, y = 0, width: w = 0, height: h = 0 } = n;
    if (state) {
      const g = el("g", { class: `state state-${state.type}`, "data-state": state.name, "data-state-type": state.type, "aria-label": state.name });
      if (parentState && parentState.type === "parallel") g.setAttribute("data-region", "");
      if (state.history) g.setAttribute("data-history", state.history);
      if (state.type === "history") {
        g.append(el("circle", { cx: x + w / 2, cy: y + h / 2, r: w / 2 }));
        g.append(el("text", { x: x + w / 2, y: y + h / 2 + 4, "text-anchor": "middle", class: "history-mark" }, state.history === "deep" ? "H*" : "H"));
      } else {
        g.append(el("rect", { x, y, width: w, height: h, rx: state.type === "final" ? 4 : 8 }));
        if (state.type === "final") g.append(el("rect", { x: x + 3, y: y + 3, width: Math.max(0, w - 6), height: Math.max(0, h - 6), rx: 3, class: "final-inner" }));
        const compound = state.type === "compound" || state.type === "parallel";
        const titleY = compound ? y + SIZES.header - 6 : y + SIZES.padY + SIZES.font;
        g.append(el("text", { x: compound ? x + SIZES.padX : x + w / 2, y: titleY, "text-anchor": compound ? "start" : "middle", class: "state-title" }, stateTitle(state)));
        stateLines(state).forEach((line, i) => {
          g.append(el("text", { x: compound ? x + SIZES.padX : x + w / 2, y: titleY + (i + 1) * SIZES.line, "text-anchor": compound ? "start" : "middle", class: `state-line state-${line.kind}` }, line.text));
        });
      }
      nodesLayer.append(g);
      for (const c of n.children || []) drawNode(c, state);
      return;
    }
    if (any) {
      const g = el("g", { class: "any-state", "data-any-state": any.name });
      g.append(el("rect", { x, y, width: w, height: h, rx: 8 }));
      g.append(el("text", { x: x + w / 2, y: y + SIZES.padY + SIZES.font, "text-anchor": "middle" }, anyStateText(any, byId)));
      nodesLayer.append(g);
      return;
    }
    if (mark) {
      const g = el("g", { class: `marker marker-${mark.kind}`, "data-marker": mark.kind });
      g.append(el("circle", { cx: x + w / 2, cy: y + h / 2, r: w / 2 - (mark.kind === "end" ? 0 : 1) }));
      if (mark.kind === "end") g.append(el("circle", { cx: x + w / 2, cy: y + h / 2, r: w / 2 - 4, class: "marker-dot" }));
      nodesLayer.append(g);
    }
  };
  for (const n of laid.children || []) drawNode(n, undefined);

  const byArrow = new Map();
  for (const e of chart.edges) {
    if (!byArrow.has(e.arrow)) byArrow.set(e.arrow, []);
    byArrow.get(e.arrow).push(e);
  }
  for (const laidEdge of laid.edges || []) {
    const arrow = Number(String(laidEdge.id).slice(4));
    const edges = byArrow.get(arrow);
    if (!edges) continue;
    const d = (laidEdge.sections || [])
      .map((s) => [s.startPoint, ...(s.bendPoints || []), s.endPoint].map((p, i) => `${i ? "L" : "M"}${round(p.x)},${round(p.y)}`).join(" "))
      .join(" ");
    const kinds = [...new Set(edges.map((e) => e.kind))].join(" ");
    const path = el("path", {
      d,
      class: `edge kind-${edges[0].kind}`,
      "marker-end": "url(#arrow-head)",
      "data-edge": arrow,
      "data-edges": edges.map((e) => e.index).join(" "),
      "data-from": edges[0].from,
      "data-to": edges[0].to,
      "data-kind": kinds,
      "aria-label": `${edges[0].from} to ${edges[0].to}: ${edges.map((e) => e.title).join("; ")}`,
    });
    path.append(el("title", {}, edges.map((e) => e.title).join("\n")));
    edgesLayer.append(path);
    for (const label of laidEdge.labels || []) {
      const g = el("g", { class: "edge-label", "data-edge-label": arrow });
      g.append(el("rect", { x: label.x, y: label.y, width: label.width, height: label.height, rx: 3 }));
      const text = el("text", { x: label.x + label.width / 2, y: label.y + 2, "text-anchor": "middle" });
      String(label.text)
        .split("\n")
        .forEach((line, i) => {
          // The newline between lines keeps them apart in textContent (SVG collapses it when drawing).
          if (i > 0) text.append("\n");
          text.append(el("tspan", { x: label.x + label.width / 2, dy: i === 0 ? SIZES.font : SIZES.line }, line));
        });
      g.append(text);
      labelsLayer.append(g);
    }
  }
  return svg;
}

function round(n) {
  return Math.round(n * 10) / 10;
}
