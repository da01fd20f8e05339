import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** Symlink hops allowed while resolving one path (as the kernel's ELOOP limit). */
const MAX_SYMLINK_HOPS = 40;

/**
 * The real path of `absolutePath`: every symlink followed, including dangling ones and symlinked parents of a file
 * that does not exist yet. The part that does not exist is appended as written, so the result is the file a
 * create or write would touch.
 */
export function resolveRealPath(absolutePath: string): string {
  const target = path.resolve(absolutePath);
  try {
    return fs.realpathSync.native(target);
  } catch {
    // Some component is missing (or a symlink dangles): walk it component by component.
  }
  return walkRealPath(target, { hops: 0 });
}

function walkRealPath(absolutePath: string, state: { hops: number }): string {
  const { root } = path.parse(absolutePath);
  const parts = absolutePath.slice(root.length).split(path.sep).filter((part) => part !== "");
  let current = root;
  for (let i = 0; i < parts.length; i++) {
    const next = path.join(current, parts[i]);
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(next);
    } catch {
      // From here on nothing exists: the rest is created as written.
      return path.join(current, ...parts.slice(i));
    }
    if (!stat.isSymbolicLink()) {
      current = next;
      continue;
    }
    if (++state.hops > MAX_SYMLINK_HOPS) {
      throw Object.assign(new Error(`too many levels of symbolic links resolving ${absolutePath}`), { code: "ELOOP" });
    }
    // `current` has no symlinks left, so resolving the link's text against it lexically is exact.
    current = walkRealPath(path.resolve(current, fs.readlinkSync(next)), state);
  }
  return current;
}

/** Whether `child` is `parent` or inside it (both absolute, already resolved). */
export function isWithin(parent: string, child: string): boolean {
  const relative = path.relative(parent, child);
  return relative === "" || (relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

export interface WorkspaceRoots {
  /** The workspace root (a run's `cwd`); relative paths resolve against it. */
  cwd: string;
  /** Extra directories file tools may use; relative ones resolve against `cwd`. */
  additionalDirectories?: readonly string[];
}

export type ConfinedPath =
  | {
      ok: true;
      /** Absolute real path: what the tool must open. */
      path: string;
      /** The confining root (real path) the file is under. */
      root: string;
      /** How to show it: relative to the workspace root, or absolute when under an additional directory. */
      display: string;
    }
  | { ok: false; message: string };

/** `~` and `~/x` mean the home directory, as in a shell; models write them. */
export function expandHome(input: string): string {
  if (input === "~") return os.homedir();
  if (input.startsWith("~/")) return path.join(os.homedir(), input.slice(2));
  return input;
}

/** The real roots: workspace first, then the additional directories. */
export function resolveRoots(roots: WorkspaceRoots): { workspace: string; additional: string[] } {
  const workspace = resolveRealPath(path.resolve(roots.cwd));
  const additional = (roots.additionalDirectories ?? []).map((dir) => resolveRealPath(path.resolve(roots.cwd, expandHome(dir))));
  return { workspace, additional };
}

/** Shows a real path the way tools report it: relative to the workspace, `.` for the root itself, else absolute. */
export function displayPath(realPath: string, workspace: string): string {
  if (!isWithin(workspace, realPath)) return realPath;
  const relative = path.relative(workspace, realPath);
  return relative === "" ? "." : relative.split(path.sep).join("/");
}

/**
 * Resolves a tool's path input against the workspace after following symlinks (also for files that don't exist
 * yet) and refuses anything outside the workspace and the additional directories, naming the workspace root.
 */
export function confinePath(input: string, roots: WorkspaceRoots): ConfinedPath {
  const { workspace, additional } = resolveRoots(roots);
  const absolute = path.resolve(roots.cwd, expandHome(input));
  let real: string;
  try {
    real = resolveRealPath(absolute);
  } catch (error) {
    return { ok: false, message: `Cannot resolve path "${input}": ${(error as Error).message}` };
  }
  for (const root of [workspace, ...additional]) {
    if (isWithin(root, real)) return { ok: true, path: real, root, display: displayPath(real, workspace) };
  }
  const via = real !== absolute ? ` (it resolves to ${real} through a symbolic link)` : ` (it resolves to ${real})`;
  const extra = additional.length > 0 ? ` and the additional directories ${additional.join(", ")}` : "";
  return {
    ok: false,
    message:
      `Path "${input}" is outside the workspace${via}. File tools only work inside the workspace root ` +
      `${workspace}${extra}. Use a path relative to the workspace root.`,
  };
}
