import { compilePathPattern, compileWildcard, hasWildcard, sameTool, unescapeWildcard, type PathMatcher, type PermissionRule } from "./rules.js";
import type { ResolvedPath, RuleSubject } from "./subject.js";

const wildcards = new Map<string, RegExp>();
const pathPatterns = new Map<string, PathMatcher>();

function wildcard(pattern: string): RegExp {
  let compiled = wildcards.get(pattern);
  if (!compiled) wildcards.set(pattern, (compiled = compileWildcard(pattern)));
  return compiled;
}

function pathPattern(pattern: string): PathMatcher {
  let compiled = pathPatterns.get(pattern);
  if (!compiled) pathPatterns.set(pattern, (compiled = compilePathPattern(pattern)));
  return compiled;
}

/** The path and every folder above it (up to, not including, the workspace root or `/`). */
function withAncestors(resolved: ResolvedPath): Array<[string | undefined, string]> {
  const out: Array<[string | undefined, string]> = [[resolved.relative, resolved.absolute]];
  let relative = resolved.relative;
  let absolute = resolved.absolute;
  for (;;) {
    const slash = absolute.lastIndexOf("/");
    if (slash <= 0) break;
    absolute = absolute.slice(0, slash);
    if (relative !== undefined) {
      const relSlash = relative.lastIndexOf("/");
      relative = relSlash === -1 ? undefined : relative.slice(0, relSlash);
      if (relative === undefined) {
        // Above the path's top folder in the workspace: only absolute patterns can still match.
        out.push([undefined, absolute]);
        continue;
      }
    }
    out.push([relative, absolute]);
  }
  return out;
}

/**
 * Deny and ask rules: whether the rule matches any part of the call. For a command, any simple command in it
 * (also with wrappers stripped); for a path, the path as written or as resolved, or any folder above it, so a rule
 * on a folder covers what is inside.
 */
export function matchesAnyPart(rule: PermissionRule, toolName: string, subject: RuleSubject): boolean {
  if (!sameTool(rule, toolName)) return false;
  if (rule.pattern === undefined) return true;
  const pattern = rule.pattern;
  switch (subject.kind) {
    case "none":
      return false;
    case "text":
      return wildcard(pattern).test(subject.text);
    case "command": {
      const regex = wildcard(pattern);
      if (regex.test(subject.command.source)) return true;
      return subject.command.parts.some((part) => regex.test(part.text) || part.aliases.some((alias) => regex.test(alias)));
    }
    case "path": {
      const matcher = pathPattern(pattern);
      return [subject.lexical, subject.real].some((resolved) => withAncestors(resolved).some(([relative, absolute]) => matcher(relative, absolute)));
    }
  }
}

/**
 * Allow rules: the rules that together allow the call, or undefined. A command needs every simple command in it
 * allowed, with or without its redirections (a rule whose exact text is the whole command also does); the policy
 * only asks this of commands the shell analysis fully understood, with every redirection inside the workspace; a path needs the file really touched (symlinks
 * followed) to match.
 */
export function allowingRules(rules: readonly PermissionRule[], toolName: string, subject: RuleSubject): PermissionRule[] | undefined {
  const own = rules.filter((rule) => sameTool(rule, toolName));
  const everyCall = own.find((rule) => rule.pattern === undefined);
  if (everyCall) return [everyCall];
  const patterned = own as Array<PermissionRule & { pattern: string }>;
  switch (subject.kind) {
    case "none":
      return undefined;
    case "text": {
      const rule = patterned.find((r) => wildcard(r.pattern).test(subject.text));
      return rule ? [rule] : undefined;
    }
    case "command": {
      const { source, parts, simple } = subject.command;
      const exact = patterned.find((r) => !hasWildcard(r.pattern) && unescapeWildcard(r.pattern) === source);
      if (exact) return [exact];
      if (simple) {
        const rule = patterned.find((r) => wildcard(r.pattern).test(source));
        if (rule) return [rule];
      }
      if (parts.length === 0) return undefined;
      const used: PermissionRule[] = [];
      for (const part of parts) {
        // Redirections are judged by where they go (see `allowBlocker`), so a rule may also match the words alone.
        const words = part.args.map((word) => word.text).join(" ");
        const rule = patterned.find((r) => wildcard(r.pattern).test(part.text) || wildcard(r.pattern).test(words));
        if (!rule) return undefined;
        if (!used.includes(rule)) used.push(rule);
      }
      return used;
    }
    case "path": {
      const rule = patterned.find((r) => pathPattern(r.pattern)(subject.real.relative, subject.real.absolute));
      return rule ? [rule] : undefined;
    }
  }
}
