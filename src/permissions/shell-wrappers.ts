import type { ShellWord } from "./shell-words.js";

/** How a wrapper's own options and operands sit in front of the command it runs. */
interface WrapperSpec {
  /** Short options without a value, as letters. */
  flags?: string;
  /** Short options that take a value (the next word, or the rest of the same word). */
  valued?: string;
  /** Long options without a value. */
  long?: readonly string[];
  /** Long options that take a value (`--opt value` or `--opt=value`). */
  longValued?: readonly string[];
  /** Operands before the command: `timeout 5 cmd`, `flock file cmd`, `chroot dir cmd`. */
  operands?: number;
  /** Options after which nothing is run (`command -v rm` only looks `rm` up). */
  noCommand?: readonly string[];
  /** The command is its words joined and run by `sh -c` (`watch 'a | b'`). */
  joinsLine?: boolean;
  /** Options whose value is a command line run by a shell (`flock file -c 'cmd'`). */
  lineOption?: readonly string[];
  /** `nice -5 cmd`: an option that is a bare number. */
  numericOption?: boolean;
}

/** Commands that run their arguments as a command. Options not listed here make the part opaque. */
const WRAPPERS: Record<string, WrapperSpec> = {
  sudo: { flags: "AbEHKkNnPS", valued: "CDghpRrTtUu", long: ["--background", "--preserve-env", "--non-interactive", "--stdin", "--reset-timestamp"], longValued: ["--user", "--group", "--host", "--prompt", "--chdir", "--chroot", "--close-from", "--role", "--type", "--command-timeout", "--other-user"] },
  doas: { flags: "n", valued: "uC" },
  env: { flags: "i0v", valued: "uC", long: ["--ignore-environment", "--null", "--debug"], longValued: ["--unset", "--chdir"] },
  command: { flags: "p", noCommand: ["-v", "-V"] },
  builtin: {},
  exec: { flags: "cl", valued: "a" },
  nohup: {},
  time: { flags: "apv", valued: "fo", long: ["--append", "--verbose", "--portability"], longValued: ["--format", "--output"] },
  nice: { valued: "n", longValued: ["--adjustment"], numericOption: true },
  ionice: { flags: "t", valued: "cnp", longValued: ["--class", "--classdata", "--pid"] },
  timeout: { flags: "v", valued: "sk", long: ["--preserve-status", "--foreground", "--verbose"], longValued: ["--signal", "--kill-after"], operands: 1 },
  stdbuf: { valued: "ioe", longValued: ["--input", "--output", "--error"] },
  setsid: { flags: "cfw", long: ["--ctty", "--fork", "--wait"] },
  xargs: {
    flags: "0prtx",
    valued: "adELnPs",
    long: ["--null", "--no-run-if-empty", "--interactive", "--verbose", "--exit", "--open-tty"],
    longValued: ["--arg-file", "--delimiter", "--eof", "--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"],
  },
  watch: { flags: "bcegptwx", valued: "nq", long: ["--beep", "--color", "--errexit", "--chgexit", "--precise", "--no-title", "--no-wrap", "--exec", "--differences"], longValued: ["--interval", "--equexit"], joinsLine: true },
  flock: { flags: "sexnuoF", valued: "wE", long: ["--shared", "--exclusive", "--nonblock", "--unlock", "--close", "--no-fork", "--verbose"], longValued: ["--timeout", "--wait", "--conflict-exit-code"], operands: 1, lineOption: ["-c", "--command"] },
  strace: { flags: "cCdDfFhiqrtTvVwxyYzZk", valued: "abeEIoOpPsSuUX" },
  ltrace: { flags: "bcCfhiLrStTV", valued: "aAeFlnopsuwxD" },
  unshare: { flags: "CfimnpTrUuc", long: ["--fork", "--mount", "--uts", "--ipc", "--net", "--pid", "--user", "--cgroup", "--time", "--map-root-user", "--map-current-user", "--kill-child", "--mount-proc"], longValued: ["--propagation", "--setgroups", "--wd", "--root"] },
  chrt: { flags: "abdfiopRrv", long: ["--all-tasks", "--batch", "--deadline", "--fifo", "--idle", "--other", "--rr", "--reset-on-fork", "--verbose"], valued: "TPD", operands: 1 },
  taskset: { flags: "ac", long: ["--all-tasks", "--cpu-list"], operands: 1 },
  chroot: { long: ["--skip-chdir"], longValued: ["--userspec", "--groups"], operands: 1 },
  nocache: {},
  eatmydata: {},
  fakeroot: {},
  torsocks: {},
  proxychains: { flags: "q", valued: "f" },
  proxychains4: { flags: "q", valued: "f" },
  catchsegv: {},
  busybox: {},
  "dbus-run-session": {},
  pkexec: { longValued: ["--user"] },
  caffeinate: { flags: "dimsu", valued: "tw" },
};

/** Shells: `-c` runs a command line; without `-c` and a script operand they read commands from their input. */
export const SHELLS = new Set(["sh", "bash", "rbash", "zsh", "dash", "ash", "ksh", "mksh", "fish", "csh", "tcsh"]);
const SHELL_LONG = new Set(["--login", "--norc", "--noprofile", "--posix", "--restricted", "--verbose", "--noediting", "--protected", "--no-rcs"]);
const SHELL_LONG_VALUED = new Set(["--rcfile", "--init-file"]);

