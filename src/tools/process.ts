import type { spawn as Spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import { AgentError } from "../errors/agent-error.js";
import { currentRunSandbox, DEFAULT_SANDBOX, runSandbox, type RefusedConnection, type RunSandbox } from "../sandbox/index.js";
import { hiddenFiles, toolEnv } from "./tool-env.js";

/**
 * node:child_process (and the net and stream modules under it) is required by the first command, not by
 * `import "statecraft"`; a synchronous require, since the promise below spawns in its executor.
 */
let spawnLoaded: typeof Spawn | undefined;
function spawnFn(): typeof Spawn {
  spawnLoaded ??= (createRequire(import.meta.url)("node:child_process") as typeof import("node:child_process")).spawn;
  return spawnLoaded;
}

/** How long processes get after SIGTERM before the group is sent SIGKILL. */
export const DEFAULT_KILL_GRACE_MS = 1_000;
/** Bytes kept per output stream (half from the start, half from the end). */
export const DEFAULT_MAX_STREAM_BYTES = 12_000;

export interface ProcessGroupOptions {
  cwd: string;
  /** Aborting kills the whole process group. */
  signal?: AbortSignal;
  /** After this many milliseconds the whole process group is killed. */
  timeoutMs?: number;
  /** Bytes kept per stream; the middle of longer output is dropped with a note. */
  maxStreamBytes?: number;
  /** Default: this process's environment less what is hidden from tools (tool-env.ts). */
  env?: NodeJS.ProcessEnv;
  /** Time between SIGTERM and SIGKILL. */
  killGraceMs?: number;
  /** The shell that runs the command with `-c`. Default bash, else sh. */
  shell?: string;
  /**
   * The sandbox the command runs in (docs/sandbox.md). Default: the sandbox of the run whose tool is calling, else
   * `sandbox: "auto"` with `cwd` as the workspace.
   */
  sandbox?: RunSandbox;
  /** Folders the command may write besides the workspace (a tool's `additionalDirectories`). */
  additionalDirectories?: readonly string[];
}

export interface ProcessGroupOutcome {
  /** The shell's exit code; a command killed by a signal gets 128 + the signal's number, as shells report it. */
  exitCode: number;
  /** The signal that ended the shell, when one did. */
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
  /** The process id of the shell (or of the sandbox around it), which is also the process group id. */
  pid: number;
  /** What the command ran inside: bubblewrap, sandbox-exec, or nothing (`sandbox: "off"`, or unsupported under `"auto"`). */
  sandbox: "bwrap" | "seatbelt" | "none";
  /** Connections the sandbox's proxy refused (`sandbox.network: { allow }`). */
  refused: RefusedConnection[];
}

/** Process groups still running, killed if this process exits first so nothing outlives it. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const pgid of liveGroups) killProcessGroup(pgid, "SIGKILL");
  });
}

/** Sends `signal` to every process of the group. False when the group no longer exists. */
export function killProcessGroup(pgid: number, signal: NodeJS.Signals | 0 = "SIGTERM"): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw error;
  }
}

/**
 * Whether any process of the group is still running. On Linux `/proc` is read, because a signal probe also counts
 * zombies: exited processes whose reaper (in containers, often a PID 1 that never reaps) has not collected them.
 */
export function processGroupExists(pgid: number): boolean {
  if (!killProcessGroup(pgid, 0)) return false;
  let pids: string[];
  try {
    pids = fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return true;
  }
  for (const pid of pids) {
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue;
    }
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so parse after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X" && !finishedExiting(pid, fields)) return true;
  }
  return false;
}

/** The kernel's PF_EXITING: the task has begun do_exit() and runs no code of its own again. */
const PF_EXITING = 0x4;

/**
 * A process that is only being torn down: one thread, already exiting, and no children. A sandbox's PID-namespace
 * init spends milliseconds so once the command has ended (the kernel unmounting its mount namespace); every process
 * of that namespace descends from it (orphans are reparented to it), so with no children nothing of the sandbox runs
 * any more, and waiting for the teardown would only add its time to every call.
 */
function finishedExiting(pid: string, fields: readonly string[]): boolean {
  // After the comm: state(0) ppid pgrp session tty_nr tpgid flags(6) … num_threads(17).
  if ((Number(fields[6]) & PF_EXITING) === 0 || fields[17] !== "1") return false;
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim() === "";
  } catch {
    return false; // no children file (a kernel without it): wait for the process as before
  }
}

let defaultShell: string | undefined;
function findShell(): string {
  defaultShell ??= ["/bin/bash", "/usr/bin/bash", "/bin/sh"].find((candidate) => fs.existsSync(candidate)) ?? "sh";
  return defaultShell;
}

/** Keeps the first and last `max / 2` bytes of a stream and counts what is dropped in between. */
class HeadTailBuffer {
  private readonly half: number;
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer = Buffer.alloc(0);
  private total = 0;

