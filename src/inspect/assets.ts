import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

/** A file the inspector serves, by exact URL path. */
export interface Asset {
  /** Absolute file path, or undefined when the file is missing (then `missing` says how to get it). */
  file: string | undefined;
  type: string;
  missing?: string;
}

/** The page's ES modules (src/inspect/page/, copied to dist by the build): app.js and every module it imports. */
export const PAGE_MODULES = [
  "app.js",
  "actor-tree.js",
  "chart-graph.js",
  "chart-model.js",
  "chart-pane.js",
  "chart-svg.js",
  "connection.js",
  "dom.js",
  "frame.js",
  "morph.js",
  "records.js",
  "selected.js",
  "sequence.js",
  "side.js",
  "state.js",
  "timeline.js",
  "traces.js",
  "virtual-rows.js",
];

const pageDir = fileURLToPath(new URL("./page/", import.meta.url));

/**
 * Libraries are vendored: copied next to the page by the build, or taken from the installed package (`module`, a
 * path inside it). Either way they are served from the inspector itself, never from a CDN.
 */
function vendorFile(name: string, module: string): string | undefined {
  const vendored = `${pageDir}vendor/${name}`;
  if (existsSync(vendored)) return vendored;
  try {
    return createRequire(import.meta.url).resolve(module);
  } catch {
    return undefined;
  }
}

function vendorAsset(name: string, module: string, what: string): Asset {
  const file = vendorFile(name, module);
  const pkg = module.split("/")[0];
  return { file, type: "text/javascript; charset=utf-8", ...(file ? {} : { missing: `${what} (${pkg}) is not installed: run \`npm install\` in the statecraft package` }) };
}

/**
 * Every URL path the inspector answers with a file. Nothing else is ever read from disk for a request: paths are
 * looked up here as they are, so `..` or encoded tricks find nothing.
 */
export function inspectorAssets(): Map<string, Asset> {
  const page = (name: string, type: string): Asset => ({ file: `${pageDir}${name}`, type });
  const index = page("index.html", "text/html; charset=utf-8");
  return new Map<string, Asset>([
    ["/", index],
    ["/index.html", index],
    ["/style.css", page("style.css", "text/css; charset=utf-8")],
    ["/vendor/elk-api.js", vendorAsset("elk-api.js", "elkjs/lib/elk-api.js", "the layout library")],
    ["/vendor/elk-worker.min.js", vendorAsset("elk-worker.min.js", "elkjs/lib/elk-worker.min.js", "the layout library")],
    ...PAGE_MODULES.map((name): [string, Asset] => [`/${name}`, page(name, "text/javascript; charset=utf-8")]),
  ]);
}
