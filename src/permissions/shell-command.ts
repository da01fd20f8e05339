import { parse, type ParseEntry } from "shell-quote";

/** One simple command of a command line, as permission rules see it. */
export interface ShellPart {
  /** Its words joined by single spaces (quotes removed, `$VAR` kept as written). */
  text: string;
  /**
   * The same command with leading `VAR=value` assignments and wrappers (`sudo`, `env`, `nohup`, `timeout 5`…)
   * removed, and with the program's bare name for `/bin/rm`-style paths: what deny and ask rules also look at.
   */
  aliases: string[];
}

/** A command line split into every simple command that would run. */
export interface ShellCommand {
  /** The command as written, trimmed. */
  source: string;
  /**
   * Top-level commands (split at `&&`, `||`, `;`, `|`, `&`, newlines, subshell parentheses) plus the commands
   * inside `$( )`, backticks, `<( )`, `sh -c '…'` and `eval`.
   */
  parts: ShellPart[];
  /** Whether the line is exactly one simple command with nothing nested: `source` then is that command as written. */
  simple: boolean;
}

/** Operators that end one simple command and start the next. */
const SEPARATORS = new Set(["&&", "||", ";", ";;", "|", "|&", "&", "(", ")", "<(", ">("]);
/** Words that run the rest of the line as a command. */
const WRAPPERS = new Set(["sudo", "doas", "env", "command", "builtin", "exec", "nohup", "time", "nice", "ionice", "timeout", "stdbuf", "setsid"]);
/** Wrapper options whose value is the next word (`sudo -u root rm …`). */
const OPTIONS_WITH_VALUE: Record<string, readonly string[]> = {
  sudo: ["-u", "-g", "-h", "-p", "-C", "-D", "-U", "-r", "-t", "-T", "--user", "--group", "--host", "--prompt", "--chdir"],
  doas: ["-u", "-C"],
  env: ["-u", "-C", "--unset", "--chdir"],
  nice: ["-n", "--adjustment"],
  ionice: ["-c", "-n", "-p", "--class", "--classdata"],
  timeout: ["-s", "-k", "--signal", "--kill-after"],
  stdbuf: ["-i", "-o", "-e"],
  time: ["-f", "-o", "--format", "--output"],
};
const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "fish"]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;
/** Nesting deeper than this is not taken apart further; the nested text is then one opaque part. */
const MAX_DEPTH = 8;

interface Scanned {
  /** The line with substitutions replaced by placeholders, unquoted newlines by `;`, comments removed. */
  outer: string;
  /** The original text of each placeholder, by index. */
  substitutions: string[];
  /** Command text inside each substitution. */
  nested: string[];
}

const placeholder = (index: number) => `__statecraft_sub_${index}__`;
const PLACEHOLDER = /__statecraft_sub_(\d+)__/g;

/** Index just past the `)` closing a `(` at `open`, honouring quotes and nesting; the end of text if unclosed. */
function closingParen(text: string, open: number): number {
  let depth = 0;
  let quote: "'" | '"' | undefined;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (quote === "'") {
      if (c === "'") quote = undefined;
      continue;
    }
    if (c === "\\") {
      i++;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = undefined;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return i + 1;
  }
  return text.length;
}

/** Index just past the backtick closing one at `open`; the end of text if unclosed. */
function closingBacktick(text: string, open: number): number {
  for (let i = open + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === "`") return i + 1;
  }
  return text.length;
}

/**
 * Walks the line once, tracking quotes, to find what shell-quote does not model: command substitution (which runs
 * even inside double quotes), newlines as command separators, and comments (which must not swallow a following line).
 */
function scan(command: string): Scanned {
  const substitutions: string[] = [];
  const nested: string[] = [];
  let outer = "";
  let quote: "'" | '"' | undefined;
  const substitute = (text: string, body: string) => {
    outer += placeholder(substitutions.length);
    substitutions.push(text);
    nested.push(body);
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (quote === "'") {
      outer += c;
      if (c === "'") quote = undefined;
      continue;
    }
    if (c === "\\") {
      // A backslash-newline joins lines; any other escaped character stays as written.
      if (command[i + 1] === "\n") i++;
      else {
        outer += command.slice(i, i + 2);
        i++;
      }
      continue;
    }
    if ((c === "$" || (quote === undefined && (c === "<" || c === ">"))) && command[i + 1] === "(") {
      const end = closingParen(command, i + 1);
      const text = command.slice(i, end);
      substitute(text, text.slice(2, text.endsWith(")") ? -1 : undefined));
      i = end - 1;
      continue;
    }
    if (c === "`") {
      const end = closingBacktick(command, i);
      const text = command.slice(i, end);
      substitute(text, text.slice(1, text.endsWith("`") && text.length > 1 ? -1 : undefined));
      i = end - 1;
      continue;
    }
    if (quote === '"') {
      outer += c;
      if (c === '"') quote = undefined;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      outer += c;
    } else if (c === "\n") {
      outer += ";";
    } else if (c === "#" && (i === 0 || /[\s;&|()]/.test(command[i - 1]))) {
      while (i + 1 < command.length && command[i + 1] !== "\n") i++;
    } else if (c === "#") {
      // Inside a word `#` is an ordinary character to the shell, but shell-quote would start a comment there.
      outer += "\\#";
    } else {
      outer += c;
    }
  }
  return { outer, substitutions, nested };
}

