import type { EngineContext, ResumeTarget } from "../context.js";
import { estimateContextTokens } from "../../compaction/estimate.js";
import { aborted } from "./aborted.js";
import { batchAwaitsPermission, fatalToolError } from "./batch.js";
import { turnsExhausted } from "./turns-exhausted.js";

/** A steering message waits to enter before the next model call. */
export function steeringQueued(context: Pick<EngineContext, "inbox">): boolean {
  return context.inbox.steering.length > 0;
}

/** A follow-up waits for the agent to be about to stop. */
export function followUpQueued(context: Pick<EngineContext, "inbox">): boolean {
  return context.inbox.followUp.length > 0;
}

/** The tokens the model reported in this run reached `maxTokens`. */
export function tokensExhausted(context: Pick<EngineContext, "usage" | "loop">): boolean {
  const max = context.loop.maxTokens;
  return max !== undefined && context.usage.input + context.usage.output >= max;
}

/** The conversation's estimated size is past contextWindow − reserveTokens. */
export function contextOverBudget(context: Pick<EngineContext, "messages" | "call" | "loop">): boolean {
  const { contextWindow, reserveTokens } = context.loop;
  if (contextWindow <= 0) return false;
  return estimateContextTokens(context.messages.toArray(), context.call.usageAnchor) > contextWindow - reserveTokens;
}

/**
 * build_context has work beyond taking queued messages: the first request of the run, a turn hook, or compaction.
 * Otherwise the run goes straight on to the model.
 */
export function needsPreparation(context: EngineContext): boolean {
  const hooks = context.deps.hooks;
  return (
    !context.call.contextBuilt ||
    hooks.prepareNextTurn !== undefined ||
    hooks.shouldStopAfterTurn !== undefined ||
    context.call.compactNow !== undefined ||
    contextOverBudget(context)
  );
}

/** A context overflow the run has not yet compacted for (one compaction and one retry per run, never a cascade). */
export function overflowRecoverable(context: Pick<EngineContext, "outcome" | "call">): boolean {
  const { failure, failedIn } = context.outcome;
  return failedIn === "call_model" && failure?.code === "CONTEXT_OVERFLOW" && !context.call.overflowCompacted;
}

/** A failed model request that `onModelError` gets to decide about. */
export function modelErrorHookApplies(context: Pick<EngineContext, "outcome" | "deps">): boolean {
  const { failure, failedIn } = context.outcome;
  return failedIn === "call_model" && failure !== undefined && failure.code !== "HOOK_FAILED" && context.deps.hooks.onModelError !== undefined;
}

/**
 * build_context asks for the context and waits for it: it has work to do, and none of its limits ends the run first.
 * Mirrors the order of build_context's eventless transitions, so work is only started in a state that will wait for it.
 */
export function preparesContext(context: EngineContext): boolean {
  if (aborted(context) || resuming(context)) return false;
  if (context.call.contextBuilt) {
    if (tokensExhausted(context)) return false;
    if (!context.call.retrying && turnsExhausted({ turn: context.turn, maxTurns: context.run.maxTurns })) return false;
  }
  return needsPreparation(context);
}

/**
 * recover asks `onModelError` and waits for its decision: a failed model request it applies to, with no compaction to
 * try first. Mirrors the order of recover's eventless transitions, like `preparesContext`.
 */
export function awaitsRecoveryDecision(context: EngineContext): boolean {
  return modelErrorHookApplies(context) && !overflowRecoverable(context) && !fatalToolError(context) && !batchAwaitsPermission(context);
}

/** A resumed run that has not yet gone back to where it stopped: build_context has nothing to build. */
export function resuming(context: Pick<EngineContext, "durable">): boolean {
  return context.durable?.resumeAt !== undefined;
}

/** A resumed run goes back to this state. */
export function resumesAt(context: Pick<EngineContext, "durable">, target: ResumeTarget): boolean {
  return context.durable?.resumeAt === target;
}
