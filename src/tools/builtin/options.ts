import { AgentError } from "../../errors/agent-error.js";
import type { ToolContext } from "../define-tool.js";
import type { WorkspaceRoots } from "../confine.js";

/** Options every built-in tool factory takes. */
export interface BuiltinToolOptions {
  /**
   * Directories outside the workspace (`ctx.cwd`) that file tools may also use. Relative ones resolve against the
   * workspace; `~` means the home directory.
   */
  additionalDirectories?: readonly string[];
}

/** The roots a call is confined to: the call's workspace plus the configured additional directories. */
export function rootsOf(context: ToolContext, options: BuiltinToolOptions): WorkspaceRoots {
  return { cwd: context.cwd, additionalDirectories: options.additionalDirectories ?? [] };
}

/** An error result: the model sees it as a failed call and can correct itself. */
export function failure(content: string): { content: string; isError: true } {
  return { content, isError: true };
}

/** Checks a factory's options once, when the tool is made, so a mistake shows up before any run. */
export function checkBuiltinOptions(options: BuiltinToolOptions | undefined): BuiltinToolOptions {
  if (options === undefined) return {};
  if (options === null || typeof options !== "object") {
    throw new AgentError("INVALID_OPTIONS", "built-in tool options must be an object like { additionalDirectories: [\"../shared\"] }");
  }
  const dirs = (options as { additionalDirectories?: unknown }).additionalDirectories;
  if (dirs !== undefined && (!Array.isArray(dirs) || dirs.some((dir) => typeof dir !== "string" || dir === ""))) {
    throw new AgentError(
      "INVALID_OPTIONS",
      `additionalDirectories must be an array of folder paths (non-empty strings), got ${JSON.stringify(dirs)}`,
    );
  }
  return options;
}
