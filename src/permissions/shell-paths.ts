import fs from "node:fs";
import path from "node:path";
import { picomatch } from "../util/picomatch.js";
import { expandHome, isWithin, resolveRealPath } from "../tools/confine.js";
import { AGENT_DIR, PROJECT_CONFIG_FILE, PROJECT_MCP_FILE, PROTECTED_RULES, homeRule } from "../tools/protected-paths.js";
import { statecraftFolders } from "../util/statecraft-home.js";
import type { ShellCommand, ShellRedirect } from "./shell-command.js";
import type { ShellWord } from "./shell-words.js";

/** Files a redirection may always use: they are no file of anyone's. */
const DEVICES = new Set(["/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr"]);

function realOrSelf(absolute: string): string {
  try {
    return resolveRealPath(absolute);
  } catch {
    return absolute;
  }
}

/** Where a static word points, resolved against the workspace (symlinks followed). */
function resolve(word: ShellWord, workspace: string, text = word.text): string {
  return realOrSelf(path.resolve(workspace, word.tilde ? expandHome(text) : text));
}

/**
 * Why the redirections of `command` keep allow rules off, or undefined: every target must be known and inside the
 * workspace (symlinks followed) or be `/dev/null` and the like. After a `cd` relative targets are not known.
 */
export function redirectProblem(command: ShellCommand, workspace: string): string | undefined {
  const root = realOrSelf(path.resolve(workspace));
  for (const part of command.parts) {
    for (const redirect of part.redirects) {
      const target = redirect.target;
      if (!target) continue;
      if (DEVICES.has(target.text)) continue;
      if (!target.static || target.pattern) return `the redirection ${redirect.text} goes to a file only known when the shell runs`;
      if (command.changesDirectory && !target.tilde && !path.isAbsolute(target.text)) {
        return `the redirection ${redirect.text} is relative and the command changes directory first`;
      }
      if (!isWithin(root, resolve(target, root))) return `the redirection ${redirect.text} goes outside the workspace`;
    }
  }
  return undefined;
}

/** A protected path a command names: the rule, the word as written, and whether a redirection writes into it. */
export interface ProtectedHit {
  rule: string;
  word: string;
  redirect: boolean;
}

const AGENT_TEXT = /\.agent(?![A-Za-z0-9_-])/i;
const CONFIG_TEXT = /statecraft\.config\.json/i;
const MCP_TEXT = /\.mcp\.json/i;
/** The statecraft folder's usual place and its files, however a command spells the way there (`$HOME/…`, `~/…`). */
const HOME_TEXT = /(^|[^A-Za-z0-9_-])\.config\/+statecraft(?![A-Za-z0-9_.-])|session-key|trusted-folders\.json/i;

/** The statecraft folders, as written and real: protected from every command, readers included. */
function homes(): string[] {
  const folders = statecraftFolders();
  return [...new Set([...folders, ...folders.map(realOrSelf)])];
}

function homeRuleForPath(absolute: string): string | undefined {
  const home = homes().find((h) => isWithin(h, absolute));
  return home === undefined ? undefined : homeRule(home);
}

/** A statecraft folder named in a command's text (its path as written, or its usual place), if any. */
function homeText(text: string): string | undefined {
  for (const h of homes()) if (text.includes(h)) return homeRule(h);
  return HOME_TEXT.test(text) ? homeRule(statecraftFolders()[0]) : undefined;
}

function ruleForPath(absolute: string, root: string): string | undefined {
  const home = homeRuleForPath(absolute);
  if (home) return home;
  const below = isWithin(root, absolute) ? path.relative(root, absolute) : absolute;
  const names = below.split(path.sep).map((name) => name.toLowerCase());
  if (names.includes(AGENT_DIR)) return PROTECTED_RULES.agentDir;
  if (names[names.length - 1] === PROJECT_CONFIG_FILE) return PROTECTED_RULES.projectConfig;
  if (names[names.length - 1] === PROJECT_MCP_FILE) return PROTECTED_RULES.mcpConfig;
  return undefined;
}

function textRule(text: string): string | undefined {
  if (AGENT_TEXT.test(text)) return PROTECTED_RULES.agentDir;
  if (CONFIG_TEXT.test(text)) return PROTECTED_RULES.projectConfig;
  if (MCP_TEXT.test(text)) return PROTECTED_RULES.mcpConfig;
  return homeText(text);
}

