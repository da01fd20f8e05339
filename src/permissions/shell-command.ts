import { withBashTree, type SyntaxNode } from "./bash-parser.js";
import { basename, isWrapper, SHELLS, unwrapShell, unwrapWrapper, type Unwrapped } from "./shell-wrappers.js";
import { shellWord, type ShellWord } from "./shell-words.js";

export type { ShellWord } from "./shell-words.js";

/** A redirection of one simple command (or of a group it is in). */
export interface ShellRedirect {
  /** The operator: `>`, `>>`, `<`, `&>`, `&>>`, `>|`, `<>`, `>&`, `<&`. */
  operator: string;
  /** The file it opens; undefined for a descriptor copy (`2>&1`, `<&-`). */
  target?: ShellWord;
  /** Whether it opens the file for writing. */
  writes: boolean;
  /** As written (`2>/dev/null`). */
  text: string;
}

/** One simple command of a command line, as permission rules see it. */
export interface ShellPart {
  /** Its words joined by single spaces (quotes removed, `$VAR` kept as written), then its redirections. */
  text: string;
  /**
   * The same command with leading `VAR=value` assignments and wrappers (`sudo`, `env`, `nohup`, `timeout 5`…)
   * removed, without redirections, and with the program's bare name for `/bin/rm`-style paths: what deny and ask
   * rules also look at.
   */
  aliases: string[];
  /** Its words: assignments, the command name and its arguments. */
  args: ShellWord[];
  /** Its redirections, including those of a `{ …; }` group or subshell it is in. */
  redirects: ShellRedirect[];
  /**
   * Set when the analysis could not fully understand this part (text the parser could not parse, a command name
   * built by expansion, grammar it does not take apart): why, in words. No allow rule allows such a command, and
   * deny and ask rules treat it as matching.
   */
  opaque?: string;
}

/** A command line split into every simple command that would run. */
export interface ShellCommand {
  /** The command as written, trimmed. */
  source: string;
  /**
   * Every simple command: those of lists, pipelines, `if`/`while`/`until`/`for` bodies, `{ }` groups, subshells and
   * function bodies, those inside `$( )`, backticks, `<( )` and heredocs, the commands wrappers run (`timeout 5 rm x`
   * also has the part `rm x`) and the command lines shells and `eval` run.
   */
  parts: ShellPart[];
  /** Whether the line is exactly one simple command with nothing nested: `source` then is that command as written. */
  simple: boolean;
  /** Why the line is not fully understood (the first opaque part's reason); undefined when it is. */
  opaque?: string;
  /** Whether it changes directory (`cd`, `pushd`, `popd`), so relative paths after that point elsewhere. */
  changesDirectory: boolean;
}

/** Nesting deeper than this (`bash -c "bash -c …"`) is not followed; the nested text is then one opaque part. */
const MAX_DEPTH = 8;
/** Container statements whose named children are statements (or comments). */
const CONTAINERS = new Set(["program", "list", "pipeline", "subshell", "do_group", "if_statement", "elif_clause", "else_clause", "while_statement", "negated_command"]);
/** Builtins that change how later commands are found or run, or run strings of their own. */
const OPAQUE_COMMANDS: Record<string, string> = {
  alias: "alias changes what later command names mean",
  hash: "hash changes which program a command name runs",
  enable: "enable loads or switches builtins",
  trap: "trap runs a command line later",
  shopt: "shopt changes how the shell reads what follows",
  coproc: "coproc is grammar the analysis does not take apart",
  declare: "declare can evaluate arithmetic and change variables' meaning",
  typeset: "typeset can evaluate arithmetic and change variables' meaning",
  let: "let evaluates arithmetic, which can run commands through array subscripts",
  mapfile: "mapfile can run a callback command",
  readarray: "readarray can run a callback command",
  bind: "bind can run commands",
  complete: "complete can run commands",
  fc: "fc runs commands from history",
  parallel: "parallel builds command lines from its input",
  su: "su runs a command line as another user",
  runuser: "runuser runs a command line as another user",
  sg: "sg runs a command line as another group",
  script: "script runs a command line",
  "systemd-run": "systemd-run starts commands the analysis does not follow",
  nsenter: "nsenter starts commands the analysis does not follow",
  firejail: "firejail starts commands the analysis does not follow",
};
const DIRECTORY_CHANGERS = new Set(["cd", "pushd", "popd"]);
const WRITING = new Set([">", ">>", "&>", "&>>", ">|", "<>"]);