  constructor(max: number) {
    this.half = Math.max(1, Math.floor(max / 2));
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.headBytes < this.half) {
      const take = Math.min(this.half - this.headBytes, chunk.length);
      this.head.push(chunk.subarray(0, take));
      this.headBytes += take;
      chunk = chunk.subarray(take);
      if (chunk.length === 0) return;
    }
    const joined = this.tail.length === 0 ? chunk : Buffer.concat([this.tail, chunk]);
    this.tail = joined.length > this.half ? Buffer.from(joined.subarray(joined.length - this.half)) : joined;
  }

  text(label: string): string {
    const head = Buffer.concat(this.head);
    const omitted = this.total - head.length - this.tail.length;
    if (omitted <= 0) return Buffer.concat([head, this.tail]).toString("utf8");
    // Cut on character boundaries: UTF-8 continuation bytes look like 10xxxxxx.
    let headEnd = head.length;
    while (headEnd > 0 && (head[headEnd - 1] & 0xc0) === 0x80) headEnd--;
    if (headEnd > 0 && head[headEnd - 1] >= 0xc0) headEnd--;
    let tailStart = 0;
    while (tailStart < this.tail.length && (this.tail[tailStart] & 0xc0) === 0x80) tailStart++;
    const dropped = omitted + (head.length - headEnd) + tailStart;
    return (
      head.subarray(0, headEnd).toString("utf8") +
      `\n… [${dropped} bytes of ${label} omitted] …\n` +
      this.tail.subarray(tailStart).toString("utf8")
    );
  }
}

/** Exit code a shell reports for a command killed by `signal`: 128 + its number. */
function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (os.constants.signals[signal] ?? 0);
}

/** What runSpawned starts: a program, its arguments, environment and folder (the shell, or the sandbox around it). */
interface Spawned {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** bubblewrap says its init's pid on this descriptor (a pipe opened for it): see sandboxEnded. */
  infoFd?: number;
}

/** The file descriptor bubblewrap is given to say its init's pid on. */
const BWRAP_INFO_FD = 3;

/**
 * Whether the sandbox whose init (PID-namespace pid 1, seen from here as `init`) belonged to group `pgid` has ended.
 * Every process of the group but bubblewrap itself lives in that namespace, and every process of the namespace
 * descends from its init, which exits with the command: once it is gone, a zombie, or only being torn down (exiting,
 * childless), nothing of the group runs. One file read instead of scanning every process of the machine.
 */
