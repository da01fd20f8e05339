import { AgentError } from "../errors/agent-error.js";
import type { AnyTool } from "../tools/define-tool.js";
import { PERMISSION_MODES, type PermissionMode, type PolicyVerdict } from "./types.js";

export function isPermissionMode(value: unknown): value is PermissionMode {
  return typeof value === "string" && (PERMISSION_MODES as readonly string[]).includes(value);
}

/** The modes as every message lists them: `"default", "acceptEdits", "bypassPermissions", "plan"`. */
export const PERMISSION_MODE_LIST = PERMISSION_MODES.map((m) => `"${m}"`).join(", ");

export function checkMode(value: unknown): PermissionMode {
  if (value === undefined) return "default";
  if (!isPermissionMode(value)) {
    throw new AgentError("INVALID_OPTIONS", `permissions.mode must be one of ${PERMISSION_MODE_LIST}, got ${JSON.stringify(value)}`);
  }
  return value;
}

/**
 * `plan` is read-only before any rule but deny: its point is that nothing changes, so allow and ask rules don't
 * reopen write and exec tools. Returns the deny verdict, or undefined when the mode doesn't forbid the call.
 */
export function planModeDenial(mode: PermissionMode, tool: AnyTool): PolicyVerdict | undefined {
  if (mode !== "plan" || tool.risk === "read") return undefined;
  return {
    kind: "deny",
    by: "mode",
    reason: `plan mode is read-only: ${tool.name} is ${article(tool.risk)} ${tool.risk} tool and can't run until the plan is accepted`,
  };
}

/**
 * What the mode alone says, once no rule decided: `default` allows read and asks write and exec; `acceptEdits`
 * allows read and write and asks exec; `bypassPermissions` allows everything; `plan` allows read only.
 */
export function modeVerdict(mode: PermissionMode, tool: AnyTool): PolicyVerdict {
  const denial = planModeDenial(mode, tool);
  if (denial) return denial;
  if (mode === "bypassPermissions" || tool.risk === "read") return { kind: "allow", by: "mode" };
  if (mode === "acceptEdits" && tool.risk === "write") return { kind: "allow", by: "mode" };
  return { kind: "ask", reason: `${tool.name} is ${article(tool.risk)} ${tool.risk} tool and permission mode "${mode}" asks before it runs` };
}

/** "an exec tool", "a write tool". */
function article(word: string): string {
  return /^[aeiou]/i.test(word) ? "an" : "a";
}