/** What a wrapper or shell word sequence runs. */
export type Unwrapped =
  | { kind: "none" }
  /** The words of the command it runs. */
  | { kind: "command"; words: ShellWord[] }
  /** A command line a shell parses (`bash -c '…'`, `watch 'a | b'`, `eval …`). */
  | { kind: "line"; line: string }
  /** Something the analysis can't follow: why, in words. */
  | { kind: "opaque"; why: string };

export function basename(program: string): string {
  const slash = program.lastIndexOf("/");
  return slash === -1 ? program : program.slice(slash + 1);
}

export function isWrapper(program: string): boolean {
  return Object.hasOwn(WRAPPERS, program);
}

/** The words a line-running option or `-c` hands a shell, which must be fully known to be followed. */
function line(words: readonly ShellWord[], what: string): Unwrapped {
  if (words.length === 0) return { kind: "opaque", why: `${what} has no command line to run` };
  const unknown = words.find((word) => !word.static);
  if (unknown) return { kind: "opaque", why: `${what} runs ${unknown.raw}, which is only known when the shell runs` };
  return { kind: "line", line: words.map((word) => word.text).join(" ") };
}

/** What `words` (a wrapper, with its name first) runs. */
export function unwrapWrapper(words: readonly ShellWord[]): Unwrapped {
  const name = basename(words[0].text);
  const spec = WRAPPERS[name];
  let i = 1;
  const opaque = (why: string): Unwrapped => ({ kind: "opaque", why: `${name}: ${why}` });
  for (; i < words.length; i++) {
    const word = words[i];
    if (!word.static) return opaque(`option ${word.raw} is only known when the shell runs`);
    const text = word.text;
    if (name === "env" && /^[A-Za-z_][A-Za-z0-9_]*=/.test(text)) continue;
    if (text === "--") {
      i++;
      break;
    }
    if (!text.startsWith("-") || text === "-") break;
    if (spec.noCommand?.includes(text)) return { kind: "none" };
    if (spec.lineOption?.includes(text)) return line(words.slice(i + 1, i + 2), `${name} ${text}`);
    if (text.startsWith("--")) {
      const [option] = text.split("=", 1);
      if (spec.long?.includes(option)) continue;
      if (spec.longValued?.includes(option)) {
        if (!text.includes("=")) i++;
        continue;
      }
      return opaque(`option ${text} is not one the analysis knows`);
    }
    if (spec.numericOption && /^-\d+$/.test(text)) continue;
    // A cluster of short options: flags, then at most one option that takes the rest or the next word.
    let j = 1;
    for (; j < text.length; j++) {
      const letter = text[j];
      if (spec.flags?.includes(letter)) continue;
      if (spec.valued?.includes(letter)) {
        if (j === text.length - 1) i++;
        break;
      }
      return opaque(`option -${letter} is not one the analysis knows`);
    }
  }
  // Operands before the command (`timeout 5`, `flock file`), then the `-c` of `flock file -c '…'`.
  i += spec.operands ?? 0;
  if (spec.lineOption && spec.lineOption.includes(words[i]?.text ?? "")) return line(words.slice(i + 1, i + 2), `${name} ${words[i].text}`);
  const rest = words.slice(i);
  if (rest.length === 0) return { kind: "none" };
  if (spec.joinsLine) return line(rest, name);
  return { kind: "command", words: rest };
}

/** What a shell invocation (`bash -c '…'`, `sh script.sh`, `bash` reading its input) runs. */
export function unwrapShell(words: readonly ShellWord[]): Unwrapped {
  const name = basename(words[0].text);
  let commandMode = false;
  let i = 1;
  for (; i < words.length; i++) {
    const word = words[i];
    if (!word.static) return { kind: "opaque", why: `${name}: argument ${word.raw} is only known when the shell runs` };
    const text = word.text;
    if (text === "--") {
      i++;
      break;
    }
    if (text === "-") return { kind: "opaque", why: `${name} - reads the commands it runs from its input` };
    if (!/^[-+]/.test(text)) break;
    if (text.startsWith("--")) {
      if (SHELL_LONG.has(text)) continue;
      if (SHELL_LONG_VALUED.has(text)) {
        i++;
        continue;
      }
      return { kind: "opaque", why: `${name}: option ${text} is not one the analysis knows` };
    }
    for (const letter of text.slice(1)) {
      if (letter === "c") commandMode = true;
      else if (letter === "o" || letter === "O") i++;
      else if (letter === "s" || letter === "i") return { kind: "opaque", why: `${name} -${letter} reads the commands it runs from its input` };
      else if (!/[a-zA-Z]/.test(letter)) return { kind: "opaque", why: `${name}: option ${text} is not one the analysis knows` };
    }
  }
  if (commandMode) return line(words.slice(i, i + 1), `${name} -c`);
  // A script file: it runs what the file says, as any program does; rules see `bash script.sh`.
  if (i < words.length) return { kind: "none" };
  return { kind: "opaque", why: `${name} without -c or a script reads the commands it runs from its input` };
}
