import { AgentError } from "../errors/agent-error.js";
import type { ToolRisk } from "../tools/define-tool.js";

/** What model APIs accept as a tool name. */
const MAX_NAME = 64;

/**
 * `read_graph` of server `memory` → `mcp__memory__read_graph` (Claude Code's convention, so permission rules written
 * for it carry over). Characters providers refuse become `_`; the name is cut to 64 characters.
 */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, MAX_NAME);
}

/**
 * Refuses two tools that end up with the same name (after sanitising and cutting, or across servers): the model
 * could not tell them apart and a permission rule would cover both.
 */
export function checkUnique(named: ReadonlyArray<{ name: string; origin: string }>, taken: ReadonlyMap<string, string> = new Map()): void {
  const seen = new Map(taken);
  for (const { name, origin } of named) {
    const other = seen.get(name);
    if (other !== undefined) {
      throw new AgentError(
        "INVALID_TOOL",
        `MCP tools ${other} and ${origin} would both be offered as "${name}": rename one of the servers in the configuration ` +
          "(the server name is part of the tool name)",
      );
    }
    seen.set(name, origin);
  }
}

export interface ToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
}

/**
 * A tool's risk: an override from the options (the longest matching pattern wins), else its annotations —
 * `readOnlyHint: true` → read, `destructiveHint: false` → write, anything else exec (the spec's defaults say a tool
 * may be destructive unless it says otherwise).
 */
export function mcpToolRisk(name: string, annotations: ToolAnnotations | undefined, overrides: Record<string, ToolRisk> = {}): ToolRisk {
  let best: { length: number; risk: ToolRisk } | undefined;
  for (const [pattern, risk] of Object.entries(overrides)) {
    if (!wildcard(pattern).test(name)) continue;
    if (!best || pattern.length > best.length) best = { length: pattern.length, risk };
  }
  if (best) return best.risk;
  if (annotations?.readOnlyHint === true) return "read";
  if (annotations?.destructiveHint === false) return "write";
  return "exec";
}

function wildcard(pattern: string): RegExp {
  return new RegExp(`^${pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
}
