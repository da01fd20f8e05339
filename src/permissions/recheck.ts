import type { AnyTool } from "../tools/define-tool.js";
import type { DecidedBy, PermissionPolicy } from "./types.js";

/** What a call's permission decision, taken before its response's calls ran, was about. */
export interface DecidedCall {
  by: DecidedBy;
  /** The subject the decision saw (the real path, the command), when the tool has one. */
  subject?: string;
}

/**
 * Decides a call again as it starts. Every call of a response is decided before any runs, so an earlier call can
 * change what a later one touches (`ln -sf .env notes.txt`, then `read_file notes.txt`): the policy evaluates the
 * call again against the file system as it is now. Returns why the call may no longer run, or undefined when the
 * decision still holds: a deny, an ask where the policy had allowed (a person was never asked), or, for a call a
 * person allowed, a subject other than the one they were shown.
 */
export function recheckDecision(policy: PermissionPolicy, tool: AnyTool, input: unknown, decided: DecidedCall): string | undefined {
  const now = policy.evaluate(tool, input);
  if (now.kind === "deny") return now.reason;
  if (now.kind === "ask" && decided.by !== "human") return now.reason;
  if (decided.by === "human" && decided.subject !== undefined && now.subject !== decided.subject) {
    return `${tool.name} was allowed when asked about ${decided.subject}, but it now touches ${now.subject ?? "something else"}`;
  }
  return undefined;
}
