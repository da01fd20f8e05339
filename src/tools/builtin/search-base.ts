import fs from "node:fs/promises";
import type { ToolContext } from "../define-tool.js";
import { confinePath, type ConfinedPath } from "../confine.js";
import { failure, rootsOf, type BuiltinToolOptions } from "./options.js";
import { errorCode } from "./text-file.js";

/** A confined folder (or file) to search in, or the error result to return. */
export type SearchBase =
  | { ok: true; base: Extract<ConfinedPath, { ok: true }>; isDirectory: boolean }
  | { ok: false; result: { content: string; isError: true } };

export async function resolveSearchBase(requested: string | undefined, context: ToolContext, options: BuiltinToolOptions): Promise<SearchBase> {
  const target = confinePath(requested === undefined || requested === "" ? "." : requested, rootsOf(context, options));
  if (!target.ok) return { ok: false, result: failure(target.message) };
  try {
    const stat = await fs.stat(target.path);
    return { ok: true, base: target, isDirectory: stat.isDirectory() };
  } catch (error) {
    if (errorCode(error) === "ENOENT" || errorCode(error) === "ENOTDIR") {
      return { ok: false, result: failure(`Path not found: ${target.display}.`) };
    }
    throw error;
  }
}

/**
 * Glob patterns are relative to the search folder; `..` segments or an absolute pattern would reach outside it.
 * Returns the problem, if any.
 */
export function patternProblem(pattern: string, input: string): string | undefined {
  if (pattern.startsWith("/") || /^[A-Za-z]:[\\/]/.test(pattern)) {
    return `${input} "${pattern}" is absolute; patterns are relative to the search folder (use the path input to choose the folder).`;
  }
  if (pattern.split(/[\\/]/).includes("..")) {
    return `${input} "${pattern}" contains "..": patterns can't leave the search folder (use the path input to choose the folder).`;
  }
  return undefined;
}
