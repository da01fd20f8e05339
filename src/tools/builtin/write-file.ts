import { defineTool, type ToolDefinition } from "../define-tool.js";
import { confinePath, resolveRoots } from "../confine.js";
import { ConfinementError, openConfinedFile, replaceContent } from "../confined-open.js";
import { protectedPathMessage, protectedRuleFor } from "../protected-paths.js";
import { checkBuiltinOptions, failure, rootsOf, type BuiltinToolOptions } from "./options.js";
import { errorCode } from "./text-file.js";

export interface WriteFileInput {
  path: string;
  content: string;
}

/** `write_file { path, content }`: creates or overwrites a file, creating missing parent folders. */
export function writeFileTool(options: BuiltinToolOptions = {}): ToolDefinition<WriteFileInput, "write_file"> {
  checkBuiltinOptions(options);
  return defineTool<WriteFileInput, "write_file">({
    name: "write_file",
    description:
      "Create a file or overwrite it completely with `content`. Missing parent folders are created. " +
      "The path is relative to the workspace root. To change part of an existing file prefer edit_file, which " +
      "keeps the rest of the file as it is; read a file before overwriting it.",
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", minLength: 1, description: "File to write, relative to the workspace root." },
        content: { type: "string", description: "The file's complete new content." },
      },
      required: ["path", "content"],
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
      if (protectedBy) return failure(protectedPathMessage("write_file", target.display, protectedBy));
      let opened;
      try {
        // Opened without truncating: a refused file (hard-linked, swapped for a symlink) is left as it was.
        opened = await openConfinedFile(target, "write");
      } catch (error) {
        if (error instanceof ConfinementError) return failure(error.message);
        const code = errorCode(error);
        if (code === "EISDIR") return failure(`${target.display} is a directory; give the path of a file to write.`);
        if (code === "ENOTDIR" || code === "EEXIST") return failure(`Cannot write ${target.display}: a parent of it is a file, not a folder.`);
        if (code === "ENOENT") return failure(`Cannot write ${target.display}: a folder on its path was removed while writing. Try again.`);
        if (code === "ENXIO") return failure(`Cannot write ${target.display}: it is not a regular file.`);
        if (code === "EACCES" || code === "EPERM" || code === "EROFS") return failure(`Cannot write ${target.display}: permission denied (${code}).`);
        throw error;
      }
      const { handle, stat, created } = opened;
      try {
        if (!stat.isFile()) return failure(`Cannot write ${target.display}: it is not a regular file.`);
        await replaceContent(handle, input.content);
      } finally {
        await handle.close();
      }
      const bytes = Buffer.byteLength(input.content, "utf8");
      const lines = input.content === "" ? 0 : input.content.split("\n").length - (input.content.endsWith("\n") ? 1 : 0);
      return `${created ? "Created" : "Overwrote"} ${target.display} (${bytes} bytes, ${lines} line${lines === 1 ? "" : "s"}).`;
    },
  });
}
