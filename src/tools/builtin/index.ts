import type { AnyTool } from "../define-tool.js";
import { bashTool } from "./bash.js";
import { editFileTool } from "./edit-file.js";
import { globTool } from "./glob.js";
import { grepTool } from "./grep.js";
import { listDirTool } from "./list-dir.js";
import type { BuiltinToolOptions } from "./options.js";
import { readFileTool } from "./read-file.js";
import { writeFileTool } from "./write-file.js";

export type { BuiltinToolOptions } from "./options.js";
export { bashTool, type BashInput } from "./bash.js";
export { editFileTool, type EditFileInput } from "./edit-file.js";
export { globTool, type GlobInput } from "./glob.js";
export { grepTool, type GrepInput } from "./grep.js";
export { listDirTool, type ListDirInput } from "./list-dir.js";
export { readFileTool, type ReadFileInput } from "./read-file.js";
export { writeFileTool, type WriteFileInput } from "./write-file.js";

/**
 * The built-in workspace tools: read_file, write_file, edit_file, list_dir, glob, grep (read/write file tools,
 * confined to the workspace `cwd` and `additionalDirectories`) and bash (runs commands in the workspace).
 */
export function builtinTools(options: BuiltinToolOptions = {}): AnyTool[] {
  return [
    readFileTool(options),
    writeFileTool(options),
    editFileTool(options),
    listDirTool(options),
    globTool(options),
    grepTool(options),
    bashTool(options),
  ];
}
