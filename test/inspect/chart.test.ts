import { describe, expect, it } from "vitest";
import { and, createMachine, not, or, setup } from "xstate";
import { engineMachine, ENGINE_STATES } from "../../src/index.js";
import { chartFromDefinition, machineChart, type MachineChart } from "../../src/inspect/chart.js";

const arrows = (chart: MachineChart) => chart.edges.map((e) => `${e.from} > ${e.to} : ${e.kind}${e.label ? ` ${e.label}` : ""}`);

/** How @statelyai/inspect sends a definition: the config as JSON, functions as `{ type: name }`. */
const asDefinition = (config: unknown) =>
  JSON.stringify(config, (_key, value: unknown) => (typeof value === "function" ? { type: (value as { name: string }).name } : value));

describe("machineChart", () => {
  it("draws every state of the engine and every arrow, including eventless and delayed ones", () => {
    const chart = machineChart(engineMachine);
    const atomic = chart.states.filter((s) => s.type === "atomic" || s.type === "final").map((s) => s.name);
    expect(atomic.sort()).toEqual([...ENGINE_STATES].sort());
    for (const state of ENGINE_STATES) expect(chart.mermaid).toContain(`"${state}" as `);
    // The eventless hops a directed graph of the machine leaves out.
    const always = chart.edges.filter((e) => e.kind === "always").map((e) => `${e.from}>${e.to}`);
    expect(always).toContain("parse_tool_call>validate_tool");
    expect(always).toContain("validate_tool>ask_permission");
    expect(always).toContain("append_tool_result>done");
    // The run's deadline: a delayed transition of the machine itself, from whichever state is active.
    expect(chart.edges.find((e) => e.kind === "after")).toMatchObject({ from: "*", to: "done", delay: "runDeadline", label: "after runDeadline" });
    // The effects actor's work results are completion arrows, named by the work in their titles.
    expect(arrows(chart)).toContain("model > parse_tool_call : done done [modelRequestedTools]");
    expect(chart.edges.find((e) => e.from === "model" && e.to === "parse_tool_call")?.title).toBe("done: callModel [modelRequestedTools]");
    expect(chart.edges.find((e) => e.from === "model" && e.to === "recover")).toMatchObject({ kind: "error", label: "error", title: "error: callModel" });
    expect(chart.anyStates).toEqual([{ id: "any0", name: "*" }]);
    // Guards in words, once each.
    expect(chart.guards).toContain("turnsExhausted");
    expect(chart.guards).toContain("toolCallsExhausted && batchHitToolLimit");
    expect(new Set(chart.guards).size).toBe(chart.guards.length);
    // Every arrow is a line of the text, numbered in text order (Mermaid numbers them the same way); transitions
    // between the same two states share an arrow whose label has a line for each.
    const arrowLines = chart.mermaid.split("\n").filter((l) => l.includes("-->"));
    expect(arrowLines.length).toBe(chart.arrows);
    chart.edges.forEach((e, i) => expect(e.index).toBe(i));
    const pairs = new Set(chart.edges.map((e) => `${e.from}>${e.to}`));
    expect(chart.arrows).toBe(pairs.size);
    for (let arrow = 0; arrow < chart.arrows; arrow++) {
      const edges = chart.edges.filter((e) => e.arrow === arrow);
      expect(new Set(edges.map((e) => `${e.from}>${e.to}`)).size).toBe(1);
      const labels = edges.map((e) => e.label).filter(Boolean);
      expect(arrowLines[arrow]).toContain(labels.length ? ` : ${labels.join("<br/>")}` : "");
    }
  });

  it("walks nested, parallel and final states, root transitions and every kind of arrow", () => {
    const machine = setup({
      guards: { ready: () => true, tired: () => false },
      actors: {},
    }).createMachine({
      id: "app",
      initial: "idle",
      on: { RESET: ".idle" },
      states: {
        idle: { on: { START: { target: "busy", guard: "ready" } } },
        busy: {
          initial: "work",
          on: { HALT: ".work" },
          onDone: "finished",
          states: {
            work: {
              after: { 500: "rest", slow: { target: "rest", guard: not("ready") } },
              always: { target: "rest", guard: and(["tired", or(["ready", "tired"])]) },
            },
            rest: { on: { "*": "work", DONE: "end" } },
            end: { type: "final" },
          },
        },
        both: {
          type: "parallel",
          states: { left: { initial: "l", states: { l: {} } }, right: { initial: "r", states: { r: {} } } },
        },
        finished: { type: "final" },
      },
    });
    const chart = machineChart(machine);
    expect(chart.machineId).toBe("app");
    expect(chart.states.map((s) => `${s.name}:${s.type}${s.parent ? `<${chart.states.find((p) => p.id === s.parent)!.name}` : ""}`)).toEqual([
      "idle:atomic",
      "busy:compound",
      "work:atomic<busy",
      "rest:atomic<busy",
      "end:final<busy",
      "both:parallel",
      "left:compound<both",
      "l:atomic<left",
      "right:compound<both",
      "r:atomic<right",
      "finished:final",
    ]);
    expect(arrows(chart)).toEqual([
      "[*] > work : initial",
      "work > rest : after after 500ms",
      "work > rest : after after slow [!ready]",
      "work > rest : always [tired && ready || tired]",
      "rest > work : event any event",
      "rest > end : event DONE",
      "end > [*] : final",
      "[*] > l : initial",
      "[*] > r : initial",
      "[*] > idle : initial",
      "idle > busy : event START [ready]",
      "busy.* > work : event HALT",
      "busy > finished : done done",
      "* > idle : event RESET",
      "finished > [*] : final",
    ]);
    expect(chart.anyStates.map((a) => a.name)).toEqual(["*", "busy.*"]);
    // The three transitions from work to rest share one arrow.
    expect(chart.edges.filter((e) => e.from === "work" && e.to === "rest").map((e) => e.arrow)).toEqual([1, 1, 1]);
    expect(chart.mermaid).toContain("s2 --> s3 : after 500ms<br/>after slow [!ready]<br/>[tired && ready || tired]");
    expect(chart.arrows).toBe(13);
    expect(chart.guards).toEqual(["!ready", "tired && ready || tired", "ready"]);
  });

  it("names a state by its path when its key repeats, and keeps odd keys out of the diagram's syntax", () => {
    const machine = createMachine({
      id: "m",
      initial: "a",
      states: {
        a: { initial: "idle", states: { idle: { on: { 'GO;"now"': "#m.b.idle" } } } },
        b: { initial: "idle", states: { idle: {}, "we{ird} <key>": {} } },
      },
    });
    const chart = machineChart(machine);
    expect(chart.states.map((s) => s.name)).toEqual(["a", "a.idle", "b", "b.idle", "we{ird} <key>"]);
    expect(chart.edges.find((e) => e.kind === "event")).toMatchObject({ from: "a.idle", to: "b.idle", event: 'GO;"now"' });
    for (const line of chart.mermaid.split("\n")) {
      const label = line.match(/^\s*state "(.*)" as \w+/)?.[1] ?? line.match(/-->\s*\S+\s*:\s*(.*)$/)?.[1];
      if (label !== undefined) expect(label, line).not.toMatch(/[;{}<>"#]/);
    }
    expect(chart.mermaid).toContain('state "we ird key" as s4');
    expect(chart.mermaid).toContain("s1 --> s3 : GO now");
  });

  it("refuses what is not a machine", () => {
    expect(() => machineChart({} as never)).toThrow(/XState v5 machine/);
  });
});

describe("chartFromDefinition", () => {
  it("draws the same chart from the JSON definition @statelyai/inspect sends as from the machine", () => {
    const config = {
      id: "light",
      initial: "green",
      context: { big: "x".repeat(10) },
      states: {
        green: { after: { 1000: "yellow" }, on: { EMERGENCY: { target: "red", guard: "isEmergency" } } },
        yellow: { always: { target: "red", guard: function hasWaited() { return true; } } },
        red: { on: { NEXT: "green" }, invoke: { src: "camera", onDone: "green", onError: "broken" } },
        broken: { type: "final" as const },
      },
    };
    const fromMachine = machineChart(createMachine(config as never));
    const fromJson = chartFromDefinition(asDefinition(config));
    expect(arrows(fromJson)).toEqual(arrows(fromMachine));
    expect(fromJson.states).toEqual(fromMachine.states);
    expect(fromJson.mermaid).toBe(fromMachine.mermaid);
    expect(arrows(fromJson)).toContain("yellow > red : always [hasWaited]");
    expect(arrows(fromJson)).toContain("red > green : done done");
  });

  it("says what is wrong with a definition it cannot read", () => {
    expect(() => chartFromDefinition("{ not json")).toThrow(/not JSON/);
    expect(() => chartFromDefinition("[1,2]")).toThrow(/machine config object/);
    expect(() => chartFromDefinition(JSON.stringify({ initial: "nowhere", states: { a: {} } }))).toThrow(/cannot be read as an XState v5 machine/);
  });
});
