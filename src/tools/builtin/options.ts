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
