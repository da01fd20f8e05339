import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { stripAnsi } from "../../../src/cli/colors.js";

/** The built command line, as the package's "bin" runs it (test/global-setup.ts builds dist/ once). */
export const CLI = fileURLToPath(new URL("../../../dist/cli/main.js", import.meta.url));

/** Variables that would change what the CLI does; tests start from an environment without them. */
const CONTROLLED = ["OPENAI_API_KEY", "OPENAI_BASE_URL", "STATECRAFT_MODEL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "STATECRAFT_PROVIDER", "STATECRAFT_LOG_LEVEL", "NO_COLOR", "FORCE_COLOR", "TMPDIR"];

/** Where the CLI looks for the user's config (and trusted folders) unless a test says: a folder that never exists. */
export const NO_USER_CONFIG = join(tmpdir(), "statecraft-tests-no-user-config");

export function cliEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: NO_USER_CONFIG };
  for (const name of CONTROLLED) delete env[name];
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** A real temporary folder, removed by `cleanup()`. */
export function makeTempDir(prefix = "statecraft-cli-"): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  cwd: string;
  env?: Record<string, string | undefined>;
  /** Written to stdin, which is then closed. Without it stdin is closed at once (like `< /dev/null`). */
  input?: string;
  /** Leave stdin open (nothing written): proves a command does not wait for it. */
  keepStdinOpen?: boolean;
}

/** A running CLI process with its output so far. */
export class CliProcess {
  stdout = "";
  stderr = "";
  /** The process has ended (and its output is complete). */
  exited = false;
  readonly done: Promise<CliResult>;
  private waiters: Array<() => void> = [];

  constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (text: string) => {
      this.stdout += text;
      this.notify();
    });
    child.stderr.on("data", (text: string) => {
      this.stderr += text;
      this.notify();
    });
    this.done = new Promise((resolve) => {
      child.on("close", (code, signal) => {
        this.exited = true;
        this.notify();
        resolve({ code, signal, stdout: this.stdout, stderr: this.stderr });
      });
    });
  }

  /** Output as a person sees it: colours removed, terminal line endings made plain. */
  get screen(): string {
    return stripAnsi(this.stdout).replace(/\r\n/g, "\n");
  }

  /** Where the output (stdout, as `screen`) ends now: pass it to `waitFor` to look only at what comes after. */
  mark(): number {
    return this.screen.length;
  }

  /**
   * Resolves once `pattern` shows up on stdout (colours removed), after position `since` when given, or on stderr;
   * rejects when the process ends first.
   */
  async waitFor(pattern: RegExp | string, options: { since?: number; stream?: "stdout" | "stderr" } = {}): Promise<void> {
    const seen = () => {
      const text = options.stream === "stderr" ? this.stderr : this.screen.slice(options.since ?? 0);
      return typeof pattern === "string" ? text.includes(pattern) : pattern.test(text);
    };
    while (!seen()) {
      if (this.exited) throw new Error(`process ended before ${String(pattern)} appeared.\nstdout:\n${this.stdout}\nstderr:\n${this.stderr}`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  write(text: string): void {
    this.child.stdin.write(text);
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

/** Starts `statecraft <args>` with pipes for stdin, stdout and stderr (no terminal). */
export function startCli(args: readonly string[], options: CliOptions): CliProcess {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: options.cwd, env: cliEnv(options.env), stdio: "pipe" });
  const proc = new CliProcess(child);
  if (options.input !== undefined) child.stdin.end(options.input);
  else if (!options.keepStdinOpen) child.stdin.end();
  return proc;
}

/** Runs `statecraft <args>` to the end. */
export function runCli(args: readonly string[], options: CliOptions): Promise<CliResult> {
  return startCli(args, options).done;
}

function shellWord(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * Starts `statecraft <args>` on a pseudo-terminal, through util-linux `script` (always on Debian): the CLI sees a
 * TTY on stdin and stdout, keys written with `write()` are typed on it ("\u0003" is Ctrl-C, delivered as SIGINT
 * by the terminal unless the program reads raw keys), and `script -e` exits with the CLI's exit code.
 */
export function startCliOnTerminal(args: readonly string[], options: Omit<CliOptions, "input" | "keepStdinOpen">): CliProcess {
  const command = ["stty cols 120 rows 40 2>/dev/null;", "exec", shellWord(process.execPath), shellWord(CLI), ...args.map(shellWord)].join(" ");
  const child = spawn("script", ["-qfec", command, "/dev/null"], { cwd: options.cwd, env: cliEnv(options.env), stdio: "pipe" });
  return new CliProcess(child);
}
