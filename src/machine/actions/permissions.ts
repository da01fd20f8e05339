import type { PermissionStep } from "../../actors/ask-permission.js";
import { errorResultText } from "./tool-calls.js";
import type { CallRecord, EngineContext } from "../context.js";
import { replaceRecords, withFields } from "./records.js";

/**
 * ask_permission's answers: allowed calls will run (with the input the decision covered); a denied call gets its
 * denial as the result; a call `beforeToolCall` blocked gets the reason, one it broke gets the error.
 */
export function recordPermissions(context: EngineContext, steps: readonly PermissionStep[]): Partial<EngineContext> {
  const batch = replaceRecords(context.batch, (record) => {
    const step = stepOf(steps, record.call.id);
    return step ? answered(record, step) : record;
  });
  return batch === context.batch ? {} : { batch };
}

/** A record with its permission step's answer. */
function answered(record: CallRecord, step: PermissionStep): CallRecord {
  switch (step.kind) {
    case "blocked":
      return { ...record, status: "invalid", hook: "blocked", result: { content: `Blocked: ${step.reason}`, isError: true } };
    case "suspended":
      return record; // stays pending: resume() asks it again, with its answer
    case "failed":
      return { ...record, status: "invalid", error: step.error, result: { content: errorResultText(step.error), isError: true } };
    case "decided": {
      const reason = step.decision.reason;
      const next = withFields(record, { permission: permissionOf(step.decision) });
      if (step.input !== undefined) {
        next.call = { ...record.call, input: step.input };
        next.hook = "edited";
      }
      if (step.subject !== undefined) next.subject = step.subject;
      if (step.decision.decision === "deny") {
        next.status = "denied";
        next.result = { content: `Permission denied: ${reason ?? "denied"}. ${next.call.name} was not run.`, isError: true };
      } else {
        next.status = "allowed";
      }
      return next;
    }
  }
}

/**
 * The decision as its record keeps it: every field but its reason, in the same order. A loop, not
 * `const { reason, ...permission } = decision`, which V8 (Node 20) makes through a slow runtime call.
 */
function permissionOf(decision: Extract<PermissionStep, { kind: "decided" }>["decision"]): NonNullable<CallRecord["permission"]> {
  const permission: Record<string, unknown> = {};
  for (const key of Object.keys(decision)) if (key !== "reason") permission[key] = (decision as unknown as Record<string, unknown>)[key];
  return permission as unknown as NonNullable<CallRecord["permission"]>;
}

/** A response's steps are few and in call order: a scan, where a Map would be built and dropped on every step. */
function stepOf(steps: readonly PermissionStep[], toolCallId: string): PermissionStep | undefined {
  for (let i = 0; i < steps.length; i++) if (steps[i].toolCallId === toolCallId) return steps[i];
  return undefined;
}

/**
 * A deny ends the run `permission_denied` (the seed; the `stop` action says so) and nothing of the response runs;
 * every other call still gets a result so the conversation stays valid for the session's next run.
 */
export function denyResponse(context: EngineContext): Partial<EngineContext> {
  const batch = replaceRecords(context.batch, (record) =>
    record.result ? record : { ...record, status: "denied", result: { content: "Not run: another call in this response was denied.", isError: true } },
  );
  return batch === context.batch ? {} : { batch };
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