interface Walk {
  parts: ShellPart[];
  depth: number;
  changesDirectory: boolean;
  /** Parts found inside substitutions, wrappers, shells, groups, loops: the line is then not one simple command. */
  nested: number;
}

function opaquePart(text: string, why: string): ShellPart {
  return { text: text.trim(), aliases: [], args: [], redirects: [], opaque: why };
}

/** Walks the statements of `node`, each simple command becoming a part. */
function statement(node: SyntaxNode, walk: Walk, redirects: readonly ShellRedirect[]): void {
  const type = node.type;
  if (type === "comment") return;
  if (CONTAINERS.has(type)) {
    if (type !== "program") walk.nested++;
    for (const child of node.namedChildren) statement(child, walk, redirects);
    return;
  }
  switch (type) {
    case "command":
      command(node, walk, redirects);
      return;
    case "redirected_statement": {
      const own = [...redirects];
      for (const redirect of node.childrenForFieldName("redirect")) {
        const parsed = redirection(redirect, walk);
        if (parsed === "opaque") return unknown(node, walk, "a heredoc followed by more commands is grammar the analysis does not take apart");
        own.push(...parsed);
      }
      const body = node.childForFieldName("body");
      if (body && body.type !== "command") walk.nested++;
      if (body) statement(body, walk, own);
      return;
    }
    case "compound_statement":
      // `{ …; }` is a group; `(( … ))` parses as a compound statement too, and is arithmetic.
      if (node.children[0]?.type === "{") {
        walk.nested++;
        for (const child of node.namedChildren) statement(child, walk, redirects);
        return;
      }
      return unknown(node, walk, "arithmetic (( … )) can run commands through array subscripts");
    case "for_statement": {
      if (node.children[0]?.type !== "for") return unknown(node, walk, `${node.children[0]?.text ?? "this loop"} is grammar the analysis does not take apart`);
      walk.nested++;
      for (const value of node.childrenForFieldName("value")) nestedIn(value, walk);
      const body = node.childForFieldName("body");
      if (body) statement(body, walk, redirects);
      return;
    }
    case "function_definition": {
      walk.nested++;
      const body = node.childForFieldName("body");
      if (body) statement(body, walk, redirects);
      for (const redirect of node.childrenForFieldName("redirect")) nestedIn(redirect, walk);
      return;
    }
    case "variable_assignment":
    case "variable_assignments":
    case "declaration_command":
    case "unset_command": {
      const keyword = node.children[0]?.type;
      const words = node.namedChildren.filter((child) => child.type !== "comment");
      if (type === "declaration_command" && (keyword === "declare" || keyword === "typeset" || words.some((w) => w.text.startsWith("-")))) {
        return unknown(node, walk, `${keyword ?? "declare"} with options can evaluate arithmetic and change variables' meaning`);
      }
      for (const word of words) nestedIn(word, walk);
      const args = type === "variable_assignment" ? [shellWord(node)] : words.map(shellWord);
      if (type === "declaration_command" || type === "unset_command") {
        const first = node.children[0];
        args.unshift({ text: first.text, raw: first.text, static: true, pattern: false, tilde: false });
      }
      walk.parts.push(finish({ text: "", aliases: [], args, redirects: [...redirects] }));
      return;
    }
    default:
      return unknown(node, walk, node.type === "ERROR" ? "part of it is not valid bash" : `${describe(node)} is grammar the analysis does not take apart`);
  }
}

function describe(node: SyntaxNode): string {
  const names: Record<string, string> = { test_command: "[[ … ]]", case_statement: "case", c_style_for_statement: "for (( … ))" };
  return names[node.type] ?? node.type.replace(/_/g, " ");
}

/**
 * Something not understood: one opaque part for it, plus whatever commands can still be found inside (so a deny
 * rule that names one of them still denies, rather than asks).
 */
function unknown(node: SyntaxNode, walk: Walk, why: string): void {
  walk.parts.push(opaquePart(node.text, why));
  descend(node, walk);
}

const STATEMENTS = new Set([...CONTAINERS, "command", "redirected_statement", "compound_statement", "for_statement", "function_definition", "variable_assignment", "variable_assignments", "declaration_command", "unset_command", "test_command", "case_statement", "c_style_for_statement"]);