function sandboxEnded(init: number, pgid: number): boolean {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${init}/stat`, "utf8");
  } catch {
    return true;
  }
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // A pid reused by a process of another group is not the init (which never leaves the group).
  if (Number(fields[2]) !== pgid) return true;
  return fields[0] === "Z" || fields[0] === "X" || finishedExiting(String(init), fields);
}

/**
 * Runs `command` with a shell in its own process group, inside the run's sandbox (src/sandbox/): bubblewrap or
 * sandbox-exec, the environment scrubbed of secrets. `sandbox: "required"` where no sandbox is available fails
 * `SANDBOX_UNAVAILABLE` before anything starts. See runSpawned for how the group is ended.
 */
export async function runInProcessGroup(command: string, options: ProcessGroupOptions): Promise<ProcessGroupOutcome> {
  if (options.signal?.aborted) {
    return { exitCode: 130, signal: null, stdout: "", stderr: "", timedOut: false, aborted: true, durationMs: 0, pid: 0, sandbox: "none", refused: [] };
  }
  const sandbox = options.sandbox ?? currentRunSandbox() ?? runSandbox(DEFAULT_SANDBOX, options.cwd, () => undefined);
  const env = options.env ?? toolEnv(process.env, sandbox.settings.env);
  const shell = options.shell ?? findShell();
  if (sandbox.settings.mode === "off") {
    const outcome = await runSpawned({ file: shell, args: ["-c", command], env, cwd: options.cwd }, options);
    return { ...outcome, sandbox: "none", refused: [] };
  }
  const { sandboxCommand } = await import("../sandbox/wrap.js");
  const wrapped = await sandboxCommand({
    file: shell,
    args: ["-c", command],
    workspace: sandbox.workspace,
    cwd: options.cwd,
    additional: options.additionalDirectories,
    settings: sandbox.settings,
    hide: hiddenFiles(),
    env,
    warn: (message) => sandbox.warn(message),
    infoFd: BWRAP_INFO_FD,
  });
  let outcome: Omit<ProcessGroupOutcome, "sandbox" | "refused">;
  try {
    outcome = await runSpawned(wrapped, options);
  } catch (error) {
    await wrapped.release();
    throw error;
  }
  const { refused } = await wrapped.release();
  return { ...outcome, sandbox: wrapped.sandbox, refused };
}

/**
 * Runs a program in its own process group (a new session, so the group id is the shell's pid).
 * On timeout or abort the whole group gets SIGTERM, then SIGKILL after a grace period; when the shell exits,
 * whatever it left running in the group is ended the same way. The promise settles once the group is gone
 * (or has been sent SIGKILL), so a call never leaves processes behind. Output is kept per stream, capped.
 */
function runSpawned(spawned: Spawned, options: ProcessGroupOptions): Promise<Omit<ProcessGroupOutcome, "sandbox" | "refused">> {
  const started = Date.now();
  const graceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const maxBytes = options.maxStreamBytes ?? DEFAULT_MAX_STREAM_BYTES;

  return new Promise<Omit<ProcessGroupOutcome, "sandbox" | "refused">>((resolve, reject) => {
    const child = spawnFn()(spawned.file, spawned.args, {
      cwd: spawned.cwd,
      env: spawned.env,
      detached: true,
      // A fourth pipe for bubblewrap's info (read below through child.stdio); typed as the three streams used here.
      stdio: (spawned.infoFd === BWRAP_INFO_FD ? ["ignore", "pipe", "pipe", "pipe"] : ["ignore", "pipe", "pipe"]) as ["ignore", "pipe", "pipe"],
    });
    // bubblewrap's `{ "child-pid": n }`, written as the sandbox is made, long before the command ends.
    let init: number | undefined;
    const info = spawned.infoFd === BWRAP_INFO_FD ? (child.stdio[BWRAP_INFO_FD] as import("node:stream").Readable | null) : null;
    if (info) {
      let text = "";
      info.on("data", (chunk: Buffer) => {
        text += chunk.toString("utf8");
        const found = /"child-pid"\s*:\s*(\d+)/.exec(text);
        if (found) init = Number(found[1]);
      });
      info.on("error", () => undefined);
    }
    /** Whether anything of the group still runs: the sandbox's init when known, else a scan of /proc. */
    const groupRunning = (pgid: number) => (init !== undefined ? !sandboxEnded(init, pgid) : processGroupExists(pgid));
    const stdout = new HeadTailBuffer(maxBytes);
    const stderr = new HeadTailBuffer(maxBytes);
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));

    const pgid = child.pid;
    let timedOut = false;
    let aborted = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let openStreams = 2;
    let groupEnded = false;
    let terminating = false;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];

    if (pgid !== undefined) {
      liveGroups.add(pgid);
      installExitHook();
    }

    let streamDeadlineSet = false;
    const finish = () => {
      if (settled || exit === undefined || !groupEnded) return;
      if (openStreams > 0) {
        // Pipes still held by processes outside the group (they left it with setsid) must not keep the call open.
        if (!streamDeadlineSet) {
          streamDeadlineSet = true;
          timers.push(
            setTimeout(() => {
              child.stdout.destroy();
              child.stderr.destroy();
            }, graceMs),
          );
        }
        return;
      }
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      if (pgid !== undefined) liveGroups.delete(pgid);
      const exitCode = exit.code ?? (exit.signal ? signalExitCode(exit.signal) : 1);
      resolve({
        exitCode,
        signal: exit.signal,
        stdout: stdout.text("stdout"),
        stderr: stderr.text("stderr"),
        timedOut,
        aborted,
        durationMs: Date.now() - started,
        pid: pgid ?? 0,
      });
    };

    /** SIGTERM to the group, then SIGKILL for whatever is still there after the grace period. */
    const terminateGroup = () => {
      if (terminating || pgid === undefined) return;
      terminating = true;
      if (!killProcessGroup(pgid, "SIGTERM")) {
        groupEnded = true;
        finish();
        return;
      }
      const deadline = Date.now() + graceMs;
      // What answered the signal may be only zombies awaiting their reaper (a sandbox's exited processes): nothing
      // runs, so the call ends now rather than after a timer.
      if (!groupRunning(pgid)) {
        groupEnded = true;
        finish();
        return;
      }
      const poll = () => {
        if (!groupRunning(pgid)) {
          groupEnded = true;
          return finish();
        }
        if (Date.now() >= deadline) {
          killProcessGroup(pgid, "SIGKILL");
          // SIGKILL can't be caught or ignored: the group is ending. Zombies awaiting their reaper are not running.
          groupEnded = true;
          return finish();
        }
        // Soon at first (a sandbox's last process is usually a moment behind the shell), then every 20 ms.
        wait = Math.min(20, wait * 2);
        timers.push(setTimeout(poll, wait));
      };
      let wait = 1;
      timers.push(setTimeout(poll, wait));
    };

    const onAbort = () => {
      if (exit !== undefined) return;
      aborted = true;
      terminateGroup();
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });

    if (options.timeoutMs !== undefined) {
      timers.push(
        setTimeout(() => {
          if (exit !== undefined) return;
          timedOut = true;
          terminateGroup();
        }, options.timeoutMs),
      );
    }

    const streamClosed = () => {
      openStreams--;
      finish();
    };
    child.stdout.on("close", streamClosed);
    child.stderr.on("close", streamClosed);

    child.on("error", (error) => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      if (pgid !== undefined) {
        liveGroups.delete(pgid);
        killProcessGroup(pgid, "SIGKILL");
      }
      reject(new AgentError("TOOL_FAILED", `could not start the shell in ${options.cwd}: ${error.message}`, { cause: error }));
    });

    child.on("exit", (code, signal) => {
      exit = { code, signal };
      // The shell is gone; anything it left running in its group (background jobs, daemons) goes too.
      terminateGroup();
      finish();
    });
  });
}
