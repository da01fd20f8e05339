import { AgentError } from "../errors/agent-error.js";
import type { AnyTool } from "../tools/define-tool.js";
import { PROTECTED_WHY, homeRuleFor, protectedRuleFor } from "../tools/protected-paths.js";
import { allowingRules, matchesAnyPart } from "./match.js";
import { checkMode, modeVerdict, planModeDenial } from "./modes.js";
import { escapeGlob, escapeWildcard, parseRule, sameTool, type PermissionRule } from "./rules.js";
import { loadBashParser } from "./bash-parser.js";
import { pathArguments } from "./path-arguments.js";
import { allowBlocker, shellAsk } from "./shell-verdict.js";
import { describeSubject, subjectOf, type RuleSubject } from "./subject.js";
import type { PermissionOptions, PermissionPolicy, PolicyContext, PolicyVerdict } from "./types.js";

const OPTION_KEYS = ["mode", "allow", "ask", "deny", "onAsk", "whenUnanswered", "onDeny"];

function parseRules(list: unknown, where: string): PermissionRule[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) {
    throw new AgentError("INVALID_OPTIONS", `${where} must be an array of rules like ["bash(npm test)", "write_file(src/**)"], got ${JSON.stringify(list)}`);
  }
  return list.map((text, index) => parseRule(text, `${where}[${index}]`));
}

