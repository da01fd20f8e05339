import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { importsOf, sourceFiles, type SourceImport } from "./imports.js";

const src = join(import.meta.dirname, "..", "..", "src");

/**
 * The layers of src/, bottom first (docs/architecture.md draws them). A unit is a folder of src/ or a file at its
 * top. An import, run-time or type-only, may point into its own layer or one below, never above.
 */
const LAYERS: Array<{ name: string; units: string[] }> = [
  { name: "foundation", units: ["util", "errors", "logger.ts"] },
  { name: "models", units: ["models"] },
  { name: "recording", units: ["record"] },
  { name: "tools and permissions", units: ["tools", "permissions", "compaction", "hooks.ts", "events.ts", "sandbox"] },
  { name: "machine", units: ["machine", "actors"] },
  { name: "durable runs", units: ["durable"] },
  { name: "observers", units: ["observers"] },
  { name: "inspector", units: ["inspect"] },
  { name: "engine", units: ["options.ts", "store-option.ts", "event-bridge.ts", "run-observers.ts", "run-driver.ts", "query.ts", "prepare-run.ts", "run-settings.ts", "resume.ts", "session.ts", "agent-tool.ts", "mcp"] },
  { name: "debugging", units: ["debug"] },
  { name: "mcp server", units: ["mcp-server"] },
  { name: "telemetry", units: ["otel"] },
  { name: "scale-out", units: ["dbos"] },
  { name: "server", units: ["server"] },
  { name: "command line", units: ["cli", "demo"] },
  { name: "main entry", units: ["index.ts"] },
];

const unitOf = (file: string): string => (file.includes("/") ? file.slice(0, file.indexOf("/")) : file);
const layerIndex = new Map(LAYERS.flatMap((layer, i) => layer.units.map((unit) => [unit, i] as const)));

function layerOf(file: string): number {
  const index = layerIndex.get(unitOf(file));
  if (index === undefined) throw new Error(`src/${file}: its folder "${unitOf(file)}" has no layer; add it to LAYERS in test/architecture/layers.test.ts and to docs/architecture.md`);
  return index;
}

const describeImport = (i: SourceImport): string =>
  `src/${i.from} imports "${i.specifier}" (src/${i.to}, ${LAYERS[layerOf(i.to)].name}) from ${LAYERS[layerOf(i.from)].name}`;

/** Imports that point into a higher layer, run-time or type-only. */
export function upwardImports(imports: readonly SourceImport[]): string[] {
  return imports.flatMap((i) => {
    if (layerOf(i.to) <= layerOf(i.from)) return [];
    return [`${describeImport(i)}: ${i.typeOnly ? "a type import" : "a run-time import"} into a higher layer`];
  });
}

/** Cycles between units through their imports, run-time and type-only, each named by the imports that close it. */
export function unitCycles(imports: readonly SourceImport[]): string[] {
  const edges = new Map<string, Map<string, SourceImport>>();
  for (const i of imports) {
    const a = unitOf(i.from);
    const b = unitOf(i.to);
    if (a === b) continue;
    if (!edges.has(a)) edges.set(a, new Map());
    if (!edges.get(a)!.has(b)) edges.get(a)!.set(b, i);
  }
  // Tarjan's strongly connected components: a component of more than one unit is a cycle.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const cycles: string[] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    for (const w of edges.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      component.push(w);
    } while (w !== v);
    if (component.length < 2) return;
    const closing = component.flatMap((a) => [...(edges.get(a) ?? [])].filter(([b]) => component.includes(b)).map(([, i]) => `src/${i.from} imports "${i.specifier}"`));
    cycles.push(`${component.sort().join(" <-> ")}: ${closing.join("; ")}`);
  };
  for (const unit of edges.keys()) if (!index.has(unit)) visit(unit);
  return cycles;
}

const all = sourceFiles(src).flatMap((file) => importsOf(src, file));

