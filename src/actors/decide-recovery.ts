import { AgentError } from "../errors/agent-error.js";
import { callHook, type AgentHooks, type ModelErrorAction } from "../hooks.js";
import { sleep } from "../util/abortable.js";

export interface DecideRecoveryInput {
  error: AgentError;
  /** 1 for the first failure of this request. */
  attempt: number;
  onModelError: NonNullable<AgentHooks["onModelError"]>;
}

/**
 * recover, for a failed model request: asks `onModelError` what to do (seed 002's request-error actions).
 * No answer means abort. A retry's delay is waited here, abortably, so leaving the state cancels it.
 */
export async function decideRecovery(input: DecideRecoveryInput, signal: AbortSignal): Promise<ModelErrorAction> {
  const answer = await callHook("onModelError", () => input.onModelError(input.error, input.attempt));
  if (!answer) return { action: "abort" };
  if (answer.action !== "retry" && answer.action !== "abort" && answer.action !== "continue") {
    throw new AgentError("HOOK_FAILED", `hook onModelError failed: it answered ${JSON.stringify(answer)}; expected { action: "retry" | "abort" | "continue" }`);
  }
  if (answer.action === "retry" && answer.delayMs && answer.delayMs > 0) await sleep(answer.delayMs, signal);
  return answer;
}