function descend(node: SyntaxNode, walk: Walk): void {
  for (const child of node.namedChildren) {
    if (STATEMENTS.has(child.type)) statement(child, walk, []);
    else if (child.type === "command_substitution" || child.type === "process_substitution") substitution(child, walk);
    else descend(child, walk);
  }
}

/** The commands inside `$( )`, backticks and `<( )` anywhere in `node`. */
function nestedIn(node: SyntaxNode, walk: Walk): void {
  if (node.type === "command_substitution" || node.type === "process_substitution") substitution(node, walk);
  else for (const child of node.namedChildren) nestedIn(child, walk);
}

function substitution(node: SyntaxNode, walk: Walk): void {
  walk.nested++;
  for (const child of node.namedChildren) statement(child, walk, []);
}

/** A redirection's file redirections (none for a heredoc's or herestring's input text), or "opaque". */
function redirection(node: SyntaxNode, walk: Walk): ShellRedirect[] | "opaque" {
  if (node.type === "herestring_redirect") {
    nestedIn(node, walk);
    return [];
  }
  if (node.type === "heredoc_redirect") {
    // tree-sitter hangs what follows the heredoc's first line under it: file redirections (`cat <<EOF > f`) are
    // taken as the command's; commands (`cat <<EOF | rm x`) are not taken apart here.
    const own: ShellRedirect[] = [];
    for (const child of node.namedChildren) {
      if (child.type === "file_redirect") own.push(...fileRedirect(child, walk));
      else if (["heredoc_start", "heredoc_body", "heredoc_end", "file_descriptor"].includes(child.type)) nestedIn(child, walk);
      else return "opaque";
    }
    return own;
  }
  if (node.type !== "file_redirect") return "opaque";
  return fileRedirect(node, walk);
}

function fileRedirect(node: SyntaxNode, walk: Walk): ShellRedirect[] {
  nestedIn(node, walk);
  const operator = node.children.find((child) => !child.isNamed)?.type ?? "";
  const destination = node.childrenForFieldName("destination");
  const text = node.text;
  if (destination.length === 0 && operator.endsWith("-")) return [{ operator, writes: false, text }];
  if (destination.length !== 1) return [{ operator, writes: true, text, target: { text: "", raw: text, static: false, pattern: false, tilde: false } }];
  const target = shellWord(destination[0]);
  // `2>&1`, `<&0`, `>&-`: a descriptor copy or close, not a file.
  if ((operator === ">&" || operator === "<&") && (destination[0].type === "number" || /^(\d+-?|-)$/.test(target.text))) {
    return [{ operator, writes: false, text }];
  }
  return [{ operator, target, writes: WRITING.has(operator) || operator === ">&", text }];
}

function command(node: SyntaxNode, walk: Walk, inherited: readonly ShellRedirect[]): void {
  // The command itself comes before what is nested in its words.
  const at = walk.parts.length;
  const redirects = [...inherited];
  const words: ShellWord[] = [];
  let assignments = 0;
  let nameNode: SyntaxNode | undefined;
  for (const child of node.namedChildren) {
    if (child.type === "file_redirect" || child.type === "heredoc_redirect" || child.type === "herestring_redirect") {
      const parsed = redirection(child, walk);
      if (parsed === "opaque") {
        walk.parts.length = at;
        return unknown(node, walk, "a heredoc followed by more commands is grammar the analysis does not take apart");
      }
      redirects.push(...parsed);
      continue;
    }
    if (child.type === "comment") continue;
    nestedIn(child, walk);
    if (child.type === "variable_assignment" && nameNode === undefined) assignments++;
    if (child.type === "command_name") nameNode = child;
    words.push(shellWord(child));
  }
  const part = finish({ text: "", aliases: [], args: words, redirects });
  walk.parts.splice(at, 0, part);
  const commandWords = words.slice(assignments);
  if (commandWords.length === 0 || nameNode === undefined) return;
  follow(commandWords, part, walk, 0);
  part.aliases = aliasesOf(part, commandWords);
}

