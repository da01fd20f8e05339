import { abortable } from "../util/abortable.js";
import { fromPromise, type AnyActorRef } from "xstate";
import { AgentError } from "../errors/agent-error.js";
import type { ToolCall } from "../models/messages.js";
import type { PermissionAnswer, PermissionOptions, PermissionPolicy, PermissionRecord } from "../permissions/types.js";
import type { AnyTool } from "../tools/define-tool.js";

export interface AskPermissionInput {
  calls: ReadonlyArray<{ call: ToolCall; tool: AnyTool }>;
  policy: PermissionPolicy;
  onAsk: PermissionOptions["onAsk"];
  parent: AnyActorRef;
}

/** A recorded decision plus, for a deny, why (it becomes the call's error result). */
export interface PermissionDecision extends PermissionRecord {
  reason?: string;
}

const ANSWERS: readonly PermissionAnswer[] = ["allow", "deny", "allow_always"];

/**
 * Decides every call of a response before any of them runs, in call order: the policy first, then (for calls the
 * policy asks about) `onAsk`. Without `onAsk` an asked call is denied. After the first deny the rest are not asked:
 * nothing of that response will run.
 */
export const askPermissionActor = fromPromise<PermissionDecision[], AskPermissionInput>(async ({ input, signal }) => {
  const decisions: PermissionDecision[] = [];
  for (const { call, tool } of input.calls) {
    const verdict = input.policy.evaluate(tool, call.input);
    let record: PermissionDecision;
    if (verdict.kind === "allow") {
      record = { toolCallId: call.id, decision: "allow", by: verdict.by, input: call.input };
    } else if (verdict.kind === "deny") {
      record = { toolCallId: call.id, decision: "deny", by: verdict.by, input: call.input };
    } else if (!input.onAsk) {
      record = { toolCallId: call.id, decision: "deny", by: "default", input: call.input };
    } else {
      input.parent.send({ type: "permission.asked", call, reason: verdict.reason });
      const answer = await abortable(Promise.resolve(input.onAsk({ call: { id: call.id, name: call.name, input: call.input }, reason: verdict.reason })), signal);
      if (!ANSWERS.includes(answer)) {
        throw new AgentError(
          "HOOK_FAILED",
          `permissions.onAsk answered ${JSON.stringify(answer)} for ${call.name}; it must answer "allow", "deny" or "allow_always"`,
        );
      }
      record = { toolCallId: call.id, decision: answer, by: "human", input: call.input };
      if (answer === "allow_always") record.rule = input.policy.rememberAllow(tool, call.input);
    }
    if (verdict.rule !== undefined && record.by === "rule") record.rule = verdict.rule;
    if (record.decision === "deny") {
      record.reason =
        verdict.kind === "deny"
          ? verdict.reason
          : record.by === "human"
            ? `${call.name} was denied when asked`
            : `${verdict.kind === "ask" ? verdict.reason : call.name}, and no one could be asked (no permissions.onAsk)`;
    }
    decisions.push(record);
    if (record.decision === "deny") break;
  }
  return decisions;
});

