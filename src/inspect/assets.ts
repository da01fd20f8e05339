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

const pageDir = fileURLToPath(new URL("./page/", import.meta.url));

/**
 * Mermaid is vendored: copied next to the page by the build, or taken from the installed `mermaid` package.
 * Either way it is served from the inspector itself, never from a CDN.
 */
function mermaidFile(): string | undefined {
  const vendored = `${pageDir}vendor/mermaid.min.js`;
  if (existsSync(vendored)) return vendored;
  try {
    return createRequire(import.meta.url).resolve("mermaid/dist/mermaid.min.js");
  } catch {
    return undefined;
  }
}

/**
 * Every URL path the inspector answers with a file. Nothing else is ever read from disk for a request: paths are
 * looked up here as they are, so `..` or encoded tricks find nothing.
 */
export function inspectorAssets(): Map<string, Asset> {
  const page = (name: string, type: string): Asset => ({ file: `${pageDir}${name}`, type });
  const mermaid = mermaidFile();
  const index = page("index.html", "text/html; charset=utf-8");
  return new Map<string, Asset>([
    ["/", index],
    ["/index.html", index],
    ["/app.js", page("app.js", "text/javascript; charset=utf-8")],
    ["/actor-tree.js", page("actor-tree.js", "text/javascript; charset=utf-8")],
    ["/style.css", page("style.css", "text/css; charset=utf-8")],
    [
      "/vendor/mermaid.min.js",
      {
        file: mermaid,
        type: "text/javascript; charset=utf-8",
        ...(mermaid ? {} : { missing: "the diagram library (mermaid) is not installed: run `npm install` in the statecraft package" }),
      },
    ],
  ]);
}
