// Bundles src/ into dist/ with rolldown: one file per entry point, the code every entry needs in one shared chunk, and
// what loads on first use (the OpenAI SDK's request code, the inspector server, the replayer, MCP, the CLI's
// commands…) in chunks of their own. Why bundle: Node 20 spends most of `import("statecraft")` loading files one by
// one (resolve, read, compile, link each of ~120 modules); one chunk of the same code loads in a third of the time.
import { dirname, join, relative, sep } from "node:path";
import MagicString from "magic-string";
import { build } from "rolldown";

/**
 * The files a build writes, as `dist/<name>.js`, and the source each starts from. The first five are the package's
 * entry points (package.json "exports"), then the executable. The rest keep a few inner modules at the paths the
 * repository's benches and tests import them by (they are not exported: a consumer cannot reach them).
 */
export const ENTRIES = {
  index: "index.ts",
  "debug/index": "debug/index.ts",
  "inspect/index": "inspect/index.ts",
  "dbos/index": "dbos/index.ts",
  "mcp-server/index": "mcp-server/index.ts",
  "server/index": "server/index.ts",
  "otel/index": "otel/index.ts",
  "cli/main": "cli/main.ts",
  // For bench/ and test/ only.
  query: "query.ts",
  "machine/engine": "machine/engine.ts",
  "observers/observe": "observers/observe.ts",
  "machine/work-requests": "machine/work-requests.ts",
  "actors/effects": "actors/effects.ts",
  "record/jsonl-writer": "record/jsonl-writer.ts",
  "tools/builtin/grep": "tools/builtin/grep.ts",
  "inspect/chart": "inspect/chart.ts",
  "dbos/follow": "dbos/follow.ts",
  "dbos/run-key": "dbos/run-key.ts",
};

const MODULE_URL = "__statecraft_module_url__:";

/**
 * Keeps `import.meta.url` meaning what it meant before bundling: the URL of the module's own file in dist/, as if
 * each module were still a file there. Code finds its assets next to itself (the inspector's page, the demo's
 * sample, package.json) and `createRequire`s from itself; in a chunk, `import.meta.url` would be the chunk's URL.
 * A module's occurrences become a marker naming its dist/ path; once the chunk's place is known each marker becomes
 * that path relative to the chunk, resolved against the chunk's own URL at run time.
 */
function moduleUrls(src) {
  return {
    name: "statecraft-module-urls",
    transform(code, id) {
      if (!id.startsWith(src + sep) || !code.includes("import.meta.url")) return null;
      const own = relative(src, id).split(sep).join("/").replace(/\.ts$/, ".js");
      const s = new MagicString(code);
      s.replaceAll("import.meta.url", JSON.stringify(MODULE_URL + own));
      return { code: s.toString(), map: s.generateMap({ hires: true, source: id }) };
    },
    renderChunk(code, chunk) {
      if (!code.includes(MODULE_URL)) return null;
      const s = new MagicString(code);
      const marker = new RegExp(`(["'\`])${MODULE_URL}([^"'\`]+)\\1`, "g");
      for (const match of code.matchAll(marker)) {
        let path = relative(dirname(chunk.fileName), match[2]).split(sep).join("/");
        if (!path.startsWith(".")) path = "./" + path;
        s.overwrite(match.index, match.index + match[0].length, `new URL(${JSON.stringify(path)}, import.meta.url).href`);
      }
      return { code: s.toString(), map: s.generateMap({ hires: true }) };
    },
  };
}

/**
 * Bundles `root`/src into `root`/dist; returns the paths of the files written. Two passes: the first splits the code
 * rolldown's way and finds every module the main entry loads at once (its chunk and the chunks those import); the
 * second puts exactly those into one `core` chunk, and leaves the rest split as before, so nothing lazy becomes eager.
 */
export async function bundle(root) {
  const src = join(root, "src");
  const input = Object.fromEntries(Object.entries(ENTRIES).map(([name, file]) => [name, join(src, file)]));
  const options = {
    input,
    cwd: root,
    platform: "node",
    // Every package (and node: module) stays an import: an installed statecraft shares them with its user.
    external: (id) => !id.startsWith(".") && !id.startsWith("/") && !id.startsWith("\0"),
    resolve: { extensionAlias: { ".js": [".ts", ".js"] } },
    plugins: [moduleUrls(src)],
  };
  const output = {
    format: "esm",
    entryFileNames: "[name].js",
    chunkFileNames: "chunks/[name]-[hash].js",
    sourcemap: true,
  };

  const first = await build({ ...options, write: false, output });
  const chunks = new Map(first.output.filter((c) => c.type === "chunk").map((c) => [c.fileName, c]));
  const core = new Set();
  const taken = new Set();
  const take = (chunk) => {
    // Chunks may import each other in a cycle: each is taken once.
    if (taken.has(chunk)) return;
    taken.add(chunk);
    for (const id of chunk.moduleIds) core.add(id);
    for (const name of chunk.imports) if (chunks.has(name)) take(chunks.get(name));
  };
  take(chunks.get("index.js"));

  const second = await build({
    ...options,
    write: true,
    output: {
      ...output,
      dir: join(root, "dist"),
      codeSplitting: { groups: [{ name: (id) => (core.has(id) ? "core" : null), debugName: "core" }] },
    },
  });
  const written = [];
  for (const file of second.output) {
    written.push(join(root, "dist", file.fileName));
    if (file.type === "chunk" && file.sourcemapFileName) written.push(join(root, "dist", file.sourcemapFileName));
  }
  return written;
}
