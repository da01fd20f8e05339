import fs from "node:fs";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import { isWithin, resolveRealPath } from "./confine.js";

/**
 * Opening what `confinePath` checked. The check resolves a path to its real path; opening that path by name again
 * would follow whatever a concurrent process put there in between (a folder swapped for a symlink to `/`). So the
 * real path is walked again from the root one component at a time, each opened with O_NOFOLLOW relative to the
 * directory opened before it: a component that became a symlink fails to open instead of being followed.
 *
 * Node has no `openat`; on Linux `/proc/self/fd/N/name` is the same thing (the kernel resolves `/proc/self/fd/N`
 * to the open directory itself, not to a path). Where `/proc/self/fd` is missing each component is checked with
 * lstat before opening by name, which narrows the window but cannot close it (see docs/tools.md).
 */

const { O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;

let procFdWorks: boolean | undefined;

/** Whether `/proc/self/fd/N` works as a reference to an open directory here (probed once). */
function procFd(): boolean {
  if (procFdWorks !== undefined) return procFdWorks;
  try {
    const fd = fs.openSync("/", O_RDONLY | O_DIRECTORY);
    try {
      procFdWorks = fs.readlinkSync(`/proc/self/fd/${fd}`) === "/";
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    procFdWorks = false;
  }
  return procFdWorks;
}

/** A refusal to open: the message says what was refused and why, for the model to read. */
export class ConfinementError extends Error {
  constructor(
    message: string,
    readonly reason: "hard_link" | "symlink" | "outside",
  ) {
    super(message);
    this.name = "ConfinementError";
  }
}

/** What to open: a confined real path, the root it is under, and how to name it in messages. */
export interface OpenTarget {
  path: string;
  root: string;
  display: string;
}

/** An open directory: `ref` names it for fs calls (`${ref}/name`) without going through its path again. */
export interface DirRef {
  ref: string;
  close(): void;
}

function changed(target: OpenTarget, component: string): ConfinementError {
  return new ConfinementError(
    `Refused to open ${target.display}: ${component} is a symbolic link now, though it was not when the path was ` +
      "checked (something changed it meanwhile). Nothing was read or written. Retry once the workspace stops changing.",
    "symlink",
  );
}

/** The real path an open file descriptor refers to, or undefined where the platform can't tell. */
function fdPath(fd: number): string | undefined {
  if (!procFd()) return undefined;
  return fs.readlinkSync(`/proc/self/fd/${fd}`);
}

/** Refuses a descriptor whose file is not under the root (it was moved, or something above was swapped). */
function verifyFd(fd: number, target: OpenTarget): void {
  const real = fdPath(fd);
  if (real !== undefined && !isWithin(target.root, real)) {
    throw new ConfinementError(`Refused to open ${target.display}: what was opened is ${real}, outside the workspace.`, "outside");
  }
}

function openComponent(parent: DirRef, name: string): number {
  return fs.openSync(`${parent.ref}/${name}`, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
}

/**
 * Opens the directory `parts` (components below `target.root`) without following any symlink below the root.
 * With `create`, missing folders are made on the way (mkdir never follows a final symlink).
 */
function walk(target: OpenTarget, parts: readonly string[], create: boolean): DirRef {
  if (!procFd()) return walkByName(target, parts, create);
  let fd = fs.openSync(target.root, O_RDONLY | O_DIRECTORY);
  const dir = (): DirRef => ({ ref: `/proc/self/fd/${fd}`, close: () => fs.closeSync(fd) });
  try {
    if (fdPath(fd) !== target.root) {
      throw new ConfinementError(`Refused to open ${target.display}: the root ${target.root} was moved or replaced meanwhile.`, "outside");
    }
    for (const part of parts) {
      const parent = dir();
      let next: number;
      try {
        next = openComponent(parent, part);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOENT" && create) {
          try {
            fs.mkdirSync(`${parent.ref}/${part}`);
          } catch (mkdirError) {
            if ((mkdirError as NodeJS.ErrnoException).code !== "EEXIST") throw mkdirError;
          }
          next = openNewComponent(parent, part, target);
        } else if (code === "ENOTDIR" || code === "ELOOP") {
          if (fs.lstatSync(`${parent.ref}/${part}`).isSymbolicLink()) throw changed(target, part);
          throw error;
        } else throw error;
      }
      fs.closeSync(fd);
      fd = next;
    }
    // Each step refused symlinks, so this holds; checked anyway since it is one readlink.
    verifyFd(fd, target);
    return dir();
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
}

function openNewComponent(parent: DirRef, part: string, target: OpenTarget): number {
  try {
    return openComponent(parent, part);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if ((code === "ENOTDIR" || code === "ELOOP") && fs.lstatSync(`${parent.ref}/${part}`).isSymbolicLink()) throw changed(target, part);
    throw error;
  }
}

/** The fallback without `/proc/self/fd`: every component checked with lstat, then used by name. */
function walkByName(target: OpenTarget, parts: readonly string[], create: boolean): DirRef {
  let current = target.root;
  for (const part of parts) {
    current = path.join(current, part);
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(current);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || !create) throw error;
      fs.mkdirSync(current);
      stat = fs.lstatSync(current);
    }
    if (stat.isSymbolicLink()) throw changed(target, part);
    if (!stat.isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, ${current}`), { code: "ENOTDIR" });
  }
  return { ref: current, close: () => {} };
}

/** Components of `target.path` below its root. */
function partsOf(target: OpenTarget): string[] {
  const relative = path.relative(target.root, target.path);
  if (!isWithin(target.root, target.path)) throw new ConfinementError(`Refused to open ${target.display}: it is outside ${target.root}.`, "outside");
  return relative === "" ? [] : relative.split(path.sep);
}

/** Opens a confined directory for listing; `ref` stays valid (and inside the root) until `close()`. */
export function openConfinedDir(target: OpenTarget): DirRef {
  return walk(target, partsOf(target), false);
}

/**
 * Lists `dir` (absolute) for a walk confined to `root`: symlinks in `dir` are followed only while they stay under
 * the root, and the real directory is then opened without following anything, so a walk can't be steered outside
 * by a symlinked folder in a pattern's fixed prefix (`r/etc/**` with `r -> /`) or by a folder swapped meanwhile.
 */
export function listConfinedDir(
  root: string,
  dir: string,
  callback: (error: NodeJS.ErrnoException | null, entries: fs.Dirent[]) => void,
): void {
  let opened: DirRef;
  try {
    const real = resolveRealPath(dir);
    opened = openConfinedDir({ path: real, root, display: dir });
  } catch (error) {
    // Callers expect readdir's callback to come later, never during the call.
    process.nextTick(callback, error as NodeJS.ErrnoException, []);
    return;
  }
  fs.readdir(opened.ref, { withFileTypes: true }, (error, entries) => {
    opened.close();
    callback(error, error ? [] : entries);
  });
}

/** listConfinedDir, synchronously. */
export function listConfinedDirSync(root: string, dir: string): fs.Dirent[] {
  const opened = openConfinedDir({ path: resolveRealPath(dir), root, display: dir });
  try {
    return fs.readdirSync(opened.ref, { withFileTypes: true });
  } finally {
    opened.close();
  }
}

export type OpenMode =
  /** Read only. */
  | "read"
  /** Read and write an existing file (an edit). */
  | "update"
  /** Write, creating the file and missing parent folders. */
  | "write";

export interface OpenedFile {
  handle: FileHandle;
  stat: fs.Stats;
  /** Whether this open created the file (only in "write" mode). */
  created: boolean;
}

/**
 * Opens a confined file without following symlinks anywhere below its root, then refuses it when it is a regular
 * file with more than one hard link: another name of the same file may be outside the workspace, and nothing cheap
 * tells where the other names are. Nothing is truncated or written here, so a refused file is left as it was.
 * Non-regular files (folders, FIFOs) are returned for the caller to refuse with its own message; opens never block.
 * Throws ConfinementError for a refusal, node errors (ENOENT, ENOTDIR, EISDIR…) otherwise.
 */
export async function openConfinedFile(target: OpenTarget, mode: OpenMode): Promise<OpenedFile> {
  const parts = partsOf(target);
  const name = parts.pop();
  if (name === undefined) throw Object.assign(new Error(`EISDIR: illegal operation on a directory, ${target.path}`), { code: "EISDIR" });
  const dir = walk(target, parts, mode === "write");
  let handle: FileHandle;
  let created = false;
  try {
    const at = `${dir.ref}/${name}`;
    handle = await openFinal(at, mode, target, () => (created = true));
  } finally {
    dir.close();
  }
  try {
    verifyFd(handle.fd, target);
    const stat = await handle.stat();
    if (stat.isFile() && stat.nlink > 1) {
      throw new ConfinementError(
        `Refused to open ${target.display}: it has ${stat.nlink} hard links, and a hard link may be another name of a ` +
          "file outside the workspace, so file tools don't read or write hard-linked files. Work on a separate copy " +
          "of it instead (a plain copy has a single link).",
        "hard_link",
      );
    }
    return { handle, stat, created };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

async function openFinal(at: string, mode: OpenMode, target: OpenTarget, onCreate: () => void): Promise<FileHandle> {
  const { open } = fs.promises;
  try {
    if (mode === "read") return await open(at, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    if (mode === "update") return await open(at, O_RDWR | O_NOFOLLOW | O_NONBLOCK);
    try {
      const handle = await open(at, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK, 0o666);
      onCreate();
      return handle;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      return await open(at, O_WRONLY | O_NOFOLLOW | O_NONBLOCK);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOOP") throw changed(target, path.basename(target.path));
    throw error;
  }
}

/** Replaces a file's whole content through its open handle (write mode opens without truncating). */
export async function replaceContent(handle: FileHandle, content: string): Promise<void> {
  const buffer = Buffer.from(content, "utf8");
  await handle.truncate(0);
  let written = 0;
  while (written < buffer.length) {
    const { bytesWritten } = await handle.write(buffer, written, buffer.length - written, written);
    written += bytesWritten;
  }
}
