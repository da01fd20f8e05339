import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { AgentError } from "../errors/agent-error.js";
import { BRIDGE_SOURCE, BRIDGE_PORT, proxyEnv, SOCAT_BRIDGE_SCRIPT, socatSafePath } from "./bridge.js";
import { bwrapArgs } from "./bwrap-args.js";
import { sandboxLayout, type SandboxLayout } from "./layout.js";
import { startAllowListProxy, type AllowListProxy, type RefusedConnection } from "./proxy.js";
import { seatbeltProfile } from "./seatbelt-profile.js";
import type { ResolvedSandbox } from "./settings.js";
import { findOnPath, sandboxSupport, type SandboxSupport } from "./support.js";

/** A process to start, and the run it belongs to. */
export interface SandboxRequest {
  file: string;
  args: readonly string[];
  /** The run's workspace (read-write) and the folder the process starts in (default: the workspace). */
  workspace: string;
  cwd?: string;
  /** More read-write folders (a tool's `additionalDirectories`). */
  additional?: readonly string[];
  settings: ResolvedSandbox;
  /** More paths hidden (a host's secret files), beside `settings.hide`. */
  hide?: readonly string[];
  /** The environment the process gets (already scrubbed). */
  env: NodeJS.ProcessEnv;
  /** The process is not made a session leader by its starter (an MCP server): bubblewrap gives it a session. */
  newSession?: boolean;
  /** Said once when the process runs unsandboxed under `"auto"`. */
  warn?: (message: string) => void;
  /**
   * A file descriptor the starter opens (a pipe) for bubblewrap to say its init's pid on (`infoFd` of the result is
   * then set): the starter can tell the sandbox has ended by that one process instead of scanning every process.
   */
  infoFd?: number;
}

/** What to spawn instead, and what to do once it has ended. */
export interface SandboxedCommand {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** bubblewrap, sandbox-exec, or none (`off`, or unsupported under `auto`). */
  sandbox: "bwrap" | "seatbelt" | "none";
  /** The request's `infoFd`, when bubblewrap writes its init's pid there (JSON `{ "child-pid": n }`). */
  infoFd?: number;
  /** Undoes what was set up (proxy, placeholders, temporary folder); gives the connections the proxy refused. */
  release(): Promise<{ refused: RefusedConnection[] }>;
}

const nothing = async () => ({ refused: [] as RefusedConnection[] });

/** The message of SANDBOX_UNAVAILABLE and of `auto`'s warning: what is missing and how to get it. */
export function unavailableMessage(support: Extract<SandboxSupport, { kind: "none" }>, mode: "auto" | "required"): string {
  return mode === "required"
    ? `sandbox "required" but ${support.reason}; the process was not started. Fix: ${support.fix}. (Or set sandbox: "auto" to run unsandboxed where it is unsupported.)`
    : `processes of this run are not sandboxed: ${support.reason}. Fix: ${support.fix}; sandbox: "required" refuses to run them unsandboxed.`;
}

/**
 * How to start `request` inside the sandbox its settings ask for: bubblewrap on Linux, sandbox-exec on macOS. `off`
 * starts it as it is; where neither is available `auto` does too (warning once) and `required` throws
 * `SANDBOX_UNAVAILABLE`. Call `release()` once the process has ended.
 */