function checkOptions(options: unknown): PermissionOptions {
  if (options === undefined || options === null) return {};
  if (typeof options !== "object" || Array.isArray(options)) {
    throw new AgentError("INVALID_OPTIONS", `permissions must be an object { mode, allow, ask, deny, onAsk }, got ${JSON.stringify(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.includes(key)) {
      throw new AgentError("INVALID_OPTIONS", `permissions.${key} is not an option; the options are ${OPTION_KEYS.join(", ")}`);
    }
  }
  const onAsk = (options as PermissionOptions).onAsk;
  if (onAsk !== undefined && typeof onAsk !== "function") {
    throw new AgentError("INVALID_OPTIONS", "permissions.onAsk must be a function (request) => \"allow\" | \"deny\" | \"allow_always\"");
  }
  return options as PermissionOptions;
}

/** `bash "git push"`, `write_file src/a.ts`: a call in words, for reasons. */
function callInWords(tool: AnyTool, subject: RuleSubject): string {
  const text = describeSubject(subject);
  if (text === undefined) return tool.name;
  const short = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return subject.kind === "path" ? `${tool.name} on ${short}` : `${tool.name} ${JSON.stringify(short)}`;
}

/** The rule an `allow_always` answer stands for: this tool and exactly this subject. */
function exactRule(tool: AnyTool, subject: RuleSubject): string {
  switch (subject.kind) {
    case "none":
      return tool.name;
    case "text":
      return `${tool.name}(${escapeWildcard(subject.text)})`;
    case "command":
      return `${tool.name}(${escapeWildcard(subject.command.source)})`;
    case "path": {
      const relative = subject.real.relative;
      if (relative === ".") return `${tool.name}(.)`;
      // `./` anchors at the workspace root: a bare name would match that name in every folder.
      return relative !== undefined ? `${tool.name}(./${escapeGlob(relative)})` : `${tool.name}(${escapeGlob(subject.real.absolute)})`;
    }
  }
}

/**
 * MCP tools' risk comes from annotations their server sends (hints, per the MCP spec, not promises): a tool that says
 * it only reads is held to the protected paths like one that writes.
 */
function writesMaybe(tool: AnyTool): boolean {
  return tool.risk !== "read" || tool.name.startsWith("mcp__");
}

/**
 * The built-in protected path a call names, if any: for every tool, the statecraft folders (its key signs allow
 * rules; its config and trust list set later runs' modes); for every tool that may write, `.agent/`, the project
 * config and `.mcp.json`. Looked for in the call's path subject and in every path-like argument of its input.
 */
function protectedHit(tool: AnyTool, input: unknown, subject: RuleSubject, cwd: string): { rule: string; shown: string } | undefined {
  const named = pathArguments(input);
  if (subject.kind === "path" && !named.includes(subject.input)) named.unshift(subject.input);
  for (const text of named) {
    const rule = writesMaybe(tool) ? protectedRuleFor(text, cwd) : homeRuleFor(text, cwd);
    if (rule) return { rule, shown: text };
  }
  return undefined;
}

/**
 * The permission policy of a run. Precedence: protected paths (no tool that may write touches `.agent/`,
 * `statecraft.config.json` or `.mcp.json`, named in any path-like argument; no tool at all the statecraft folders), then deny rules, then `plan` mode's read-only limit, then (for
 * commands) what the shell analysis asks about (a part it can't see into while a deny or ask rule exists, a protected
 * path), then ask rules, then allow rules, then the mode. `sessionRules` are allow rules earlier `allow_always` answers
 * of this session added;
 * `context.cwd` is the workspace path rules are relative to (default `process.cwd()`). Invalid options throw
 * `INVALID_OPTIONS` naming the rule and the syntax.
 */
export function createPermissionPolicy(
  options: PermissionOptions = {},
  sessionRules: readonly string[] = [],
  context: PolicyContext = {},
): PermissionPolicy {
  const checked = checkOptions(options);
  const mode = checkMode(checked.mode);
  const deny = parseRules(checked.deny, "permissions.deny");
  const ask = parseRules(checked.ask, "permissions.ask");
  const allow = [...parseRules(checked.allow, "permissions.allow"), ...parseRules(sessionRules, "session allow rules")];
  const added: string[] = [];
  const cwdOf = (override?: PolicyContext) => override?.cwd ?? context.cwd ?? process.cwd();
  // Started now so that it is usually done by the first decision; marked handled here so that a policy nobody awaits
  // never ends the process with an unhandled rejection (awaiting `ready` still sees the failure).
  const ready = loadBashParser();
  ready.catch(() => undefined);

  const evaluate = (tool: AnyTool, input: unknown, override?: PolicyContext): PolicyVerdict => {
    const subject = subjectOf(tool, input, cwdOf(override));
    const subjectText = describeSubject(subject);
    const about = subjectText === undefined ? {} : { subject: subjectText };

    // Built in, before every rule and mode: what the engine trusts (its state, the project config) is not the
    // agent's to write.
    const hit = protectedHit(tool, input, subject, cwdOf(override));
    if (hit) {
      const what = subject.kind === "path" && hit.shown === subject.input ? callInWords(tool, subject) : `${tool.name} naming ${JSON.stringify(hit.shown)}`;
      return { kind: "deny", by: "rule", rule: hit.rule, reason: `${what} is denied by rule ${hit.rule}: ${PROTECTED_WHY}`, ...about };
    }
    const denied = deny.find((rule) => matchesAnyPart(rule, tool.name, subject));
    if (denied) {
      return { kind: "deny", by: "rule", rule: denied.text, reason: `${callInWords(tool, subject)} is denied by rule ${denied.text}`, ...about };
    }
    const planDenial = planModeDenial(mode, tool);
    if (planDenial) return { ...planDenial, ...about };
    if (subject.kind === "command") {
      const shell = shellAsk(subject, tool.name, mode, [...deny, ...ask]);
      if (shell) return { kind: "ask", rule: shell.rule, reason: `${callInWords(tool, subject)}: ${shell.reason}`, ...about };
    }
    const asked = ask.find((rule) => matchesAnyPart(rule, tool.name, subject));
    if (asked) return { kind: "ask", rule: asked.text, reason: `rule ${asked.text} asks before ${callInWords(tool, subject)}`, ...about };
    // A command allow rules can't vouch for (not fully understood, writing outside the workspace) goes to the mode.
    const blocked = subject.kind === "command" ? allowBlocker(subject) : undefined;
    // A plain `bash` rule allows every call whatever it says, so it needs no understanding of the command.
    const allowed = allowingRules(blocked === undefined ? allow : allow.filter((rule) => rule.pattern === undefined), tool.name, subject);
    if (allowed) {
      const texts = allowed.map((rule) => rule.text);
      return { kind: "allow", by: "rule", rule: texts.join(", "), ...(texts.length > 1 ? { rules: texts } : {}), ...about };
    }
    const verdict = modeVerdict(mode, tool);
    if (verdict.kind === "ask") {
      const why = blocked !== undefined && allow.some((rule) => sameTool(rule, tool.name)) ? `allow rules don't apply (${blocked}); ` : "";
      return { ...verdict, reason: `${callInWords(tool, subject)}: ${why}${verdict.reason}`, ...about };
    }
    return { ...verdict, ...about };
  };

  return {
    mode,
    ready,
    evaluate,
    rememberAllow(tool, input, override) {
      const text = exactRule(tool, subjectOf(tool, input, cwdOf(override)));
      if (!allow.some((rule) => rule.text === text)) {
        allow.push(parseRule(text, "allow_always rule"));
        added.push(text);
      }
      return text;
    },
    addSessionRules(rules) {
      for (const rule of parseRules(rules, "session allow rules")) if (!allow.some((known) => known.text === rule.text)) allow.push(rule);
    },
    get sessionRules() {
      return added;
    },
  };
}