/** Whether `rule` protects a statecraft folder (asked in every mode, bypassPermissions included, even to read). */
export function isHomeRule(rule: string): boolean {
  return homes().some((h) => rule === homeRule(h)) || rule === homeRule(statecraftFolders()[0]);
}

function safeList(dir: string): string[] {
  try {
    return fs.readdirSync(dir).slice(0, 100).map((name) => path.join(dir, name));
  } catch {
    return [];
  }
}

/** Existing protected paths a glob could expand to: the config file, `.agent/` and what is in it (a bounded look). */
function protectedCandidates(root: string): string[] {
  const found: string[] = [];
  for (const name of [PROJECT_CONFIG_FILE, PROJECT_MCP_FILE]) {
    const file = path.join(root, name);
    if (fs.existsSync(file)) found.push(file);
  }
  for (const home of homes()) if (isWithin(root, home) && fs.existsSync(home)) found.push(home, ...safeList(home));
  const walk = (dir: string, depth: number) => {
    found.push(dir);
    if (depth > 2 || found.length > 500) return;
    let entries: fs.Dirent[] = [];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.isDirectory()) walk(path.join(dir, entry.name), depth + 1);
      else found.push(path.join(dir, entry.name));
    }
  };
  if (fs.existsSync(path.join(root, AGENT_DIR))) walk(path.join(root, AGENT_DIR), 0);
  return found;
}

/** The protected path `word` names, if any: by its text, by where it resolves, or by what a glob in it expands to. */
function wordRule(word: ShellWord, root: string, candidates: () => string[]): string | undefined {
  const byText = textRule(word.raw) ?? textRule(word.text);
  if (byText) return byText;
  if (!word.static) return undefined;
  // `of=.agent/x`, `--output=…`: the value after `=` is a path too.
  const texts = [word.text, ...(word.text.includes("=") ? [word.text.slice(word.text.indexOf("=") + 1)] : [])].filter((t) => t !== "");
  for (const text of texts) {
    if (word.pattern) {
      const glob = path.resolve(root, word.tilde ? expandHome(text) : text);
      const matches = picomatch(glob.split(path.sep).join("/"), { dot: false });
      const hit = candidates().find((candidate) => matches(candidate.split(path.sep).join("/")));
      if (hit) return ruleForPath(hit, root);
      continue;
    }
    const rule = ruleForPath(path.resolve(root, word.tilde ? expandHome(text) : text), root) ?? ruleForPath(resolve(word, root, text), root);
    if (rule) return rule;
  }
  return undefined;
}

/**
 * The first protected path (`.agent/`, `statecraft.config.json`, `.mcp.json`, a statecraft folder) a command's arguments or redirections name. A
 * redirection that writes to a file only known when the shell runs counts as writing into one when the command
 * names a protected path anywhere (`f=.agent/audit.jsonl; : > $f`).
 */
export function protectedPathIn(command: ShellCommand, workspace: string): ProtectedHit | undefined {
  const root = realOrSelf(path.resolve(workspace));
  let cached: string[] | undefined;
  const candidates = () => (cached ??= protectedCandidates(root));
  let named: ProtectedHit | undefined;
  let blindWrite: ShellRedirect | undefined;
  for (const part of command.parts) {
    for (const redirect of part.redirects) {
      if (!redirect.target) continue;
      const rule = wordRule(redirect.target, root, candidates);
      if (rule && redirect.writes) return { rule, word: redirect.target.raw, redirect: true };
      if (rule) named ??= { rule, word: redirect.target.raw, redirect: false };
      if (redirect.writes && (!redirect.target.static || (command.changesDirectory && !path.isAbsolute(redirect.target.text)))) blindWrite ??= redirect;
    }
    for (const word of part.args) {
      const rule = wordRule(word, root, candidates);
      if (rule) named ??= { rule, word: word.raw, redirect: false };
    }
    if (part.opaque !== undefined) {
      const rule = textRule(part.text);
      if (rule) named ??= { rule, word: part.text, redirect: false };
    }
  }
  if (named && blindWrite) return { ...named, redirect: true };
  return named;
}
