// A machine's chart (as the server sends it) turned into the graph ELK lays out: states as nodes nested as the
// machine nests them, the start and end markers and "any state" nodes inside their compound state, one edge per
// arrow with its label sized so that ELK keeps labels apart. Pure: measuring text is passed in.

/** Sizes, in px, shared with chart-svg.js so that what is drawn fits what was laid out. */
export const SIZES = {
  font: 12,
  line: 16,
  padX: 10,
  padY: 8,
  header: 22,
  marker: 14,
  history: 28,
};

/** The lines a state shows under its name: its description, the actors it invokes, its targetless transitions. */
export function stateLines(state) {
  const lines = [];
  if (state.description) lines.push({ text: state.description, kind: "description" });
  for (const src of state.invokes || []) lines.push({ text: `invoke: ${src}`, kind: "invoke" });
  for (const t of state.internal || []) lines.push({ text: `↺ ${t}`, kind: "internal" });
  return lines;
}

/** The label a state is drawn with: its own key (its name may be a dotted path when keys repeat). */
export function stateTitle(state) {
  return state.path[state.path.length - 1] || state.name;
}

/**
 * The ELK graph of a chart. `measure(text)` gives a text's width in px at SIZES.font. Every coordinate ELK returns
 * is absolute (shapeCoords / edgeCoords ROOT), so the drawing needs no offsets.
 */
export function elkGraph(chart, measure) {
  const byId = new Map(chart.states.map((s) => [s.id, s]));
  const byName = new Map(chart.states.map((s) => [s.name, s]));
  const anyByName = new Map(chart.anyStates.map((a) => [a.name, a]));
  const children = new Map(); // container id ("" for the machine) → ELK nodes
  const put = (container, node) => {
    if (!children.has(container)) children.set(container, []);
    children.get(container).push(node);
  };
  const compound = (s) => s.type === "compound" || s.type === "parallel";

  for (const s of chart.states) {
    const lines = stateLines(s);
    const width = Math.max(measure(stateTitle(s)), ...lines.map((l) => measure(l.text))) + 2 * SIZES.padX;
    const node = { id: s.id };
    if (s.type === "history") {
      node.width = SIZES.history;
      node.height = SIZES.history;
    } else if (compound(s)) {
      // ELK sizes a compound node around its children; the padding keeps room for its header.
      node.layoutOptions = {
        "elk.padding": `[top=${SIZES.header + lines.length * SIZES.line + SIZES.padY},left=${SIZES.padX},bottom=${SIZES.padY},right=${SIZES.padX}]`,
        "elk.nodeSize.constraints": "MINIMUM_SIZE",
        "elk.nodeSize.minimum": `(${Math.ceil(width)},${SIZES.header + lines.length * SIZES.line + 2 * SIZES.padY})`,
      };
    } else {
      node.width = Math.ceil(width);
      node.height = SIZES.line + 2 * SIZES.padY + lines.length * SIZES.line;
    }
    put(s.parent || "", node);
  }
  for (const a of chart.anyStates) {
    put(a.parent || "", { id: a.id, width: Math.ceil(measure(anyStateText(a, byId)) + 2 * SIZES.padX), height: SIZES.line + 2 * SIZES.padY });
  }

  // One start marker per container with an initial arrow, one end marker per container with a final state.
  const markers = new Map();
  const marker = (kind, container) => {
    const id = `${kind}:${container || "root"}`;
    if (!markers.has(id)) {
      markers.set(id, { id, kind, container });
      put(container, { id, width: SIZES.marker, height: SIZES.marker });
    }
    return id;
  };
  const endpoint = (name, other, kind) => {
    if (name === "[*]") {
      const near = byName.get(other);
      return marker(kind === "initial" ? "start" : "end", near ? near.parent || "" : "");
    }
    return (byName.get(name) || anyByName.get(name) || {}).id;
  };

  const arrows = new Map();
  for (const e of chart.edges) {
    if (!arrows.has(e.arrow)) arrows.set(e.arrow, []);
    arrows.get(e.arrow).push(e);
  }
  const edges = [];
  for (const [arrow, list] of arrows) {
    const first = list[0];
    const source = endpoint(first.from, first.to, first.kind);
    const target = endpoint(first.to, first.from, first.kind);
    if (!source || !target) continue;
    const lines = list.map((e) => e.label).filter(Boolean);
    const edge = { id: `edge${arrow}`, sources: [source], targets: [target], arrow };
    if (lines.length) {
      edge.labels = [{ id: `label${arrow}`, text: lines.join("\n"), width: Math.ceil(Math.max(...lines.map(measure)) + 8), height: lines.length * SIZES.line + 4 }];
    }
    edges.push(edge);
  }

  const build = (id) => {
    const nodes = children.get(id) || [];
    for (const n of nodes) if (children.has(n.id)) n.children = build(n.id);
    return nodes;
  };
  return {
    id: "root",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "DOWN",
      "elk.hierarchyHandling": "INCLUDE_CHILDREN",
      "elk.edgeRouting": "ORTHOGONAL",
      "elk.layered.spacing.nodeNodeBetweenLayers": "36",
      "elk.spacing.nodeNode": "28",
      "elk.spacing.edgeNode": "14",
      "elk.spacing.edgeEdge": "10",
      "elk.spacing.edgeLabel": "4",
      "elk.layered.edgeLabels.sideSelection": "ALWAYS_UP",
      "elk.padding": "[top=12,left=12,bottom=12,right=12]",
      "elk.json.shapeCoords": "ROOT",
      "elk.json.edgeCoords": "ROOT",
      // A large machine trades a few crossings for time: 200 states lay out in well under 2 s.
      ...(chart.states.length > 60 ? { "elk.layered.thoroughness": "3", "elk.layered.crossingMinimization.greedySwitch.type": "OFF" } : {}),
    },
    children: build(""),
    edges,
    markers: [...markers.values()],
  };
}

export function anyStateText(any, byId) {
  const owner = any.parent ? byId.get(any.parent) : undefined;
  return owner ? `any ${stateTitle(owner)} state` : "any state";
}
