import path from "node:path";
import { defineTool, type ToolDefinition } from "../define-tool.js";
import { displayPath, isWithin, resolveRealPath, resolveRoots } from "../confine.js";
import { ConfinementError, openConfinedFile } from "../confined-open.js";
import type { LineMatches } from "./grep-worker.js";
import { checkBuiltinOptions, failure, rootsOf, type BuiltinToolOptions } from "./options.js";
import { loadSearch } from "./load-search.js";
import { looksBinary } from "./text-file.js";

export interface GrepInput {
  pattern: string;
  path?: string;
  glob?: string;
}

/** Matching lines returned at most. */
export const MAX_GREP_MATCHES = 250;
/** Matched lines longer than this are cut. */
export const MAX_GREP_LINE_CHARS = 300;
/** Larger files are skipped (and counted). */
export const MAX_GREP_FILE_BYTES = 10 * 1024 * 1024;

/** `(?i)` at the start asks for a case-insensitive search, as in ripgrep; JavaScript has no inline flag for it. */
function compilePattern(pattern: string): RegExp | string {
  const insensitive = pattern.startsWith("(?i)");
  const source = insensitive ? pattern.slice(4) : pattern;
  try {
    return new RegExp(source, insensitive ? "i" : "");
  } catch (error) {
    return `pattern is not a valid regular expression: ${(error as Error).message}`;
  }
}

/**
 * A searched file's bytes, read through a confined open (no symlink followed below `root`, hard-linked files
 * refused); a skip reason to count, or undefined for what isn't a regular file.
 */
async function readSearchedFile(real: string, root: string, workspace: string): Promise<Buffer | "large" | "outside" | "hardLinked" | "unreadable" | undefined> {
  let opened;
  try {
    opened = await openConfinedFile({ path: real, root, display: displayPath(real, workspace) }, "read");
  } catch (error) {
    if (error instanceof ConfinementError) return error.reason === "hard_link" ? "hardLinked" : "outside";
    return "unreadable";
  }
  try {
    if (!opened.stat.isFile()) return undefined;
    if (opened.stat.size > MAX_GREP_FILE_BYTES) return "large";
    return await opened.handle.readFile();
  } catch {
    return "unreadable";
  } finally {
    await opened.handle.close();
  }
}

