import { describe, expect, it } from "vitest";
import { createActor } from "xstate";
import { chartFromDefinition, machineChart } from "../../src/inspect/chart.js";
import { crossJumps, deep, deeper, guardsAndMore, parallelHistory, selfLoop, SHAPES } from "./fixtures/shapes.js";

const pairs = (chart: ReturnType<typeof machineChart>) => chart.edges.map((e) => `${e.from}>${e.to}${e.event ? ` ${e.event}` : ""}`);

/** How @statelyai/inspect sends a definition: the config as JSON, functions as `{ type: name }`, cut below `depth`. */
function asDefinition(config: unknown, depth = Infinity): string {
  const cut = (value: unknown, level: number): unknown => {
    if (typeof value === "function") return { type: (value as { name: string }).name };
    if (!value || typeof value !== "object") return value;
    if (level >= depth) return Array.isArray(value) ? "[Array]" : "[Object]";
    if (Array.isArray(value)) return value.map((v) => cut(v, level + 1));
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cut(v, level + 1)]));
  };
  return JSON.stringify(cut(config, 0));
}

describe("charts of every shape", () => {
  it("draws a self re-entry as a loop on the state", () => {
    const chart = machineChart(selfLoop.machine);
    expect(pairs(chart)).toContain("idle>idle AGAIN");
    expect(chart.anyStates).toEqual([]);
  });

  it("draws child → ancestor, #id targets and jumps between compound states from their real sources", () => {
    const chart = machineChart(crossJumps.machine);
    expect(pairs(chart)).toEqual(expect.arrayContaining(["l1>r2 JUMP", "l2>left UP", "l2>right AWAY", "r1>l2 BACK", "r2>l1 BACK", "r2>r1 NEXT"]));
  });

  it("names every state of 4-level nesting with its parent chain", () => {
    const chart = machineChart(deep.machine);
    const byName = new Map(chart.states.map((s) => [s.name, s]));
    expect(byName.get("d")!.path).toEqual(["a", "b", "c", "d"]);
    expect(byName.get(chart.states.find((s) => s.id === byName.get("d")!.parent)!.name)!.name).toBe("c");
    expect(pairs(chart)).toContain("d>z OUT");
  });

  it("keeps history states with their kind and final states", () => {
    const chart = machineChart(parallelHistory.machine);
    const byName = new Map(chart.states.map((s) => [s.name, s]));
    expect(byName.get("hist")).toMatchObject({ type: "history", history: "shallow" });
    expect(byName.get("deepHist")).toMatchObject({ type: "history", history: "deep" });
    expect(byName.get("saved")!.type).toBe("final");
    expect(byName.get("on")!.type).toBe("parallel");
    expect(pairs(chart)).toEqual(expect.arrayContaining(["off>hist BACK", "off>deepHist RESUME"]));
  });

  it("shows guards as expressions, inline ones as `guard`, lists targetless transitions, descriptions and invoked actors", () => {
    const chart = machineChart(guardsAndMore.machine);
    const labels = chart.edges.filter((e) => e.from === "start").map((e) => e.title);
    expect(labels).toEqual(expect.arrayContaining(["GO [isReady && !isBlocked]", "GO [isSlow || isBlocked]"]));
    expect(labels.some((l) => /^GO \[[^\]]*\]$/.test(l) && !l.includes("[Object]"))).toBe(true);
    for (const e of chart.edges) expect(e.label).not.toContain("[Object]");
    const start = chart.states.find((s) => s.name === "start")!;
    expect(start.internal).toEqual(["TICK"]);
    expect(start.description).toBe("waits for GO");
    expect(chart.states.find((s) => s.name === "loading")!.invokes).toEqual(["load"]);
    expect(chart.edges.filter((e) => e.from === "check").map((e) => e.kind).sort()).toEqual(["after", "always", "always"]);
  });

  it("draws every shape from its definition as @statelyai/inspect sends it, with the same states", () => {
    for (const [name, shape] of Object.entries(SHAPES)) {
      const direct = machineChart(shape.machine);
      const sent = chartFromDefinition(asDefinition(shape.machine.config));
      expect(sent.states.map((s) => s.name), name).toEqual(direct.states.map((s) => s.name));
      expect(sent.cut, name).toBeUndefined();
    }
  });

  it("draws what it can of a definition cut by the client's depth limit and says where it was cut", () => {
    // @statelyai/inspect's default depth of 10 cuts the transitions of the deepest states of `deep` and `player`.
    for (const shape of [deep, parallelHistory, crossJumps]) {
      for (const depth of [4, 6, 8, 10]) {
        const chart = chartFromDefinition(asDefinition(shape.machine.config, depth));
        expect(chart.states.length, `${shape.machine.id} cut at ${depth}`).toBeGreaterThan(0);
        for (const e of chart.edges) expect(e.label).not.toMatch(/\[(Object|Array)\]/);
        if (depth <= 4) expect(chart.cut?.length, `${shape.machine.id} cut at ${depth}`).toBeGreaterThan(0);
      }
    }
    const chart = chartFromDefinition(asDefinition(deep.machine.config, 9));
    expect(chart.cut).toEqual(expect.arrayContaining([expect.stringMatching(/^states\.a\.states\.b\.states\.c\.states\.d/)]));
    // At @statelyai/inspect's default depth, `deeper` is cut and still drawn whole but for what was cut.
    const real = chartFromDefinition(asDefinition(deeper.machine.config, 10));
    expect(real.cut?.length).toBeGreaterThan(0);
    expect(real.states.map((s) => s.name)).toEqual(["a", "b", "c", "d", "e", "z"]);
  });

  it("every shape runs through its steps in XState as the fixtures say (the browser tests rely on them)", () => {
    for (const [name, shape] of Object.entries(SHAPES)) {
      const chart = machineChart(shape.machine);
      const actor = createActor(shape.machine).start();
      for (const [event, current] of shape.steps) {
        if (event) actor.send(event);
        const leaves = actor.getSnapshot()._nodes.filter((n: { type: string }) => n.type === "atomic" || n.type === "final").map((n: { path: string[] }) => chart.states.find((s) => s.path.join(".") === n.path.join("."))!.name);
        expect(leaves.sort(), `${name} after ${event?.type ?? "start"}`).toEqual([...current].sort());
      }
      actor.stop();
    }
  });
});
