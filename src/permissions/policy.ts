import type { AnyTool } from "../tools/define-tool.js";
import type { PermissionOptions, PermissionPolicy, PolicyVerdict } from "./types.js";

/**
 * The permission policy of a run: rules first (deny, ask, allow), then the mode.
 * `sessionRules` are allow rules earlier `allow_always` answers added in this session.
 */
export function createPermissionPolicy(options: PermissionOptions = {}, sessionRules: readonly string[] = []): PermissionPolicy {
  const mode = options.mode ?? "default";
  const deny = [...(options.deny ?? [])];
  const ask = [...(options.ask ?? [])];
  const allow = [...(options.allow ?? []), ...sessionRules];
  const added: string[] = [];

  const evaluate = (tool: AnyTool, _input: unknown): PolicyVerdict => {
    const denied = deny.find((rule) => rule === tool.name);
    if (denied) return { kind: "deny", by: "rule", rule: denied, reason: `denied by rule ${denied}` };
    const asked = ask.find((rule) => rule === tool.name);
    if (asked) return { kind: "ask", reason: `rule ${asked} asks for ${tool.name}`, rule: asked };
    const allowed = allow.find((rule) => rule === tool.name);
    if (allowed) return { kind: "allow", by: "rule", rule: allowed };
    if (mode === "bypassPermissions") return { kind: "allow", by: "mode" };
    if (tool.risk === "read") return { kind: "allow", by: "mode" };
    if (mode === "plan") return { kind: "deny", by: "mode", reason: `plan mode allows read-only tools; ${tool.name} is ${tool.risk}` };
    if (mode === "acceptEdits" && tool.risk === "write") return { kind: "allow", by: "mode" };
    return { kind: "ask", reason: `${tool.name} is a ${tool.risk} tool and mode ${mode} asks for it` };
  };

  return {
    mode,
    evaluate,
    rememberAllow(tool) {
      const rule = tool.name;
      allow.push(rule);
      added.push(rule);
      return rule;
    },
    get sessionRules() {
      return added;
    },
  };
}
