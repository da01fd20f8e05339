import type { SyntaxNode } from "./bash-parser.js";

/** One word of a command (its name, an argument, an assignment, a redirection target), as rules see it. */
export interface ShellWord {
  /** Quotes and escapes removed; expansions (`$VAR`, `$(…)`) kept as written. */
  text: string;
  /** The word as written. */
  raw: string;
  /** Whether the shell reads it as `text` exactly: no expansion, substitution or `~user` in it. */
  static: boolean;
  /** Whether it has unquoted glob or brace characters (`*`, `?`, `[`, `{a,b}`), so it may stand for other names. */
  pattern: boolean;
  /** Whether it starts with an unquoted `~` (the home directory). */
  tilde: boolean;
}

const GLOB = /[*?[]/;

/** An unquoted word: backslash escapes removed (a backslash-newline joins lines), glob characters noticed. */
function bareWord(raw: string): { text: string; pattern: boolean } {
  let text = "";
  let pattern = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === "\\") {
      if (raw[i + 1] !== "\n") text += raw[i + 1] ?? "";
      i++;
      continue;
    }
    if (GLOB.test(c) || c === "{") pattern = true;
    text += c;
  }
  return { text, pattern };
}

/** Inside double quotes a backslash only escapes `$`, backtick, `"`, `\` and newline. */
function doubleQuoted(raw: string): string {
  return raw.replace(/\\([$`"\\\n])/g, (_, c: string) => (c === "\n" ? "" : c));
}

/** Evaluates a word node as far as it can be without running anything. */
export function shellWord(node: SyntaxNode): ShellWord {
  const raw = node.text;
  const word: ShellWord = { text: "", raw, static: true, pattern: false, tilde: false };
  const add = (part: SyntaxNode, first: boolean) => {
    switch (part.type) {
      case "word":
      case "number":
      case "command_name": {
        if (part.type === "command_name") {
          for (const [i, child] of part.namedChildren.entries()) add(child, first && i === 0);
          return;
        }
        const bare = bareWord(part.text);
        if (first && part.text.startsWith("~")) {
          word.tilde = true;
          // `~user` is another user's home: not something the analysis resolves.
          if (!/^~(\/|$)/.test(part.text)) word.static = false;
        }
        word.text += bare.text;
        if (bare.pattern) word.pattern = true;
        return;
      }
      case "raw_string":
        word.text += part.text.slice(1, -1);
        return;
      case "string":
        for (const child of part.children) {
          if (child.type === '"') continue;
          if (child.type === "string_content") word.text += doubleQuoted(child.text);
          else {
            word.text += child.text;
            word.static = false;
          }
        }
        return;
      case "concatenation":
        for (const [i, child] of part.children.entries()) add(child, first && i === 0);
        return;
      case "variable_assignment": {
        // `NAME=value`: the value is a word of its own (a tilde right after `=` expands too, but only there).
        const value = part.childForFieldName("value");
        word.text += `${part.childForFieldName("name")?.text ?? ""}=`;
        if (value) add(value, false);
        return;
      }
      case "brace_expression":
      case "extglob_pattern":
        word.text += part.text;
        word.pattern = true;
        return;
      default:
        // Expansions, substitutions, `$'…'`, `$"…"`, arrays: their value is only known when the shell runs.
        word.text += part.text;
        word.static = false;
    }
  };
  add(node, true);
  return word;
}
