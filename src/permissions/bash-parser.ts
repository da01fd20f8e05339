import fs from "node:fs";
import { createRequire } from "node:module";
import v8 from "node:v8";
import type { Node, Parser } from "web-tree-sitter";

export type { Node as SyntaxNode } from "web-tree-sitter";

// tree-sitter's bash grammar, compiled to WebAssembly: a real bash parser. Loading it is asynchronous (the
// WebAssembly runtime starts with a promise) and takes tens of milliseconds, so it is not done when statecraft is
// imported (a top-level await would also stop `require("statecraft")`): `loadBashParser()` loads it once, and
// everything that evaluates permissions waits for it first, so that parsing itself stays synchronous, as the
// permission policy's `evaluate` is.
const require = createRequire(import.meta.url);
let parser: Parser | undefined;
let loading: Promise<void> | undefined;

/** Loads the bash parser, once per process; later calls return the same promise. Rejects when the grammar won't load. */
export function loadBashParser(): Promise<void> {
  loading ??= (async () => {
    const { Language, Parser } = await import("web-tree-sitter");
    await Parser.init();
    const grammar = baselineOnly(() => Language.loadSync(new WebAssembly.Module(fs.readFileSync(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm")))));
    const ready = new Parser();
    ready.setLanguage(grammar);
    parser = ready;
  })();
  return loading;
}

/**
 * Runs `load` with V8's optimizing WebAssembly compiler off, on Node 20 only. There, loading the grammar set V8
 * compiling it with TurboFan on background threads, seconds of CPU that every process then waited for as it exited
 * (a one-command CLI run took 8 s instead of 2); the baseline compiler parses a command line just as well. Node 22
 * and later compile it lazily and don't wait. The flag is put back at once: the rest of the process is untouched.
 */
function baselineOnly<T>(load: () => T): T {
  if (Number(process.versions.node.split(".")[0]) > 20) return load();
  v8.setFlagsFromString("--liftoff-only");
  try {
    return load();
  } finally {
    v8.setFlagsFromString("--no-liftoff-only");
  }
}

/**
 * Parses a command line and hands its syntax tree to `use`; the tree lives in WebAssembly memory and is freed when
 * `use` returns, so nothing of it may be kept. A line that doesn't parse still gets a tree, with `hasError` set.
 * Throws when `loadBashParser()` has not finished: a command is never decided without its parse.
 */
export function withBashTree<T>(text: string, use: (root: Node) => T): T {
  if (!parser) {
    throw new Error(
      "the bash parser is not loaded yet: `await policy.ready` before evaluating a shell command with a policy from createPermissionPolicy() (query() waits for it itself)",
    );
  }
  const tree = parser.parse(text);
  if (!tree) throw new Error("the bash parser returned no tree");
  try {
    return use(tree.rootNode);
  } finally {
    tree.delete();
  }
}