/** `grep { pattern, path?, glob? }`: lines matching a regular expression, as `file:line:text`. */
export function grepTool(options: BuiltinToolOptions = {}): ToolDefinition<GrepInput, "grep"> {
  checkBuiltinOptions(options);
  return defineTool<GrepInput, "grep">({
    name: "grep",
    description:
      "Search file contents with a JavaScript regular expression (e.g. `function \\w+Tool`, `TODO|FIXME`; start " +
      "with `(?i)` for case-insensitive). Searches `path` (a folder or one file, default the workspace root) " +
      "recursively, skipping files ignored by .gitignore and binary files. `glob` limits which files are searched " +
      "(`*.ts` matches by file name at any depth, `src/**/*.ts` by path). Returns `file:line:text` lines, at most " +
      `${MAX_GREP_MATCHES}; narrow the search if it is cut.`,
    inputSchema: {
      type: "object",
      properties: {
        pattern: { type: "string", minLength: 1, description: "Regular expression to search for." },
        path: { type: "string", description: "Folder or file to search, relative to the workspace root. Default: the root." },
        glob: { type: "string", description: "Only search files matching this glob, e.g. `*.ts`." },
      },
      required: ["pattern"],
      additionalProperties: false,
    },
    risk: "read",
    permissionSubject: (input) => input.path ?? ".",
    permissionSubjectKind: "path",
    async execute(input, context) {
      const [{ patternProblem, resolveSearchBase, GitignoreRules, findFiles }, { matchLines }] = await Promise.all([loadSearch(), import("./grep-worker.js")]);
      const regex = compilePattern(input.pattern);
      if (typeof regex === "string") return failure(regex);
      if (input.glob !== undefined) {
        const problem = patternProblem(input.glob, "glob");
        if (problem) return failure(problem);
      }
      const resolved = await resolveSearchBase(input.path, context, options);
      if (!resolved.ok) return resolved.result;
      const { base, isDirectory } = resolved;
      const roots = rootsOf(context, options);
      const { workspace, additional } = resolveRoots(roots);

      let files: string[];
      if (!isDirectory) {
        files = [base.path];
      } else {
        const filter = input.glob === undefined || input.glob === "" ? "**/*" : input.glob.includes("/") ? input.glob : `**/${input.glob}`;
        const rules = GitignoreRules.forSearch(base.root, base.path);
        try {
          const found = await findFiles(filter, {
            cwd: base.path,
            dot: true,
            onlyFiles: true,
            followSymbolicLinks: false,
            fs: rules.fsAdapter(base.root),
            signal: context.signal,
          });
          files = found.map((relative) => path.join(base.path, relative)).sort();
        } catch (error) {
          if (context.signal.aborted) return failure("grep was aborted.");
          throw error;
        }
      }

      const matches: string[] = [];
      const skipped = { binary: 0, large: 0, outside: 0, hardLinked: 0, unreadable: 0 };
      let capped = false;
      for (const file of files) {
        if (context.signal.aborted) return failure("grep was aborted.");
        // A symlink inside the workspace may point outside it: search only files whose real path is confined.
        let real: string;
        try {
          real = resolveRealPath(file);
        } catch {
          skipped.unreadable++;
          continue;
        }
        const root = [workspace, ...additional].find((candidate) => isWithin(candidate, real));
        if (root === undefined) {
          skipped.outside++;
          continue;
        }
        const read = await readSearchedFile(real, root, workspace);
        if (typeof read === "string") {
          skipped[read]++;
          continue;
        }
        if (read === undefined) continue;
        const buffer = read;
        if (looksBinary(buffer)) {
          skipped.binary++;
          continue;
        }
        const shown = displayPath(file, workspace);
        // Matching runs on a worker thread that the signal terminates: a backtracking pattern never blocks the run.
        let found: LineMatches;
        try {
          found = await matchLines(buffer, regex, MAX_GREP_MATCHES - matches.length, MAX_GREP_LINE_CHARS, context.signal);
        } catch (error) {
          if (context.signal.aborted) return failure("grep was aborted.");
          throw error;
        }
        for (const [line, text, cut] of found.found) matches.push(`${shown}:${line}:${cut ? `${text}… [line cut]` : text}`);
        if (found.more) {
          capped = true;
          break;
        }
      }

      const notes: string[] = [];
      if (capped) notes.push(`[stopped after ${MAX_GREP_MATCHES} matches; narrow the pattern, path or glob to see the rest]`);
      const skippedParts = [
        skipped.binary ? `${skipped.binary} binary file${skipped.binary === 1 ? "" : "s"}` : "",
        skipped.large ? `${skipped.large} file${skipped.large === 1 ? "" : "s"} over ${MAX_GREP_FILE_BYTES / (1024 * 1024)} MB` : "",
        skipped.outside ? `${skipped.outside} symbolic link${skipped.outside === 1 ? "" : "s"} pointing outside the workspace` : "",
        skipped.hardLinked ? `${skipped.hardLinked} hard-linked file${skipped.hardLinked === 1 ? "" : "s"} (another link may be outside the workspace)` : "",
        skipped.unreadable ? `${skipped.unreadable} unreadable file${skipped.unreadable === 1 ? "" : "s"}` : "",
      ].filter((part) => part !== "");
      if (skippedParts.length > 0) notes.push(`[skipped ${skippedParts.join(", ")}]`);
      const where = `${base.display}${input.glob ? ` (files matching ${input.glob})` : ""}`;
      if (matches.length === 0) return [`No matches for /${input.pattern}/ in ${where}.`, ...notes].join("\n");
      return [...matches, ...notes].join("\n");
    },
  });
}
