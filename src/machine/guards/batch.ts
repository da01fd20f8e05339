import type { CallRecord } from "../context.js";
import type { ModelResponse } from "../../models/model.js";
import type { PermissionStep } from "../../actors/ask-permission.js";
import type { OnDeny } from "../../record/permission-options.js";

/** The model asked for at least one tool call. */
export function modelRequestedTools(response: ModelResponse): boolean {
  return response.toolCalls.length > 0;
}

/** Some call of the batch was refused before running or failed while running: recover must judge it. */
export function batchHasErrors(context: { batch: readonly CallRecord[] }): boolean {
  return context.batch.some((r) => r.error !== undefined && r.result === undefined);
}

/** Some call of the batch still waits for its permission decision. */
export function batchAwaitsPermission(context: { batch: readonly CallRecord[] }): boolean {
  return context.batch.some((r) => r.status === "pending");
}

/** A tool failed in a way that ends the run. */
export function fatalToolError(context: { batch: readonly CallRecord[] }): boolean {
  return context.batch.some((r) => r.fatal === true);
}

/** A failure that is not a tool call's own (the model request, building the context). */
export function runFailed(context: { failure?: unknown }): boolean {
  return context.failure !== undefined;
}

/** Some permission decision of the response was a deny, and a deny ends the run (`onDeny: "end"`, the default). */
export function permissionDenied(steps: readonly PermissionStep[], onDeny: OnDeny = "end"): boolean {
  if (onDeny === "continue") return false;
  return steps.some((s) => s.kind === "decided" && s.decision.decision === "deny");
}

/** Some call of the batch could not run because the tool-call budget was spent. */
export function batchHitToolLimit(context: { batchHitToolLimit: boolean }): boolean {
  return context.batchHitToolLimit;
}

/**
 * ask_permission allowed at least one call to run: in these steps, or (a resumed run, which asks only the questions
 * left open) in an earlier step of the same batch.
 */
export function callsAllowed(steps: readonly PermissionStep[], batch: readonly CallRecord[] = []): boolean {
  return steps.some((s) => s.kind === "decided" && s.decision.decision !== "deny") || batch.some((r) => r.status === "allowed");
}

/** Some question of the response was suspended: the run stops in ask_permission until resume() answers it. */
export function permissionSuspended(steps: readonly PermissionStep[]): boolean {
  return steps.some((s) => s.kind === "suspended");
}
