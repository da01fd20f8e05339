import { close, closeSync, constants, fstatSync, lstatSync, mkdirSync, open, openSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { promisify } from "node:util";
import { makeDirectory } from "../util/make-dir.js";

const code = (error: unknown) => (error as NodeJS.ErrnoException).code;

/** The name of the folder of a workspace's own engine state: trace, session transcripts, audit log, stored runs. */
export const AGENT_DIR = ".agent";

/** The folder of a workspace's own engine state: trace, session transcripts, audit log. */
export function agentFolder(cwd: string): string {
  return join(resolve(cwd), AGENT_DIR);
}

/** Whether `file` is inside `folder` (both absolute and normalised), lexically. */
export function isInside(folder: string, file: string): boolean {
  const rel = relative(folder, file);
  return rel !== "" && rel.split(sep)[0] !== ".." && !rel.startsWith(sep);
}

/**
 * Opens `file` for appending as a file really inside `folder`, or throws saying why. The folder comes with the
 * workspace (a cloned repository can ship `.agent/audit.jsonl -> ~/.bashrc`, or `.agent` itself as a link), so:
 * no symbolic link is followed from `folder` down to the file (O_NOFOLLOW on the file, lstat on each folder), the
 * file must be a regular file with one link (a hard link to a file elsewhere is that file), and on Linux the opened
 * descriptor's real path is checked to be under the folder's real place, which closes the gap between the checks
 * and the open.
 */
export function openAppendInside(folder: string, file: string): number {
  const root = resolve(folder);
  const target = resolve(file);
  if (!isInside(root, target)) throw new Error(`${target} is not inside ${root}`);
  realFoldersDown(root, dirname(target));
  let fd: number;
  try {
    fd = openSync(target, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o644);
  } catch (error) {
    if (code(error) === "ELOOP") throw new Error(`${target} is a symbolic link; the engine writes its own files only as regular files, never through a link`);
    throw error;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new Error(`${target} is not a regular file`);
    if (stat.nlink > 1) throw new Error(`${target} is hard-linked (${stat.nlink} names): it may be a file outside ${root}, so it is not written`);
    const opened = openedPath(fd);
    const expected = join(realpathSync(dirname(root)), basename(root));
    if (opened !== undefined && !isInside(expected, opened)) {
      throw new Error(`${target} really is ${opened}, outside ${expected} (a folder on its path was swapped for a link)`);
    }
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fd;
}

const openAsync = promisify(open);
const closeAsync = promisify(close);

/**
 * Makes `file` inside `folder`, empty, unless it is there already, on libuv's threads: making a file is the dearest
 * thing a run start asks of the disk (up to a millisecond or more on a busy one), and a thousand runs starting at once
 * must not each hold up the event loop for it. Checks nothing beyond what opening a new file needs (folders reached
 * through no link, the name itself no link, never truncated): the writer that opens it later makes every check of
 * `openAppendInside` and reports what is wrong, so this one never throws.
 */
export async function makeFileInside(folder: string, file: string): Promise<void> {
  try {
    const root = resolve(folder);
    const target = resolve(file);
    if (!isInside(root, target)) return;
    realFoldersDown(root, dirname(target));
    await closeAsync(await openAsync(target, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644));
  } catch {
    // there already (EEXIST), or not to be made here: the writer says why when it opens it
  }
}

/**
 * Makes sure every folder from `root` down to `dir` is a real folder (no symbolic link), making missing ones; throws
 * saying which one is not. `root`'s own parent is made if missing.
 */
export function realFoldersDown(root: string, dir: string): void {
  makeDirectory(dirname(root));
  // Every folder from the root down to the file's: each must be a real folder, made here if missing.
  const parts = relative(root, dir).split(sep).filter((part) => part !== "");
  let at = root;
  for (const part of ["", ...parts]) {
    at = part === "" ? at : join(at, part);
    let stat;
    try {
      stat = lstatSync(at);
    } catch (error) {
      if (code(error) !== "ENOENT") throw error;
      try {
        mkdirSync(at);
      } catch (made) {
        if (code(made) !== "EEXIST") throw made;
      }
      stat = lstatSync(at);
    }
    if (stat.isSymbolicLink()) throw new Error(`${at} is a symbolic link; the engine writes its own files only into real folders, never through a link`);
    if (!stat.isDirectory()) throw new Error(`${at} is not a folder`);
  }
}

/** The real path of an open descriptor where the system tells it (Linux's /proc); undefined elsewhere. */
export function openedPath(fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}
