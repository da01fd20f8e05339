import os from "node:os";
import { picomatch } from "../util/picomatch.js";
import { AgentError } from "../errors/agent-error.js";

/** A parsed rule: `Tool` (every call of the tool) or `Tool(pattern)` (calls whose subject matches). */
export interface PermissionRule {
  /** The rule as written. */
  text: string;
  /**
   * The tool name, compared case-insensitively (`Bash(...)` written for Claude Code still applies to `bash`); a `*`
   * in it matches any run of characters (`mcp__memory__*`: every tool of one MCP server).
   */
  tool: string;
  /** The pattern between the parentheses; absent for a rule matching every call of the tool. */
  pattern?: string;
}

const RULE = /^([A-Za-z0-9_*-]{1,64})(?:\(([\s\S]*)\))?$/;

/** Parses `Tool` or `Tool(pattern)`. A malformed rule throws `INVALID_OPTIONS` naming where it is and the syntax. */
export function parseRule(text: unknown, where = "rule"): PermissionRule {
  if (typeof text !== "string") {
    throw new AgentError("INVALID_OPTIONS", `${where} must be a string like "bash(npm test)" or "read_file", got ${JSON.stringify(text)}`);
  }
  const trimmed = text.trim();
  const match = RULE.exec(trimmed);
  if (!match) {
    throw new AgentError(
      "INVALID_OPTIONS",
      `${where} ${JSON.stringify(text)} is not a valid rule: write a tool name ("write_file") or a tool name with a ` +
        `pattern in parentheses ("bash(git status*)", "write_file(src/**)")`,
    );
  }
  const [, tool, pattern] = match;
  if (/^\*+$/.test(tool)) {
    throw new AgentError("INVALID_OPTIONS", `${where} ${JSON.stringify(text)} names no tool: a rule for every tool is a permission mode ("mode": "bypassPermissions"), not a rule`);
  }
  if (pattern === undefined) return { text: trimmed, tool };
  if (pattern.trim() === "") {
    throw new AgentError("INVALID_OPTIONS", `${where} ${JSON.stringify(text)} has an empty pattern: write "${tool}" to match every ${tool} call`);
  }
  // `Tool(*)` and `Tool(**)` mean every call, as `Tool` does.
  if (pattern === "*" || pattern === "**") return { text: trimmed, tool };
  return { text: trimmed, tool, pattern };
}

export function sameTool(rule: PermissionRule, toolName: string): boolean {
  if (!rule.tool.includes("*")) return rule.tool.toLowerCase() === toolName.toLowerCase();
  return toolNamePattern(rule.tool).test(toolName);
}

/** Tool-name wildcards compiled once per rule text (rules are matched on every call). */
const toolPatterns = new Map<string, RegExp>();
function toolNamePattern(tool: string): RegExp {
  let compiled = toolPatterns.get(tool);
  if (!compiled) {
    compiled = new RegExp(`^${tool.split("*").map(escapeRegExp).join(".*")}$`, "i");
    toolPatterns.set(tool, compiled);
  }
  return compiled;
}

/**
 * Compiles a command/text pattern: `*` matches any text, `\*` a literal star, `\\` a backslash. A trailing ` *` or
 * `:*` also matches the bare prefix, so `git status *` and `git status:*` match `git status` and
 * `git status --short` but not `git statusx`.
 */
export function compileWildcard(pattern: string): RegExp {
  let body = pattern;
  let optionalTail = false;
  if (body.endsWith(" *") && !body.endsWith("\\ *")) {
    body = body.slice(0, -2);
    optionalTail = true;
  } else if (body.endsWith(":*") && !body.endsWith("\\:*")) {
    body = body.slice(0, -2);
    optionalTail = true;
  }
  let source = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === "\\" && (body[i + 1] === "*" || body[i + 1] === "\\")) {
      source += escapeRegExp(body[i + 1]);
      i++;
    } else if (c === "*") {
      source += "[\\s\\S]*";
    } else {
      source += escapeRegExp(c);
    }
  }
  return new RegExp(`^${source}${optionalTail ? "(?:\\s[\\s\\S]*)?" : ""}$`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Whether a pattern has wildcards (an unescaped `*`): a pattern without them names one exact subject. */
export function hasWildcard(pattern: string): boolean {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === "\\" && (pattern[i + 1] === "*" || pattern[i + 1] === "\\")) i++;
    else if (pattern[i] === "*") return true;
  }
  return false;
}

/** The literal text an exact (wildcard-free) command pattern stands for. */
export function unescapeWildcard(pattern: string): string {
  return pattern.replace(/\\([*\\])/g, "$1");
}

/** Escapes text so `compileWildcard` matches exactly it. */
export function escapeWildcard(text: string): string {
  return text.replace(/[\\*]/g, "\\$&");
}

/** Escapes a path so picomatch matches exactly it. */
export function escapeGlob(text: string): string {
  return text.replace(/[\\*?[\]{}()!+@]/g, "\\$&");
}

/** A compiled path pattern: tests workspace-relative (POSIX) paths and absolute paths. */
export interface PathMatcher {
  /** `relative`: a workspace-relative path, or undefined when the file is outside the workspace. */
  (relative: string | undefined, absolute: string): boolean;
}

/**
 * Compiles a path pattern (picomatch glob, dot files included):
 * - `/abs/**` and `~/x` match absolute paths;
 * - `./x` matches `x` at the workspace root only;
 * - a pattern with a `/` matches the path from the workspace root (`src/**`);
 * - a pattern without `/` matches the file name at any depth (`.env*` matches `config/.env.local`);
 * - a trailing `/` means the folder and everything in it (`secrets/`).
 */
export function compilePathPattern(pattern: string): PathMatcher {
  let glob = pattern;
  if (glob.startsWith("~/")) glob = `${os.homedir().split("\\").join("/")}/${glob.slice(2)}`;
  if (glob.endsWith("/") && glob.length > 1) glob = `${glob}**`;
  if (glob.startsWith("/")) {
    const test = picomatch(glob, { dot: true });
    return (_relative, absolute) => test(absolute);
  }
  let anchored = false;
  while (glob.startsWith("./")) {
    glob = glob.slice(2);
    anchored = true;
  }
  if (glob === "") glob = ".";
  const test = picomatch(glob, { dot: true, basename: !anchored && !glob.includes("/") });
  return (relative) => relative !== undefined && test(relative);
}
