// What the page knows of a chart, apart from drawing it: lookups of its states, the states a step stands for, the
// arrows a step took, the active states of a state value. Pure functions of the chart and the steps.

/** A chart with the lookups the page needs: states by id, name and path, each state's chain of ancestors. */
export function chartView(chartId, chart) {
  const byId = new Map(chart.states.map((s) => [s.id, s]));
  const byName = new Map(chart.states.map((s) => [s.name, s]));
  const byPath = new Map(chart.states.map((s) => [s.path.join("."), s]));
  const chainCache = new Map();
  const chain = (state) => {
    let out = chainCache.get(state.id);
    if (!out) {
      out = [];
      for (let s = state; s; s = s.parent ? byId.get(s.parent) : undefined) out.unshift(s);
      chainCache.set(state.id, out);
    }
    return out;
  };
  return { chartId, chart, byId, byName, byPath, chain };
}

/** The chart states a list of active paths or names stands for. */
export function statesOf(view, names) {
  if (!view) return [];
  return names.map((n) => view.byName.get(n) ?? view.byPath.get(n)).filter(Boolean);
}

/**
 * The chart's arrows a transition took. Exact when the transitions are known (microsteps of an in-process actor);
 * otherwise the arrows from the previous state (or an ancestor, or an "any state" node) into the state entered,
 * narrowed by the event when it is known, preferring the innermost source as XState does.
 */
export function takenEdges(view, prev, entry) {
  const edges = view.chart.edges;
  const out = new Set();
  const current = statesOf(view, entry.names);
  const markInitials = (entered) => {
    for (let j = 0; j + 1 < entered.length; j++) {
      const e = edges.find((x) => x.kind === "initial" && x.to === entered[j + 1].name);
      if (e) out.add(e.index);
    }
  };
  if (entry.taken && entry.taken.length) {
    for (const t of entry.taken) {
      for (const toPath of t.to) {
        const to = view.byPath.get(toPath);
        if (!to) continue;
        const from = t.from === "" ? undefined : view.byPath.get(t.from);
        const fromNames = from ? [from.name, `${from.name}.*`] : ["*"];
        for (const e of edges) {
          if (fromNames.includes(e.from) && e.to === to.name && e.event === t.event && (t.guard === undefined || e.guard === t.guard)) out.add(e.index);
        }
      }
    }
    for (const c of current) markInitials(view.chain(c).filter((s) => !prev || !statesOf(view, prev.names).some((p) => view.chain(p).includes(s))));
    return out;
  }
  const previous = prev ? statesOf(view, prev.names) : [];
  for (const c of current) {
    const chainC = view.chain(c);
    if (previous.length === 0) {
      const root = edges.find((x) => x.kind === "initial" && x.to === chainC[0].name);
      if (root) out.add(root.index);
      markInitials(chainC);
      continue;
    }
    for (const p of previous) {
      const chainP = view.chain(p);
      let common = 0;
      while (common < chainC.length && common < chainP.length && chainC[common] === chainP[common]) common++;
      let entered = chainC.slice(common);
      if (entered.length === 0) entered = [c];
      const target = entered[0].name;
      // An arrow into a history state of a compound state now active led here too: the history state stands for
      // the child (or, deep, the descendants) it remembered.
      const reaches = (e) => {
        if (e.to === target) return true;
        const to = view.byName.get(e.to);
        return !!to && to.type === "history" && chainC.some((s) => s.id === to.parent);
      };
      // Sources from the innermost: the state itself, then each ancestor (and its "any state" node), then the machine.
      const tiers = [];
      for (let k = chainP.length - 1; k >= 0; k--) tiers.push([chainP[k].name, `${chainP[k].name}.*`]);
      tiers.push(["*"]);
      for (const tier of tiers) {
        let candidates = edges.filter((e) => e.kind !== "initial" && e.kind !== "final" && tier.includes(e.from) && reaches(e));
        if (entry.event) {
          // A compound state's onDone is raised inside the step (its final child was reached on the step's event).
          const fitting = candidates.filter((e) => e.kind === "always" || e.event === entry.event || doneOfState(e));
          if (fitting.length) candidates = fitting;
          else continue;
        }
        if (candidates.length) {
          for (const e of candidates) {
            out.add(e.index);
            if (doneOfState(e)) for (const f of intoFinal(view, e, chainP, entry.event)) out.add(f);
          }
          break;
        }
      }
      markInitials(entered);
    }
  }
  return out;
}

/** Whether an edge is a compound or parallel state's onDone (`xstate.done.state.<id>`), raised by XState itself. */
function doneOfState(e) {
  return e.kind === "done" && e.event.startsWith("xstate.done.state.");
}

/**
 * The arrows that took the previous state into a final child of the state whose onDone `done` is, on `event`:
 * within one step, that is how the state got done (the final child itself was passed through, not reported).
 */
function intoFinal(view, done, chainP, event) {
  const owner = view.byName.get(done.from);
  if (!owner || !event) return [];
  const finals = new Set(view.chart.states.filter((s) => s.type === "final" && s.parent === owner.id).map((s) => s.name));
  const sources = new Set(chainP.flatMap((s) => [s.name, `${s.name}.*`]));
  return view.chart.edges.filter((e) => e.event === event && finals.has(e.to) && sources.has(e.from)).map((e) => e.index);
}

/** Active atomic states of a state value, as dotted paths. */
export function leafPaths(value, prefix = "") {
  if (typeof value === "string") return [prefix + value];
  if (value && typeof value === "object") {
    const out = [];
    for (const [key, child] of Object.entries(value)) {
      const sub = leafPaths(child, `${prefix}${key}.`);
      out.push(...(sub.length ? sub : [prefix + key]));
    }
    return out;
  }
  return [];
}
