import { relative } from "node:path";
import ts from "typescript";
import { dist } from "./package-program.js";

/**
 * Every named type of this package that an exported declaration mentions (a parameter, a field, a return type, a
 * base), followed through those types in turn, with the declaration that mentions it first. A consumer can write a
 * value of the exported API only if it can name these types too.
 */
export function referencedTypes(program: ts.Program, entries: readonly string[]): Map<ts.Symbol, string> {
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
  for (const entry of entries) {
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
