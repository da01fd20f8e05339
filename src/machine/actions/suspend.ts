import type { PermissionStep } from "../../actors/ask-permission.js";
import type { EngineContext, PendingCall } from "../context.js";

/** ask_permission suspended: the questions left open, in call order, are what resume() must answer. */
export function recordSuspension(context: EngineContext, steps: readonly PermissionStep[]): Partial<EngineContext> {
  const pending: PendingCall[] = [];
  for (const step of steps) {
    if (step.kind !== "suspended") continue;
    const record = context.batch.find((r) => r.call.id === step.toolCallId);
    pending.push({ callId: step.toolCallId, name: record?.call.name ?? "", input: step.input, reason: step.reason });
  }
  return { durable: { ...context.durable, pending } };
}

/** A resumed run is back where it stopped: the answers it was given are asked with, the open questions are cleared. */
export function beginResume(context: EngineContext): Partial<EngineContext> {
  const { pending: _pending, resumeAt: _at, ...rest } = context.durable;
  return { durable: rest };
}