export async function sandboxCommand(request: SandboxRequest): Promise<SandboxedCommand> {
  const cwd = request.cwd ?? request.workspace;
  const plain: SandboxedCommand = { file: request.file, args: [...request.args], env: request.env, cwd, sandbox: "none", release: nothing };
  const { settings } = request;
  if (settings.mode === "off") return plain;
  const support = sandboxSupport();
  if (support.kind === "none") {
    if (settings.mode === "required") throw new AgentError("SANDBOX_UNAVAILABLE", unavailableMessage(support, "required"));
    request.warn?.(unavailableMessage(support, "auto"));
    return plain;
  }
  // Where the statecraft folder and the home folder are is this process's view (its STATECRAFT_HOME), not the scrubbed
  // environment the process gets, which no longer names it.
  // What the process runs may sit under /tmp (a project, a Node build): shown read-only over the private /tmp.
  const runs = [request.file, ...request.args, process.execPath, ...(request.env.PATH ?? "").split(path.delimiter)];
  const layout = sandboxLayout({ workspace: request.workspace, cwd, additional: request.additional, hide: [...settings.hide, ...(request.hide ?? [])], env: process.env, runs });
  const placeholders = makePlaceholders(layout);
  const cleanups: Array<() => Promise<void> | void> = [() => removePlaceholders(placeholders)];
  let proxy: AllowListProxy | undefined;
  try {
    const network = settings.network;
    const allow = typeof network === "object" ? network.allow : undefined;
    let scratch: string | undefined;
    if (allow !== undefined || support.kind === "seatbelt") {
      scratch = fs.mkdtempSync(path.join(os.tmpdir(), "statecraft-sandbox-"));
      const dir = scratch;
      cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    }
    if (allow !== undefined) {
      proxy = await startAllowListProxy(path.join(scratch!, "proxy.sock"), allow);
      const started = proxy;
      cleanups.push(() => started.close());
    }
    const env = proxy ? { ...request.env, ...proxyEnv() } : request.env;
    const inner = proxy ? bridged(support.kind, proxy.socket, request.file, request.args) : [request.file, ...request.args];
    const wrapped: SandboxedCommand = {
      file: support.program,
      args: [],
      env,
      cwd: layout.cwd,
      sandbox: support.kind,
      release: async () => {
        const refused = proxy ? [...proxy.refused] : [];
        // Once: a second call finds nothing left to undo.
        for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
        return { refused };
      },
    };
    if (support.kind === "bwrap") {
      const infoFd = request.infoFd;
      wrapped.args = [...bwrapArgs({ layout, hostNetwork: network === "host", ...(proxy ? { proxySocket: proxy.socket } : {}), newSession: request.newSession === true, ...(infoFd !== undefined ? { infoFd } : {}) }), ...inner];
      if (infoFd !== undefined) wrapped.infoFd = infoFd;
    } else {
      const tmp = path.join(scratch!, "tmp");
      fs.mkdirSync(tmp);
      const profile = seatbeltProfile({ layout, hostNetwork: network === "host", tmp, ...(proxy ? { proxyPort: BRIDGE_PORT } : {}) });
      wrapped.env = { ...env, TMPDIR: tmp };
      wrapped.args = ["-p", profile, ...inner];
    }
    return wrapped;
  } catch (error) {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    throw error;
  }
}

let socat: string | undefined | null = null;

/** What runs in the sandbox with an allow-list: the bridge to the proxy, which then runs the command. */
function bridged(kind: "bwrap" | "seatbelt", socket: string, file: string, args: readonly string[]): string[] {
  // Looked up once per process: the host's PATH, whose programs the sandbox shows read-only at the same paths.
  if (socat === null) socat = findOnPath("socat", process.env.PATH);
  // Only bubblewrap gives the sandbox a loopback of its own; sandbox-exec's bridge is Node's.
  if (kind === "bwrap" && socat !== undefined && socatSafePath(socket)) return ["/bin/sh", "-c", SOCAT_BRIDGE_SCRIPT, "statecraft-bridge", socat, socket, file, ...args];
  return [process.execPath, "-e", BRIDGE_SOURCE, socket, file, ...args];
}

/**
 * Protected names missing from a writable root are made (empty) for the process's life and mounted read-only, so it
 * cannot create them; they are removed again when the last process using them ends and they are still empty.
 */
const placeholderUsers = new Map<string, number>();

function makePlaceholders(layout: SandboxLayout): string[] {
  const made: string[] = [];
  for (const { path: p, kind } of layout.missingProtected) {
    const users = placeholderUsers.get(p) ?? 0;
    if (users === 0) {
      try {
        if (kind === "dir") fs.mkdirSync(p);
        else fs.writeFileSync(p, "", { flag: "wx" });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
    }
    placeholderUsers.set(p, users + 1);
    made.push(p);
  }
  return made;
}

function removePlaceholders(made: readonly string[]): void {
  for (const p of made) {
    const users = (placeholderUsers.get(p) ?? 1) - 1;
    if (users > 0) {
      placeholderUsers.set(p, users);
      continue;
    }
    placeholderUsers.delete(p);
    try {
      const stat = fs.lstatSync(p);
      if (stat.isDirectory() && fs.readdirSync(p).length === 0) fs.rmdirSync(p);
      else if (stat.isFile() && stat.size === 0) fs.unlinkSync(p);
    } catch {
      // gone already
    }
  }
}
