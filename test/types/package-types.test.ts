import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import { diagnostics, ENTRIES, packageProgram } from "./package-program.js";
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
    expect([...referenced.keys()].map((s) => s.getName())).toEqual(expect.arrayContaining(["ToolCall", "RecordedResponse", "InputValidator"]));
    const missing = [...referenced].filter(([symbol]) => !exported.has(symbol)).map(([symbol, from]) => `${symbol.getName()}, mentioned by ${from}`);
    expect(missing, "types mentioned by exports but not exported: export them from src/index.ts (and their own entry)").toEqual([]);
  });
});
