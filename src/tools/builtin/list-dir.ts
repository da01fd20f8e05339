import fs from "node:fs/promises";
import { defineTool, type ToolDefinition } from "../define-tool.js";
import { confinePath } from "../confine.js";
import { ConfinementError, openConfinedDir } from "../confined-open.js";
import { checkBuiltinOptions, failure, rootsOf, type BuiltinToolOptions } from "./options.js";
import { errorCode } from "./text-file.js";

export interface ListDirInput {
  path?: string;
}

/** Entries listed at most; the rest are counted. */
export const MAX_LIST_ENTRIES = 1_000;

/** `list_dir { path? }`: a folder's entries, folders marked with `/`, symlinks with their target. */
export function listDirTool(options: BuiltinToolOptions = {}): ToolDefinition<ListDirInput, "list_dir"> {
  checkBuiltinOptions(options);
  return defineTool<ListDirInput, "list_dir">({
    name: "list_dir",
    description:
      "List the entries of a folder (default: the workspace root), one per line, sorted by name. Folders end " +
      "with `/`, symbolic links show `-> target`. Not recursive: use glob to find files by name pattern across " +
      "folders, grep to search file contents.",
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", description: "Folder to list, relative to the workspace root. Default: the root." },
      },
      additionalProperties: false,
    },
    risk: "read",
    permissionSubject: (input) => input.path ?? ".",
    permissionSubjectKind: "path",
    async execute(input, context) {
      const requested = input.path === undefined || input.path === "" ? "." : input.path;
      const target = confinePath(requested, rootsOf(context, options));
      if (!target.ok) return failure(target.message);
      let dir;
      try {
        // Listed through the opened directory, so a folder swapped for a symlink meanwhile is refused, not listed.
        dir = openConfinedDir(target);
      } catch (error) {
        if (error instanceof ConfinementError) return failure(error.message);
        const code = errorCode(error);
        if (code === "ENOENT") return failure(`Folder not found: ${target.display}.`);
        if (code === "ENOTDIR") return failure(`${target.display} is a file, not a folder; use read_file to read it.`);
        throw error;
      }
      try {
        return await listEntries(dir.ref, target.display);
      } finally {
        dir.close();
      }
    },
  });
}

/** The entries of the open directory `ref`, as list_dir shows them. */
async function listEntries(ref: string, display: string): Promise<string> {
  const entries = await fs.readdir(ref, { withFileTypes: true });
  if (entries.length === 0) return `${display} is empty.`;
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const lines: string[] = [];
  for (const entry of entries.slice(0, MAX_LIST_ENTRIES)) {
    if (entry.isDirectory()) lines.push(`${entry.name}/`);
    else if (entry.isSymbolicLink()) {
      const link = await fs.readlink(`${ref}/${entry.name}`).catch(() => "?");
      lines.push(`${entry.name} -> ${link}`);
    } else lines.push(entry.name);
  }
  if (entries.length > MAX_LIST_ENTRIES) {
    lines.push(`[${entries.length - MAX_LIST_ENTRIES} more entries not shown; use glob with a pattern to narrow down]`);
  }
  return lines.join("\n");
}