function restore(text: string, substitutions: readonly string[]): string {
  return text.replace(PLACEHOLDER, (_, index: string) => substitutions[Number(index)] ?? "");
}

function word(entry: ParseEntry, substitutions: readonly string[]): string | undefined {
  if (typeof entry === "string") return restore(entry, substitutions);
  if ("comment" in entry) return undefined;
  if (entry.op === "glob") return restore((entry as { pattern: string }).pattern, substitutions);
  return entry.op;
}

/** Strips assignments and wrapper commands from the front: `sudo -u x FOO=1 timeout 5 rm -rf a` → `rm -rf a`. */
function unwrap(words: readonly string[]): string[] {
  let rest = [...words];
  for (;;) {
    const before = rest.length;
    while (rest.length > 0 && ASSIGNMENT.test(rest[0])) rest = rest.slice(1);
    if (rest.length > 0 && WRAPPERS.has(basename(rest[0]))) {
      const withValue = OPTIONS_WITH_VALUE[basename(rest[0])] ?? [];
      rest = rest.slice(1);
      // The wrapper's own options and arguments (`-u user`, `-n 5`, `5s`) up to the command.
      while (rest.length > 1 && (rest[0].startsWith("-") || /^\d/.test(rest[0]) || ASSIGNMENT.test(rest[0]))) {
        const takesValue = withValue.includes(rest[0]);
        rest = rest.slice(takesValue ? 2 : 1);
      }
    }
    if (rest.length === before) return rest;
  }
}

function basename(program: string): string {
  const slash = program.lastIndexOf("/");
  return slash === -1 ? program : program.slice(slash + 1);
}

/** Splits a command line into every simple command that would run (see `ShellCommand`). */
export function analyzeShellCommand(command: string, depth = 0): ShellCommand {
  const source = command.trim();
  const { outer, substitutions, nested } = scan(source);
  let entries: ParseEntry[];
  try {
    entries = parse(outer, (name) => `$${name}`);
  } catch {
    // Unparseable (unbalanced quotes): one opaque part, which only an exact rule or a catch-all can match.
    return { source, parts: [{ text: source, aliases: [] }], simple: false };
  }

  const groups: string[][] = [[]];
  for (const entry of entries) {
    if (typeof entry === "object" && "op" in entry && SEPARATORS.has(entry.op)) {
      groups.push([]);
      continue;
    }
    const text = word(entry, substitutions);
    if (text !== undefined) groups[groups.length - 1].push(text);
  }

  const parts: ShellPart[] = [];
  const inner: string[] = [...nested];
  for (let words of groups) {
    // `{ a; b; }` groups: the braces are words to shell-quote.
    while (words[0] === "{") words = words.slice(1);
    while (words[words.length - 1] === "}") words = words.slice(0, -1);
    if (words.length === 0) continue;
    const text = words.join(" ");
    const unwrapped = unwrap(words);
    const aliases = new Set<string>();
    if (unwrapped.length > 0) {
      aliases.add(unwrapped.join(" "));
      if (unwrapped[0].includes("/")) aliases.add([basename(unwrapped[0]), ...unwrapped.slice(1)].join(" "));
      const program = basename(unwrapped[0]);
      // `bash -c '…'`, `sh -lc '…'`, `eval …`: the string is a command line of its own.
      if (SHELLS.has(program)) {
        const flag = unwrapped.findIndex((w, i) => i > 0 && /^-[A-Za-z]*c[A-Za-z]*$/.test(w));
        if (flag !== -1 && unwrapped[flag + 1] !== undefined) inner.push(unwrapped[flag + 1]);
      } else if (program === "eval" && unwrapped.length > 1) {
        inner.push(unwrapped.slice(1).join(" "));
      }
    }
    aliases.delete(text);
    parts.push({ text, aliases: [...aliases] });
  }

  for (const body of inner) {
    if (body.trim() === "") continue;
    if (depth >= MAX_DEPTH) {
      parts.push({ text: body.trim(), aliases: [] });
      continue;
    }
    parts.push(...analyzeShellCommand(body, depth + 1).parts);
  }
  const simple = parts.length === 1 && nested.length === 0 && inner.length === 0;
  return { source, parts, simple };
}
