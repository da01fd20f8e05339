import { sameTool, type PermissionRule } from "./rules.js";
import { isHomeRule, protectedPathIn, redirectProblem } from "./shell-paths.js";
import type { RuleSubject } from "./subject.js";
import type { PermissionMode } from "./types.js";

type CommandSubject = Extract<RuleSubject, { kind: "command" }>;

/**
 * What makes a command asked before ask and allow rules are looked at, or undefined:
 * - a part the analysis could not fully understand, when a deny or ask rule for the tool exists: such a part
 *   could be what the rule names, so it is asked rather than let through;
 * - a protected path (`.agent/`, `statecraft.config.json`, `.mcp.json`) named in an argument or redirection, in every
 *   mode but `bypassPermissions`, and in that one too when a redirection writes into it;
 * - a statecraft folder (session key, user config, trust list) named anywhere, in every mode: reading the key is
 *   enough to forge allow rules.
 */
export function shellAsk(
  subject: CommandSubject,
  toolName: string,
  mode: PermissionMode,
  guards: readonly PermissionRule[],
): { rule: string; reason: string } | undefined {
  const { command, workspace } = subject;
  if (command.opaque !== undefined) {
    const guard = guards.find((rule) => sameTool(rule, toolName));
    if (guard) return { rule: guard.text, reason: `rule ${guard.text} can't see into it (${command.opaque}), so it is asked` };
  }
  const hit = protectedPathIn(command, workspace);
  const home = hit !== undefined && isHomeRule(hit.rule);
  if (hit && (mode !== "bypassPermissions" || hit.redirect || home)) {
    const how = hit.redirect ? "writes into" : "names";
    const modes = hit.redirect || home ? "every permission mode" : "every permission mode but bypassPermissions";
    const what = home ? "the statecraft folder: session key, user config, trusted folders" : "the engine's own state, the project config and its MCP servers";
    return {
      rule: hit.rule,
      reason: `it ${how} ${hit.word}, which rule ${hit.rule} protects (${what}): such commands are asked in ${modes}`,
    };
  }
  return undefined;
}

/** Why no allow rule may allow the command (a part not understood, a redirection outside the workspace), or undefined. */
export function allowBlocker(subject: CommandSubject): string | undefined {
  if (subject.command.opaque !== undefined) return subject.command.opaque;
  return redirectProblem(subject.command, subject.workspace);
}
