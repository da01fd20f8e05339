/**
 * Argument names that hold a file path, compared lower case with `_` and `-` removed: `path`, `filePath`,
 * `file_path`, `target`, `destination`, `paths`… A tool's own `permissionSubject` is one path; a tool may name more
 * (the filesystem MCP server's `move_file { source, destination }`, `read_multiple_files { paths }`), and any of
 * them can be where it writes.
 */
const PATH_NAMES = new Set([
  "path", "paths", "file", "files", "filename", "filenames", "filepath", "filepaths", "target", "targets", "targetpath",
  "targetfile", "destination", "dest", "destpath", "destinationpath", "source", "sources", "src", "sourcepath", "from",
  "to", "dir", "dirs", "directory", "directories", "folder", "cwd", "root", "uri", "url", "location", "output",
  "outputpath", "outputfile", "outfile", "out", "input", "inputpath", "inputfile", "newpath", "oldpath", "oldname",
  "newname", "dirpath", "directorypath", "workdir", "workingdirectory",
]);

/** Nesting looked into: edit lists and option objects are shallow; a deeper value is not looked for. */
const MAX_DEPTH = 6;
/** Values looked at per call: bounds the work a huge input can cause. */
const MAX_VALUES = 1_000;

function isPathName(key: string): boolean {
  const plain = key.toLowerCase().replace(/[_-]/g, "");
  return PATH_NAMES.has(plain) || plain.endsWith("path") || plain.endsWith("paths") || plain.endsWith("file") || plain.endsWith("dir");
}

/** `file:///a/b` → `/a/b`; other strings as they are. */
function asPath(text: string): string | undefined {
  if (/^file:/i.test(text)) {
    try {
      return decodeURIComponent(new URL(text).pathname);
    } catch {
      return text.replace(/^file:(\/\/)?/i, "");
    }
  }
  // Another scheme (https://…) names no file here.
  if (/^[a-z][a-z0-9+.-]+:\/\//i.test(text)) return undefined;
  return text;
}

/**
 * Every string a call's input gives under a path-like name, at any depth (strings in arrays under such a name too),
 * for the protected-path check: whatever the tool's risk or annotations say it does, it does not get to name
 * `.agent/`, the project config, `.mcp.json` or the statecraft folder.
 */
export function pathArguments(input: unknown): string[] {
  const found: string[] = [];
  let seen = 0;
  const visit = (value: unknown, pathLike: boolean, depth: number): void => {
    if (++seen > MAX_VALUES || depth > MAX_DEPTH) return;
    if (typeof value === "string") {
      const text = pathLike ? asPath(value) : undefined;
      if (text !== undefined && text !== "") found.push(text);
      return;
    }
    if (Array.isArray(value)) {
      for (const item of value) visit(item, pathLike, depth + 1);
      return;
    }
    if (value !== null && typeof value === "object") {
      for (const [key, item] of Object.entries(value)) visit(item, isPathName(key), depth + 1);
    }
  };
  visit(input, false, 0);
  return found;
}