/** Checks the command `words` name and follows what it runs (wrappers, shells, eval) into parts of their own. */
function follow(words: readonly ShellWord[], part: ShellPart, walk: Walk, depth: number): void {
  const name = words[0];
  if (!name.static || name.pattern) {
    part.opaque ??= `the command name ${name.raw} is built by expansion`;
    return;
  }
  const program = basename(name.text);
  if (Object.hasOwn(OPAQUE_COMMANDS, program)) {
    part.opaque ??= OPAQUE_COMMANDS[program];
    return;
  }
  if (DIRECTORY_CHANGERS.has(program)) walk.changesDirectory = true;
  let inner: Unwrapped = { kind: "none" };
  if (isWrapper(program)) inner = unwrapWrapper(words);
  else if (SHELLS.has(program)) inner = unwrapShell(words);
  else if (program === "eval" && words.length > 1) inner = unwrapEval(words);
  if (inner.kind === "opaque") part.opaque ??= inner.why;
  else if (inner.kind === "line") line(inner.line, walk);
  else if (inner.kind === "command") {
    const rest = withoutAssignments(inner.words);
    if (rest.length === 0) return;
    if (depth >= MAX_DEPTH) {
      part.opaque ??= "commands nested this deep are not followed";
      return;
    }
    // `timeout 5 rm x` runs `rm x`: a part of its own, which allow rules must allow too.
    walk.nested++;
    const wrapped = finish({ text: "", aliases: [], args: rest, redirects: part.redirects });
    walk.parts.push(wrapped);
    follow(rest, wrapped, walk, depth + 1);
    wrapped.aliases = aliasesOf(wrapped, rest);
  }
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

function withoutAssignments(words: readonly ShellWord[]): ShellWord[] {
  const first = words.findIndex((word) => !ASSIGNMENT.test(word.raw));
  return first === -1 ? [] : words.slice(first);
}

function unwrapEval(words: readonly ShellWord[]): Unwrapped {
  const unknownWord = words.slice(1).find((word) => !word.static);
  if (unknownWord) return { kind: "opaque", why: `eval runs ${unknownWord.raw}, which is only known when the shell runs` };
  return { kind: "line", line: words.slice(1).map((word) => word.text).join(" ") };
}

/** A command line a shell, `eval` or `watch` runs: analysed as a line of its own, its parts added. */
function line(text: string, walk: Walk): void {
  walk.nested++;
  if (walk.depth >= MAX_DEPTH) {
    walk.parts.push(opaquePart(text, "commands nested this deep are not followed"));
    return;
  }
  const inner = analyze(text, walk.depth + 1);
  walk.parts.push(...inner.parts);
  if (inner.changesDirectory) walk.changesDirectory = true;
}

/** The part's text: its words, then its redirections. */
function finish(part: ShellPart): ShellPart {
  part.text = [...part.args.map((word) => word.text), ...part.redirects.map((redirect) => redirect.text)].join(" ");
  return part;
}

/** What deny and ask rules also match: assignments and wrappers stripped, redirections left out, bare program name. */
function aliasesOf(part: ShellPart, commandWords: readonly ShellWord[]): string[] {
  const aliases = new Set<string>();
  let words = [...commandWords];
  for (let i = 0; i < MAX_DEPTH && words.length > 0; i++) {
    aliases.add(words.map((w) => w.text).join(" "));
    if (words[0].text.includes("/")) aliases.add([basename(words[0].text), ...words.slice(1).map((w) => w.text)].join(" "));
    if (!isWrapper(basename(words[0].text))) break;
    const inner = unwrapWrapper(words);
    if (inner.kind !== "command") break;
    words = withoutAssignments(inner.words);
  }
  aliases.delete(part.text);
  return [...aliases];
}

function analyze(command: string, depth: number): ShellCommand {
  const source = command.trim();
  const walk: Walk = { parts: [], depth, changesDirectory: false, nested: 0 };
  withBashTree(source, (root) => {
    statement(root, walk, []);
    // tree-sitter recovers from errors and still shows what it could read; bash would stop at the error, after
    // running the lines before it. Either way the whole line is not understood.
    if (root.hasError) walk.parts.unshift(opaquePart(source, "bash can't parse all of it (an unclosed quote, ${, $( or similar)"));
  });
  const opaque = walk.parts.find((part) => part.opaque !== undefined)?.opaque;
  const simple = walk.parts.length === 1 && walk.nested === 0 && opaque === undefined;
  return { source, parts: walk.parts, simple, ...(opaque === undefined ? {} : { opaque }), changesDirectory: walk.changesDirectory };
}

/** Splits a command line into every simple command that would run (see `ShellCommand`). */
export function analyzeShellCommand(command: string): ShellCommand {
  return analyze(command, 0);
}
