import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative, sep } from "node:path";
import ts from "typescript";

/** One relative import of a source file: where it points and whether anything of it exists at run time. */
export interface SourceImport {
  /** The importing file, relative to src/ (`record/format.ts`). */
  from: string;
  /** The imported file, relative to src/, as a .ts path (`machine/states.ts`). */
  to: string;
  /** The specifier as written (`../machine/states.js`). */
  specifier: string;
  /** Only types are imported (`import type`, `export type`, `import("…").T` in a type): erased by the compiler. */
  typeOnly: boolean;
  /** The names imported (`import { a, b as c }` gives a, b), when the import names them; a namespace, default or bare import has none. */
  names?: string[];
}

/** Every .ts file under `root`, relative to it, with `/` separators. */
export function sourceFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts")) out.push(relative(root, path).split(sep).join("/"));
    }
  };
  walk(root);
  return out.sort();
}

/**
 * The relative imports of one file, read with TypeScript's parser: `import`/`export … from`, `import()` calls and
 * `import("…")` types. Package imports (`xstate`, `node:fs`) are not layers, so they are left out.
 */
export function importsOf(root: string, file: string): SourceImport[] {
  const text = readFileSync(join(root, file), "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: SourceImport[] = [];
  const add = (specifier: string, typeOnly: boolean, names?: string[]): void => {
    if (!specifier.startsWith(".")) return;
    const to = normalize(join(dirname(file), specifier)).split(sep).join("/").replace(/\.js$/, ".ts");
    found.push({ from: file, to, specifier, typeOnly, ...(names ? { names } : {}) });
  };
  const original = (e: ts.ImportSpecifier | ts.ExportSpecifier): string => (e.propertyName ?? e.name).text;
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const bindings = clause?.namedBindings;
      const names = clause && !clause.name && bindings && ts.isNamedImports(bindings) ? bindings.elements.map(original) : undefined;
      add(node.moduleSpecifier.text, importIsTypeOnly(node), names);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
      add(node.moduleSpecifier.text, node.isTypeOnly || (named !== undefined && named.length > 0 && named.every((e) => e.isTypeOnly)), named?.map(original));
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      const qualifier = node.qualifier;
      add(node.argument.literal.text, true, qualifier && ts.isIdentifier(qualifier) ? [qualifier.text] : undefined);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) {
      add(node.arguments[0].text, false);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function importIsTypeOnly(node: ts.ImportDeclaration): boolean {
  const clause = node.importClause;
  if (!clause) return false; // `import "./x.js"` runs the module
  if (clause.isTypeOnly) return true;
  if (clause.name) return false;
  const bindings = clause.namedBindings;
  return bindings !== undefined && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
}
