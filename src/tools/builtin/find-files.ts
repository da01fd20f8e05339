import path from "node:path";
import type { GlobOptions } from "tinyglobby";
import { statecraftFolders } from "../../util/statecraft-home.js";
import { isWithin, resolveRealPath } from "../confine.js";

/**
 * tinyglobby's `glob`, imported by the first search rather than when statecraft is imported: it brings fdir and
 * picomatch, which a program that never globs or greps does not need. What lies in a statecraft folder (the session
 * key, the user config, the trust list) is never found, also when the search covers it (a workspace at `$HOME`).
 */
export async function findFiles(patterns: string | readonly string[], options?: Omit<GlobOptions, "patterns">): Promise<string[]> {
  const { glob } = await import("tinyglobby");
  const found = await glob(patterns, options);
  const base = typeof options?.cwd === "string" ? path.resolve(options.cwd) : process.cwd();
  const homes = statecraftFolders().flatMap((h) => [h, realOrSelf(h)]);
  const covered = homes.filter((h) => isWithin(base, h) || isWithin(realOrSelf(base), h) || isWithin(h, base));
  if (covered.length === 0) return found;
  return found.filter((file) => {
    const absolute = path.resolve(base, file);
    return !covered.some((h) => isWithin(h, absolute) || isWithin(h, realOrSelf(absolute)));
  });
}

function realOrSelf(absolute: string): string {
  try {
    return resolveRealPath(absolute);
  } catch {
    return absolute;
  }
}
