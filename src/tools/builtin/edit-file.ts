import type { Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { defineTool, type ToolDefinition, type ToolOutput } from "../define-tool.js";
import { confinePath, resolveRoots } from "../confine.js";
import { ConfinementError, openConfinedFile, replaceContent } from "../confined-open.js";
import { protectedPathMessage, protectedRuleFor } from "../protected-paths.js";
import { checkBuiltinOptions, failure, rootsOf, type BuiltinToolOptions } from "./options.js";
import { errorCode, looksBinary } from "./text-file.js";

export interface EditFileInput {
  path: string;
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

/** Lines of context shown around an edit. */
const SNIPPET_CONTEXT = 3;

/** Occurrences of `needle` in `haystack` (non-overlapping, from the left). */
function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) count++;
  return count;
}

/** A few numbered lines around `index` of `text`, so the model sees the result of its edit. */
function snippetAround(text: string, index: number, length: number): string {
  const lines = text.split("\n");
  const firstLine = text.slice(0, index).split("\n").length;
  const lastLine = firstLine + text.slice(index, index + length).split("\n").length - 1;
  const from = Math.max(1, firstLine - SNIPPET_CONTEXT);
  const to = Math.min(lines.length, lastLine + SNIPPET_CONTEXT);
  const shown: string[] = [];
  for (let n = from; n <= to; n++) shown.push(`${String(n).padStart(6)}\t${lines[n - 1]}`);
  return shown.join("\n");
}

/**
 * `edit_file { path, old_string, new_string, replace_all? }`: replaces exact text. Fails when `old_string` is
 * missing, or found more than once without `replace_all`.
 */
export function editFileTool(options: BuiltinToolOptions = {}): ToolDefinition<EditFileInput, "edit_file"> {
  checkBuiltinOptions(options);
  return defineTool<EditFileInput, "edit_file">({
    name: "edit_file",
    description:
      "Edit a text file by replacing exact text: `old_string` must appear in the file exactly as given (same " +
      "whitespace and indentation) and is replaced by `new_string`. If `old_string` appears more than once the " +
      "edit fails unless `replace_all` is true: include enough surrounding lines to make it unique. Read the file " +
      "first so you copy the text exactly. To create a file use write_file.",
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", minLength: 1, description: "File to edit, relative to the workspace root." },
        old_string: { type: "string", minLength: 1, description: "The exact text to replace." },
        new_string: { type: "string", description: "The text to put in its place (must differ from old_string)." },
        replace_all: { type: "boolean", default: false, description: "Replace every occurrence instead of exactly one." },
      },
      required: ["path", "old_string", "new_string"],
      additionalProperties: false,
    },
    risk: "write",
    permissionSubject: (input) => input.path,
    permissionSubjectKind: "path",
    async execute(input, context) {
      const roots = rootsOf(context, options);
      const target = confinePath(input.path, roots);
      if (!target.ok) return failure(target.message);
      // The policy refuses these first; checked again here, as the file is opened, for any way around it.
      const { workspace, additional } = resolveRoots(roots);
      const protectedBy = protectedRuleFor(input.path, context.cwd, [workspace, ...additional]);
      if (protectedBy) return failure(protectedPathMessage("edit_file", target.display, protectedBy));
      if (input.old_string === input.new_string) return failure("old_string and new_string are the same; nothing to change.");
      let opened;
      try {
        opened = await openConfinedFile(target, "update");
      } catch (error) {
        if (error instanceof ConfinementError) return failure(error.message);
        const code = errorCode(error);
        if (code === "ENOENT" || code === "ENOTDIR") return failure(`File not found: ${target.display}. Use write_file to create a file.`);
        if (code === "EISDIR") return failure(`${target.display} is a directory, not a file.`);
        if (code === "EACCES" || code === "EPERM" || code === "EROFS") return failure(`Cannot edit ${target.display}: permission denied (${code}).`);
        throw error;
      }
      try {
        return await editOpenFile(opened.handle, opened.stat, target.display, input);
      } finally {
        await opened.handle.close();
      }
    },
  });
}

/** The edit itself, read from and written to the open file (never through its path again). */
async function editOpenFile(handle: FileHandle, stat: Stats, display: string, input: EditFileInput): Promise<ToolOutput> {
  if (!stat.isFile()) return failure(`${display} is not a regular file.`);
  const buffer = await handle.readFile();
  if (looksBinary(buffer)) return failure(`${display} is a binary file; edit_file only edits text files.`);
  const text = buffer.toString("utf8");

  let oldString = input.old_string;
  let newString = input.new_string;
  let count = countOccurrences(text, oldString);
  // Models write "\n"; files written on Windows use "\r\n". Match them as the file has them.
  if (count === 0 && text.includes("\r\n") && oldString.includes("\n") && !oldString.includes("\r\n")) {
    oldString = oldString.replace(/\n/g, "\r\n");
    newString = newString.replace(/\r?\n/g, "\r\n");
    count = countOccurrences(text, oldString);
  }
  if (count === 0) {
    return failure(
      `old_string was not found in ${display}. It must match the file exactly, including whitespace and ` +
        "indentation: read the file again and copy the text from it.",
    );
  }
  if (count > 1 && !input.replace_all) {
    return failure(
      `old_string appears ${count} times in ${display}. Include more surrounding lines so it matches exactly ` +
        "one place, or set replace_all to true to replace every occurrence.",
    );
  }
  const first = text.indexOf(oldString);
  // split/join, not String.replace: `$&` and friends in new_string must stay literal.
  const updated = input.replace_all ? text.split(oldString).join(newString) : text.slice(0, first) + newString + text.slice(first + oldString.length);
  await replaceContent(handle, updated);
  const replaced = input.replace_all ? count : 1;
  return (
    `Edited ${display}: replaced ${replaced} occurrence${replaced === 1 ? "" : "s"}.\n` +
    snippetAround(updated, first, newString.length)
  );
}
