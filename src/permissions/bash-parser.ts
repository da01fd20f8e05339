import fs from "node:fs";
import { createRequire } from "node:module";
import { Language, Parser, type Node } from "web-tree-sitter";

export type { Node as SyntaxNode } from "web-tree-sitter";

// tree-sitter's bash grammar, compiled to WebAssembly: a real bash parser, loaded once when this module is first
// imported (top-level await) so that parsing itself stays synchronous, as the permission policy's `evaluate` is.
const require = createRequire(import.meta.url);
await Parser.init();
const grammar = Language.loadSync(new WebAssembly.Module(fs.readFileSync(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"))));
const parser = new Parser();
parser.setLanguage(grammar);

/**
 * Parses a command line and hands its syntax tree to `use`; the tree lives in WebAssembly memory and is freed when
 * `use` returns, so nothing of it may be kept. A line that doesn't parse still gets a tree, with `hasError` set.
 */
export function withBashTree<T>(text: string, use: (root: Node) => T): T {
  const tree = parser.parse(text);
  if (!tree) throw new Error("the bash parser returned no tree");
  try {
    return use(tree.rootNode);
  } finally {
    tree.delete();
  }
}
