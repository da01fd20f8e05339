import { relative } from "node:path";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import { diagnostics, dist, ENTRIES, packageProgram } from "./package-program.js";
import { referencedTypes } from "./referenced-types.js";

// Both checks read one program; building it is what takes time, so its limit is a hang's, not a speed target.
beforeAll(() => {
  packageProgram();
}, 180_000);

describe("the package's types, as a strict consumer uses them", () => {
  it("narrow trace lines and events, infer a tool's input from its schema, type hooks by the run's tools, give run.result", () => {
    expect(diagnostics(packageProgram())).toBe("");
  });
});

describe("the exported types", () => {
  it("every type an export mentions is exported too, so a consumer can name it", () => {
    const program = packageProgram();
    const checker = program.getTypeChecker();
    const exported = new Set<ts.Symbol>();
    for (const entry of ENTRIES) {
      const module = checker.getSymbolAtLocation(program.getSourceFile(entry)!)!;
      for (const symbol of checker.getExportsOfModule(module)) exported.add(symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol);
    }
    const referenced = referencedTypes(program, ENTRIES);
    // Sanity: the walk does reach the types under the exports.
    expect([...referenced.keys()].map((s) => s.getName())).toEqual(expect.arrayContaining(["ToolCall", "RecordedResponse", "InputValidator", "RecordedSettings", "ObservedRun"]));
    const missing = [...referenced].filter(([symbol]) => !exported.has(symbol)).map(([symbol, from]) => `${symbol.getName()}, mentioned by ${from}`);
    expect(missing, "types mentioned by exports but not exported: export them from src/index.ts (and their own entry)").toEqual([]);
  });

  it("no entry exports or mentions an engine internal (the machine's context, events, effects)", () => {
    const program = packageProgram();
    const checker = program.getTypeChecker();
    const found: string[] = [];
    for (const entry of ENTRIES) {
      const module = checker.getSymbolAtLocation(program.getSourceFile(entry)!)!;
      for (const exported of checker.getExportsOfModule(module)) {
        const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
        const file = target.declarations?.[0]?.getSourceFile().fileName;
        if (file !== undefined && internal(file)) found.push(`${target.getName()} (${relative(dist, file)}), exported by ${relative(dist, entry)}`);
      }
    }
    for (const [symbol, from] of referencedTypes(program, ENTRIES)) {
      const file = symbol.declarations?.[0]?.getSourceFile().fileName;
      if (file !== undefined && internal(file)) found.push(`${symbol.getName()} (${relative(dist, file)}), mentioned by ${from}`);
    }
    expect(found, "engine internals in the public API: give the public function a narrow type of its own").toEqual([]);
  });
});

/**
 * The engine's internals, by the files that declare them: the machine's context, events and typed machine, the work
 * its states ask of the actors, its guards and actions. The public API names none of them (directly or through a type
 * it mentions), so a change to the engine's context never breaks a program using statecraft.
 */
const INTERNAL = ["machine/", "actors/", "permissions/recheck.d.ts", "compaction/estimate.d.ts"];
function internal(file: string): boolean {
  const path = relative(dist, file);
  return INTERNAL.some((prefix) => path.startsWith(prefix));
}
