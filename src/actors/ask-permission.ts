import { AgentError } from "../errors/agent-error.js";
import { callHook, type AgentHooks } from "../hooks.js";
import type { ToolCall } from "../models/messages.js";
import type { AskAnswer, PermissionAnswer, PermissionOptions, PermissionPolicy, PermissionRecord, WhenUnanswered } from "../permissions/types.js";
import type { OnDeny } from "../record/permission-options.js";
import type { AnyTool } from "../tools/define-tool.js";
import { abortable } from "../util/abortable.js";
import type { Report } from "./report.js";

export interface AskPermissionInput {
  calls: ReadonlyArray<{ call: ToolCall; tool: AnyTool }>;
  policy: PermissionPolicy;
  onAsk: PermissionOptions["onAsk"];
  /** What a question gets with no `onAsk`. Default "deny". */
  whenUnanswered?: WhenUnanswered;
  /** `"continue"`: a deny does not end the response, so the calls after it are decided too. */
  onDeny?: OnDeny;
  /** Answers given to resume(), by call id: they answer those calls' questions instead of `onAsk` (`by: "human"`). */
  answers?: Readonly<Record<string, PermissionAnswer>>;
  /** Who or where the `answers` came from (free text), recorded with them. */
  answeredBy?: string;
  beforeToolCall?: AgentHooks["beforeToolCall"];
}

/** A recorded decision plus, for a deny, why (it becomes the call's error result). */
export interface PermissionDecision extends PermissionRecord {
  reason?: string;
}

/** What ask_permission settled for one call. */
export type PermissionStep =
  /**
   * Decided by the policy or a person; `input` is set when `beforeToolCall` edited it (the decision covers it);
   * `subject` is what the decision saw (execute_tool re-checks the call against it as it starts).
   */
  | { toolCallId: string; kind: "decided"; decision: PermissionDecision; input?: unknown; subject?: string }
  /** `beforeToolCall` blocked the call: the model gets the reason as its error result. */
  | { toolCallId: string; kind: "blocked"; reason: string }
  /** `beforeToolCall` threw, or its edited input is invalid: the call gets an error result, the others go on. */
  | { toolCallId: string; kind: "failed"; error: AgentError }
  /**
   * The question was suspended (`onAsk` or `whenUnanswered` said "suspend"): the run stops here until resume()
   * answers it. `input` is the input the question is about (after `beforeToolCall`).
   */
  | { toolCallId: string; kind: "suspended"; reason: string; input: unknown };

const ANSWERS: readonly string[] = ["allow", "deny", "allow_always", "suspend"] satisfies AskAnswer[];
const isAskAnswer = (answer: unknown): answer is AskAnswer => typeof answer === "string" && ANSWERS.includes(answer);

/**
 * Decides every call of a response before any of them runs (execute_tool decides each again as it starts), in call order: `beforeToolCall` first (block, or edit the
 * input, which is validated again), then the policy, then (for calls the policy asks about) `onAsk`, bound to that
 * call's id and exact input. Without `onAsk` an asked call is denied (or suspended, `whenUnanswered: "suspend"`).
 * After the first deny the rest are not asked: nothing of that response will run. After the first suspended question
 * the rest are not asked either: the calls the policy would ask about are suspended with it.
 */
export async function askPermission(input: AskPermissionInput, signal: AbortSignal, report: Report): Promise<PermissionStep[]> {
  const steps: PermissionStep[] = [];
  let suspending = false;
  for (const entry of input.calls) {
    const { tool } = entry;
    let call = entry.call;
    let edited = false;
    if (input.beforeToolCall) {
      const hook = input.beforeToolCall;
      let answer;
      try {
        answer = await abortable(callHook("beforeToolCall", () => hook(call)), signal);
      } catch (error) {
        if (signal.aborted) throw error;
        steps.push({ toolCallId: call.id, kind: "failed", error: error as AgentError });
        continue;
      }
      if (answer && "block" in answer && answer.block) {
        steps.push({ toolCallId: call.id, kind: "blocked", reason: String(answer.reason ?? "blocked by beforeToolCall") });
        continue;
      }
      if (answer && "input" in answer) {
        const check = tool.validateInput(answer.input);
        if (!check.ok) {
          steps.push({
            toolCallId: call.id,
            kind: "failed",
            error: new AgentError("TOOL_INPUT_INVALID", `invalid input for ${tool.name} (edited by beforeToolCall): ${check.message}`),
          });
          continue;
        }
        call = { ...call, input: check.value };
        edited = true;
      }
    }
    const decided = await decide(call, tool, input, signal, report, suspending);
    if ("suspend" in decided) {
      // Once one question is suspended the rest are not put to anyone now: they wait for resume() too.
      suspending = true;
      steps.push({ toolCallId: call.id, kind: "suspended", reason: decided.suspend, input: call.input });
      continue;
    }
    const { decision, subject } = decided;
    steps.push({ toolCallId: call.id, kind: "decided", decision, ...(edited ? { input: call.input } : {}), ...(subject !== undefined ? { subject } : {}) });
    if (decision.decision === "deny" && input.onDeny !== "continue") break;
  }
  return steps;
}

async function decide(
  call: ToolCall,
  tool: AnyTool,
  input: AskPermissionInput,
  signal: AbortSignal,
  report: Report,
  suspending: boolean,
): Promise<{ decision: PermissionDecision; subject?: string } | { suspend: string }> {
  const verdict = input.policy.evaluate(tool, call.input);
  let record: PermissionDecision;
  const given = input.answers?.[call.id];
  if (verdict.kind === "allow") {
    record = { toolCallId: call.id, decision: "allow", by: verdict.by, input: call.input };
  } else if (verdict.kind === "deny") {
    record = { toolCallId: call.id, decision: "deny", by: verdict.by, input: call.input, reason: verdict.reason };
  } else if (given !== undefined) {
    // Answered through resume(): a person's answer, as if onAsk had given it.
    record = { toolCallId: call.id, decision: given, by: "human", input: call.input, ...(input.answeredBy !== undefined ? { answeredBy: input.answeredBy } : {}) };
    if (given === "allow_always") record.rule = input.policy.rememberAllow(tool, call.input);
    if (given === "deny") record.reason = `${call.name} was denied when asked`;
  } else if (suspending || (!input.onAsk && input.whenUnanswered === "suspend")) {
    return { suspend: verdict.reason };
  } else if (!input.onAsk) {
    record = {
      toolCallId: call.id,
      decision: "deny",
      by: "default",
      input: call.input,
      reason: `${verdict.reason}, and no one could be asked (no permissions.onAsk)`,
    };
  } else {
    report({ type: "permission.asked", call, reason: verdict.reason });
    const onAsk = input.onAsk;
    const answer = await abortable(Promise.resolve(onAsk({ call: { id: call.id, name: call.name, input: call.input }, reason: verdict.reason, signal })), signal);
    if (!isAskAnswer(answer)) {
      throw new AgentError(
        "HOOK_FAILED",
        `permissions.onAsk answered ${JSON.stringify(answer)} for ${call.name}; it must answer "allow", "deny", "allow_always" or "suspend"`,
      );
    }
    if (answer === "suspend") return { suspend: verdict.reason };
    record = { toolCallId: call.id, decision: answer, by: "human", input: call.input };
    if (answer === "allow_always") record.rule = input.policy.rememberAllow(tool, call.input);
    if (answer === "deny") record.reason = `${call.name} was denied when asked`;
  }
  if (verdict.rule !== undefined && record.by === "rule") record.rule = verdict.rule;
  return { decision: record, subject: verdict.subject };
}
