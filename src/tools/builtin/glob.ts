import path from "node:path";
import { defineTool, type ToolDefinition } from "../define-tool.js";
import { displayPath, isWithin, resolveRoots } from "../confine.js";
import { checkBuiltinOptions, failure, rootsOf, type BuiltinToolOptions } from "./options.js";
import { loadSearch } from "./load-search.js";

export interface GlobInput {
  pattern: string;
  path?: string;
}

/** Paths returned at most; the rest are counted. */
export const MAX_GLOB_RESULTS = 1_000;

/** `glob { pattern, path? }`: files whose path matches a glob pattern, skipping what `.gitignore` ignores. */
export function globTool(options: BuiltinToolOptions = {}): ToolDefinition<GlobInput, "glob"> {
  checkBuiltinOptions(options);
  return defineTool<GlobInput, "glob">({
    name: "glob",
    description:
      "Find files by name with a glob pattern, e.g. `**/*.ts`, `src/**/*.test.ts`, `*.{json,yaml}`. `*` matches " +
      "within one folder, `**` across folders. The pattern is relative to `path` (default: the workspace root). " +
      "Returns matching file paths relative to the workspace root, sorted; files ignored by .gitignore and the " +
      ".git folder are left out. Use grep to search inside files.",
    inputSchema: {
      type: "object",
      properties: {
        pattern: { type: "string", minLength: 1, description: "Glob pattern, relative to path." },
        path: { type: "string", description: "Folder to search in, relative to the workspace root. Default: the root." },
      },
      required: ["pattern"],
      additionalProperties: false,
    },
    risk: "read",
    permissionSubject: (input) => input.path ?? ".",
    permissionSubjectKind: "path",
    async execute(input, context) {
      const { patternProblem, resolveSearchBase, GitignoreRules, findFiles } = await loadSearch();
      const problem = patternProblem(input.pattern, "pattern");
      if (problem) return failure(problem);
      const resolved = await resolveSearchBase(input.path, context, options);
      if (!resolved.ok) return resolved.result;
      const { base, isDirectory } = resolved;
      if (!isDirectory) return failure(`${base.display} is a file, not a folder; give a folder as path.`);
      const { workspace } = resolveRoots(rootsOf(context, options));
      const rules = GitignoreRules.forSearch(base.root, base.path);
      let found: string[];
      try {
        found = await findFiles(input.pattern, {
          cwd: base.path,
          dot: true,
          onlyFiles: true,
          followSymbolicLinks: false,
          fs: rules.fsAdapter(base.root),
          signal: context.signal,
        });
      } catch (error) {
        if (context.signal.aborted) return failure("glob was aborted.");
        throw error;
      }
      const files = found
        .map((relative) => path.join(base.path, relative))
        .filter((file) => isWithin(base.path, file))
        .map((file) => displayPath(file, workspace))
        .sort();
      if (files.length === 0) return `No files match ${input.pattern} in ${base.display}.`;
      const shown = files.slice(0, MAX_GLOB_RESULTS);
      if (files.length > MAX_GLOB_RESULTS) {
        shown.push(`[${files.length - MAX_GLOB_RESULTS} more files not shown; use a narrower pattern or path]`);
      }
      return shown.join("\n");
    },
  });
}