describe("layers", () => {
  it("every file of src/ belongs to a layer", () => {
    for (const file of sourceFiles(src)) expect(() => layerOf(file)).not.toThrow();
  });

  it("no import points from a lower layer into a higher one", () => {
    expect(upwardImports(all)).toEqual([]);
  });

  it("no import cycle between folders, type-only imports included", () => {
    expect(unitCycles(all)).toEqual([]);
  });

  it("reads the real imports: recording is imported by the engine and imports nothing above it, types included", () => {
    const fromQuery = all.filter((i) => i.from === "query.ts" && i.to.startsWith("record/"));
    expect(fromQuery.length).toBeGreaterThan(0);
    const fromRecord = all.filter((i) => i.from.startsWith("record/"));
    expect(fromRecord.some((i) => i.typeOnly)).toBe(true);
    expect(fromRecord.filter((i) => !["record", "util", "errors", "models", "logger.ts"].includes(unitOf(i.to))).map((i) => `src/${i.from} imports "${i.specifier}"`)).toEqual([]);
  });

  it("names the file and the import that goes the wrong way", () => {
    const wrong: SourceImport[] = [
      { from: "record/format.ts", to: "debug/replay.ts", specifier: "../debug/replay.js", typeOnly: false },
      { from: "util/make-dir.ts", to: "machine/context.ts", specifier: "../machine/context.js", typeOnly: true },
      { from: "query.ts", to: "machine/context.ts", specifier: "./machine/context.js", typeOnly: true },
      // No upward import is allowed, not even a named type: the observers sit above the machine they observe.
      { from: "record/format.ts", to: "observers/observe.ts", specifier: "../observers/observe.js", typeOnly: true, names: ["EngineObserver"] },
      { from: "durable/stored-run.ts", to: "observers/observe.ts", specifier: "../observers/observe.js", typeOnly: true, names: ["StateEntered"] },
      { from: "observers/trace-writer.ts", to: "machine/observe.ts", specifier: "../machine/observe.js", typeOnly: true },
      { from: "events.ts", to: "durable/run-store.ts", specifier: "./durable/run-store.js", typeOnly: true, names: ["RunStore"] },
    ];
    expect(upwardImports(wrong)).toEqual([
      'src/record/format.ts imports "../debug/replay.js" (src/debug/replay.ts, debugging) from recording: a run-time import into a higher layer',
      'src/util/make-dir.ts imports "../machine/context.js" (src/machine/context.ts, machine) from foundation: a type import into a higher layer',
      'src/record/format.ts imports "../observers/observe.js" (src/observers/observe.ts, observers) from recording: a type import into a higher layer',
      'src/durable/stored-run.ts imports "../observers/observe.js" (src/observers/observe.ts, observers) from durable runs: a type import into a higher layer',
      'src/events.ts imports "./durable/run-store.js" (src/durable/run-store.ts, durable runs) from tools and permissions: a type import into a higher layer',
    ]);
  });

  it("finds a cycle between folders and names the imports that close it", () => {
    const cycle: SourceImport[] = [
      { from: "tools/agent.ts", to: "query.ts", specifier: "../query.js", typeOnly: false },
      { from: "query.ts", to: "tools/define-tool.ts", specifier: "./tools/define-tool.js", typeOnly: false },
    ];
    expect(unitCycles(cycle)).toEqual(['query.ts <-> tools: src/query.ts imports "./tools/define-tool.js"; src/tools/agent.ts imports "../query.js"']);
  });

  it("finds a cycle closed by type-only imports alone", () => {
    const cycle: SourceImport[] = [
      { from: "tools/define-tool.ts", to: "permissions/types.ts", specifier: "../permissions/types.js", typeOnly: true },
      { from: "permissions/types.ts", to: "tools/define-tool.ts", specifier: "../tools/define-tool.js", typeOnly: true },
      { from: "permissions/policy.ts", to: "util/hash.ts", specifier: "../util/hash.js", typeOnly: false },
    ];
    expect(unitCycles(cycle)).toEqual(['permissions <-> tools: src/permissions/types.ts imports "../tools/define-tool.js"; src/tools/define-tool.ts imports "../permissions/types.js"']);
  });
});
