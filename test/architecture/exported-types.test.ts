import { join, relative } from "node:path";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const dist = join(root, "dist");
const ENTRIES = ["index.d.ts", "debug/index.d.ts", "inspect/index.d.ts", "dbos/index.d.ts"].map((file) => join(dist, file));

/**
 * The engine's internals, by the files that declare them: the machine's context, events and typed machine, the work
 * its states ask of the actors, its guards and actions. The public API names none of them (directly or through a type
 * it mentions), so a change to the engine's context never breaks a program using statecraft.
 */
const INTERNAL = ["machine/", "actors/", "guards/", "permissions/recheck.d.ts", "compaction/estimate.d.ts"];
const internal = (file: string) => {
  const path = relative(dist, file);
  return INTERNAL.some((prefix) => path.startsWith(prefix));
};

/**
 * Every named type of this package that an exported declaration mentions (a parameter, a field, a return type, a
 * base), followed through those types in turn, with the declaration that mentions it first. A consumer can write a
 * value of the exported API only if it can name these types too.
 */
function referencedTypes(program: ts.Program): Map<ts.Symbol, string> {
  const checker = program.getTypeChecker();
  const seen = new Map<ts.Symbol, string>();
  const queue: ts.Symbol[] = [];
  const own = (symbol: ts.Symbol) => {
    const file = symbol.declarations?.[0]?.getSourceFile().fileName;
    return file !== undefined && file.startsWith(dist) && !file.includes("node_modules");
  };
  const resolve = (symbol: ts.Symbol) => (symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol);
  const note = (symbol: ts.Symbol | undefined, from: string) => {
    if (!symbol) return;
    const target = resolve(symbol);
    if (target.flags & ts.SymbolFlags.TypeParameter || !own(target) || seen.has(target)) return;
    if (!(target.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Class | ts.SymbolFlags.Enum))) return;
    seen.set(target, from);
    queue.push(target);
  };
  const visit = (node: ts.Node, from: string): void => {
    // What a class keeps private is not part of its contract.
    if (ts.canHaveModifiers(node) && ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword)) return;
    if (ts.isTypeReferenceNode(node)) note(checker.getSymbolAtLocation(node.typeName), from);
    else if (ts.isExpressionWithTypeArguments(node)) note(checker.getSymbolAtLocation(node.expression), from);
    else if (ts.isImportTypeNode(node)) {
      const type = checker.getTypeFromTypeNode(node);
      note(type.aliasSymbol ?? type.getSymbol(), from);
    }
    ts.forEachChild(node, (child) => visit(child, from));
  };
  for (const entry of ENTRIES) {
    const module = checker.getSymbolAtLocation(program.getSourceFile(entry)!)!;
    for (const exported of checker.getExportsOfModule(module)) queue.push(resolve(exported));
  }
  while (queue.length) {
    const symbol = queue.shift()!;
    for (const declaration of symbol.declarations ?? []) {
      if (!declaration.getSourceFile().fileName.startsWith(dist)) continue;
      visit(declaration, `${symbol.getName()} (${relative(dist, declaration.getSourceFile().fileName)})`);
    }
  }
  return seen;
}

describe("the exported types", () => {
  // One program for the file's tests: making it is most of their time.
  let program: ts.Program;
  let referenced: Map<ts.Symbol, string>;
  beforeAll(() => {
    program = ts.createProgram(ENTRIES, { strict: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, skipLibCheck: true, noEmit: true });
    referenced = referencedTypes(program);
  }, 120_000);

  it("every type an export mentions is exported too, so a consumer can name it", () => {
    const checker = program.getTypeChecker();
    const exported = new Set<ts.Symbol>();
    for (const entry of ENTRIES) {
      const module = checker.getSymbolAtLocation(program.getSourceFile(entry)!)!;
      for (const symbol of checker.getExportsOfModule(module)) exported.add(symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol);
    }
    // Sanity: the walk does reach the types under the exports.
    expect([...referenced.keys()].map((s) => s.getName())).toEqual(expect.arrayContaining(["ToolCall", "RecordedResponse", "InputValidator", "RecordedSettings"]));
    const missing = [...referenced].filter(([symbol]) => !exported.has(symbol)).map(([symbol, from]) => `${symbol.getName()}, mentioned by ${from}`);
    expect(missing, "types mentioned by exports but not exported: export them from src/index.ts (and their own entry)").toEqual([]);
  });

  it("no entry exports or mentions an engine internal (the machine's context, events, effects)", () => {
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
    for (const [symbol, from] of referenced) {
      const file = symbol.declarations?.[0]?.getSourceFile().fileName;
      if (file !== undefined && internal(file)) found.push(`${symbol.getName()} (${relative(dist, file)}), mentioned by ${from}`);
    }
    expect(found, "engine internals in the public API: give the public function a narrow type of its own").toEqual([]);
  });
});
