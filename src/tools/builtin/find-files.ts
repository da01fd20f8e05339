import type { GlobOptions } from "tinyglobby";

/**
 * tinyglobby's `glob`, imported by the first search rather than when statecraft is imported: it brings fdir and
 * picomatch, which a program that never globs or greps does not need.
 */
export async function findFiles(patterns: string | readonly string[], options?: Omit<GlobOptions, "patterns">): Promise<string[]> {
  const { glob } = await import("tinyglobby");
  return glob(patterns, options);
}
