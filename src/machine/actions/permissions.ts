import type { PermissionStep } from "../../actors/ask-permission.js";
import { errorResultText } from "./tool-calls.js";
import type { EngineContext } from "../context.js";

/**
 * ask_permission's answers: allowed calls will run (with the input the decision covered); a denied call gets its
 * denial as the result; a call `beforeToolCall` blocked gets the reason, one it broke gets the error.
 */
export function recordPermissions(context: EngineContext, steps: readonly PermissionStep[]): Partial<EngineContext> {
  for (const record of context.batch) {
    const step = stepOf(steps, record.call.id);
    if (!step) continue;
    if (step.kind === "blocked") {
      record.status = "invalid";
      record.hook = "blocked";
      record.result = { content: `Blocked: ${step.reason}`, isError: true };
      continue;
    }
    if (step.kind === "suspended") continue; // stays pending: resume() asks it again, with its answer
    if (step.kind === "failed") {
      record.status = "invalid";
      record.error = step.error;
      record.result = { content: errorResultText(step.error), isError: true };
      continue;
    }
    if (step.input !== undefined) {
      record.call = { ...record.call, input: step.input };
      record.hook = "edited";
    }
    const { reason, ...permission } = step.decision;
    const decision = step.decision;
    record.permission = permission;
    if (step.subject !== undefined) record.subject = step.subject;
    if (decision.decision === "deny") {
      record.status = "denied";
      record.result = { content: `Permission denied: ${reason ?? "denied"}. ${record.call.name} was not run.`, isError: true };
    } else {
      record.status = "allowed";
    }
  }
  return {};
}

/** A response's steps are few and in call order: a scan, where a Map would be built and dropped on every step. */
function stepOf(steps: readonly PermissionStep[], toolCallId: string): PermissionStep | undefined {
  for (let i = 0; i < steps.length; i++) if (steps[i].toolCallId === toolCallId) return steps[i];
  return undefined;
}

/**
 * A deny ends the run `permission_denied` (the seed) and nothing of the response runs; every other call still gets
 * a result so the conversation stays valid for the session's next run.
 */
export function denyResponse(context: EngineContext): Partial<EngineContext> {
  const denied = context.batch.find((r) => r.status === "denied");
  for (const record of context.batch) {
    if (record.result) continue;
    record.status = "denied";
    record.result = { content: "Not run: another call in this response was denied.", isError: true };
  }
  const name = denied?.call.name ?? "a tool";
  const why = denied?.result?.content.replace(/^Permission denied: /, "").replace(/\. \S+ was not run\.$/, "") ?? "denied";
  return {
    outcome: {
      ...context.outcome,
      stopReason: "permission_denied",
      stopError: {
        code: "PERMISSION_DENIED",
        message: `permission denied for ${name}: ${why}. ${whatWouldAllow(denied?.permission)}`,
      },
    },
  };
}

/** What would change a deny, by who made it: only the asked-with-no-one-to-ask case is open to every remedy. */
export function whatWouldAllow(permission: { by?: string; rule?: string } | null | undefined): string {
  const rule = permission?.rule;
  switch (permission?.by) {
    case "rule":
      if (rule?.startsWith("protected(")) return "It is a protected path: no rule or mode allows an agent to write it; change it yourself";
      return `Deny rules win over every allow rule and mode: remove or narrow ${rule ?? "the deny rule"} to allow it`;
    case "mode":
      return "Plan mode is read-only: run in another permission mode to allow it";
    case "human":
      // The reason before it already says it was denied when asked: say what would have let it run instead.
      return "To let it run, answer allow when it is asked";
    default:
      return "Allow it with an allow rule or another permission mode, or answer through permissions.onAsk";
  }
}
