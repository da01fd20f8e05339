import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { AGENT_DIR } from "../record/agent-folder.js";
import { statecraftHome } from "../util/statecraft-home.js";

/**
 * What a sandboxed process sees of the file system, as plain data both platforms' generators read (bubblewrap
 * arguments, a Seatbelt profile): folders it may write, paths inside them it may only read, paths hidden.
 */
export interface SandboxLayout {
  /** Read-write: the workspace and the additional directories (real paths, existing folders). */
  writable: string[];
  /** Existing paths inside `writable` kept read-only: `.agent/`, `statecraft.config.json`, `.mcp.json` of each root. */
  readOnly: string[];
  /** Protected names that do not exist yet: a placeholder is made for the process's life so it cannot create them. */
  missingProtected: Array<{ path: string; kind: "dir" | "file" }>;
  /** Existing paths not shown (an empty folder or an empty file in their place). */
  hidden: Array<{ path: string; kind: "dir" | "file" }>;
  /**
   * Existing entries of the host's /tmp shown read-only over the private /tmp: those holding what the process runs
   * (its program, a script it is given, the folders of its PATH), so a project or a Node kept under /tmp still runs.
   */
  revealedTmp: string[];
  /** The folder the process starts in. */
  cwd: string;
}

/** Protected names below each writable root (the same names the permission layer protects). */
export const PROTECTED_NAMES: ReadonlyArray<{ name: string; kind: "dir" | "file" }> = [
  { name: AGENT_DIR, kind: "dir" },
  { name: "statecraft.config.json", kind: "file" },
  { name: ".mcp.json", kind: "file" },
];

/** Credentials every user has somewhere under their home folder. */
export const HIDDEN_IN_HOME: readonly string[] = [".ssh", ".aws", ".gnupg", ".netrc", ".npmrc", ".docker", ".kube", ".config/gcloud", ".git-credentials", ".pgpass"];

function real(p: string): string | undefined {
  try {
    return fs.realpathSync(p);
  } catch {
    return undefined;
  }
}

function kindOf(p: string): "dir" | "file" | undefined {
  try {
    return fs.statSync(p).isDirectory() ? "dir" : "file";
  } catch {
    return undefined;
  }
}

const expand = (p: string, home: string) => (p === "~" ? home : p.startsWith("~/") ? path.join(home, p.slice(2)) : p);

/**
 * The layout for a process started in `cwd` whose run works in `workspace` (with `additional` folders):
 * `hide` adds to the built-in hidden list. Paths are real paths (symlinks followed), so a link cannot bring a
 * hidden folder back under another name.
 */
export function sandboxLayout(input: { workspace: string; cwd?: string; additional?: readonly string[]; hide?: readonly string[]; env?: NodeJS.ProcessEnv; runs?: readonly string[] }): SandboxLayout {
  const env = input.env ?? process.env;
  const home = env.HOME !== undefined && path.isAbsolute(env.HOME) ? env.HOME : os.homedir();
  const roots = [input.workspace, ...(input.additional ?? [])].map((r) => real(path.resolve(input.workspace, expand(r, home))));
  const writable = [...new Set(roots.filter((r): r is string => r !== undefined && kindOf(r) === "dir"))];
  const readOnly: string[] = [];
  const missingProtected: SandboxLayout["missingProtected"] = [];
  for (const root of writable) {
    for (const { name, kind } of PROTECTED_NAMES) {
      const p = path.join(root, name);
      const found = real(p);
      if (found !== undefined) readOnly.push(found === p ? p : found, ...(found === p ? [] : [p]));
      else if (!isSymlink(p)) missingProtected.push({ path: p, kind });
    }
  }
  const candidates = [statecraftHome(env), ...HIDDEN_IN_HOME.map((h) => path.join(home, h)), ...(input.hide ?? []).map((h) => path.resolve(input.workspace, expand(h, home)))];
  const hidden: SandboxLayout["hidden"] = [];
  const seen = new Set<string>();
  for (const candidate of candidates) {
    const found = real(candidate);
    const kind = found === undefined ? undefined : kindOf(found);
    if (found === undefined || kind === undefined || seen.has(found)) continue;
    seen.add(found);
    hidden.push({ path: found, kind });
  }
  const cwd = real(path.resolve(input.cwd ?? input.workspace)) ?? path.resolve(input.cwd ?? input.workspace);
  return { writable, readOnly: [...new Set(readOnly)], missingProtected, hidden, revealedTmp: revealedTmp(input.runs ?? []), cwd };
}

/**
 * The entries of /tmp (its first level: `/tmp/project` for `/tmp/project/node_modules/x/index.js`) that hold the given
 * absolute paths; relative paths and paths elsewhere are not /tmp's concern.
 */
export function revealedTmp(paths: readonly string[]): string[] {
  const tmp = real("/tmp") ?? "/tmp";
  const out = new Set<string>();
  for (const p of paths) {
    if (!path.isAbsolute(p)) continue;
    const found = real(p);
    if (found === undefined) continue;
    const rel = path.relative(tmp, found);
    if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) continue;
    out.add(path.join(tmp, rel.split(path.sep)[0]!));
  }
  return [...out];
}

function isSymlink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}
