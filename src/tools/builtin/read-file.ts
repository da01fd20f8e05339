import type { FileHandle } from "node:fs/promises";
import { defineTool, type ToolDefinition, type ToolOutput } from "../define-tool.js";
import { confinePath } from "../confine.js";
import { ConfinementError, openConfinedFile } from "../confined-open.js";
import { checkBuiltinOptions, failure, rootsOf, type BuiltinToolOptions } from "./options.js";
import { errorCode, formatBytes, isBinaryFile } from "./text-file.js";
import { sniffImageType } from "../../models/media-type.js";

export interface ReadFileInput {
  path: string;
  offset?: number;
  limit?: number;
}

/** Lines returned when the call gives no `limit`. */
export const DEFAULT_READ_LIMIT = 2_000;
/** Longer lines are cut (minified files would otherwise fill the output with one line). */
export const MAX_LINE_CHARS = 2_000;
/** A PNG, JPEG, GIF or WebP file up to this size is returned as an image part (vision models take them). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

/** `read_file { path, offset?, limit? }`: a text file's lines, numbered. Refuses binary files. */
export function readFileTool(options: BuiltinToolOptions = {}): ToolDefinition<ReadFileInput, "read_file"> {
  checkBuiltinOptions(options);
  return defineTool<ReadFileInput, "read_file">({
    name: "read_file",
    description:
      "Read a text file from the workspace. Returns its lines numbered like `cat -n` (line number, tab, text). " +
      `Reads up to ${DEFAULT_READ_LIMIT} lines from the start unless you give \`offset\` (1-based line to start at) ` +
      "and `limit` (number of lines); use them to page through large files. Lines longer than " +
      `${MAX_LINE_CHARS} characters are cut. The path is relative to the workspace root (absolute paths inside it ` +
      "work too). PNG, JPEG, GIF and WebP images are returned as images; other binary files are refused. Read a file before editing it; use list_dir or glob to find files.",
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", minLength: 1, description: "File to read, relative to the workspace root." },
        offset: { type: "integer", minimum: 1, description: "1-based line number to start reading at. Default 1." },
        limit: { type: "integer", minimum: 1, description: `How many lines to read. Default ${DEFAULT_READ_LIMIT}.` },
      },
      required: ["path"],
      additionalProperties: false,
    },
    risk: "read",
    permissionSubject: (input) => input.path,
    permissionSubjectKind: "path",
    async execute(input, context) {
      const target = confinePath(input.path, rootsOf(context, options));
      if (!target.ok) return failure(target.message);
      let opened;
      try {
        opened = await openConfinedFile(target, "read");
      } catch (error) {
        if (error instanceof ConfinementError) return failure(error.message);
        if (errorCode(error) === "ENOENT" || errorCode(error) === "ENOTDIR") {
          return failure(`File not found: ${target.display}. Use list_dir or glob to find the right path.`);
        }
        throw error;
      }
      const { handle, stat } = opened;
      try {
        if (stat.isDirectory()) return failure(`${target.display} is a directory, not a file. Use list_dir to see what it contains.`);
        if (!stat.isFile()) return failure(`${target.display} is not a regular file.`);
        if (stat.size === 0) return `(${target.display} is empty)`;
        const image = await imageType(handle);
        if (image) {
          if (stat.size > MAX_IMAGE_BYTES) return failure(`${target.display} is an image of ${formatBytes(stat.size)}; read_file returns images up to ${formatBytes(MAX_IMAGE_BYTES)}.`);
          const bytes = new Uint8Array(stat.size);
          const { bytesRead } = await handle.read(bytes, 0, stat.size, 0);
          return { content: [{ type: "text", text: `${target.display} (${image}, ${formatBytes(bytesRead)})` }, { type: "image", image: bytes.subarray(0, bytesRead), mediaType: image }] };
        }
        if (await isBinaryFile(handle)) {
          return failure(`${target.display} is a binary file (${formatBytes(stat.size)}); read_file only reads text files and PNG, JPEG, GIF or WebP images.`);
        }
        return await readLines(handle, target.display, input, context.signal);
      } finally {
        await handle.close();
      }
    },
  });
}

/** The file's image type by its first bytes, when it is a PNG, JPEG, GIF or WebP image. */
async function imageType(handle: FileHandle): Promise<string | undefined> {
  const head = new Uint8Array(16);
  const { bytesRead } = await handle.read(head, 0, head.length, 0);
  return sniffImageType(head.subarray(0, bytesRead));
}

/** The numbered lines `input` asks for, read from the open file (never from its path again). */
async function readLines(handle: FileHandle, display: string, input: ReadFileInput, signal: AbortSignal): Promise<ToolOutput> {
  const offset = input.offset ?? 1;
  const limit = input.limit ?? DEFAULT_READ_LIMIT;
  const lines: string[] = [];
  let total = 0;
  const stream = handle.createReadStream({ encoding: "utf8", start: 0, autoClose: false });
  // node:readline is loaded by the first read, not by `import "statecraft"`.
  const { createInterface } = await import("node:readline");
  const reader = createInterface({ input: stream, crlfDelay: Infinity });
  try {
    for await (const line of reader) {
      total++;
      if (signal.aborted) break;
      if (total < offset || total >= offset + limit) continue;
      const shown = line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}… [line cut: ${line.length} characters]` : line;
      lines.push(`${String(total).padStart(6)}\t${shown}`);
    }
  } finally {
    reader.close();
    stream.destroy();
  }
  if (offset > total) {
    return failure(`offset ${offset} is past the end of ${display}, which has ${total} line${total === 1 ? "" : "s"}.`);
  }
  const last = offset + lines.length - 1;
  let text = lines.join("\n");
  if (offset > 1 || last < total) {
    text += `\n\n[lines ${offset}-${last} of ${total}` + (last < total ? `; use offset ${last + 1} to read more]` : "]");
  }
  return text;
}
