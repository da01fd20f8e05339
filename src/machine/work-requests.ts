import type { AskPermissionInput } from "../actors/ask-permission.js";
import type { BuildContextInput } from "../actors/build-context.js";
import type { CallModelInput } from "../actors/call-model.js";
import type { DecideRecoveryInput } from "../actors/decide-recovery.js";
import type { RunToolsInput } from "../actors/run-tools.js";
import { AgentError } from "../errors/agent-error.js";
import type { CallRecord, EngineContext } from "./context.js";

// What each working state asks of the effects actor, read from the context as the state is entered.

export function buildContextInput(context: EngineContext): BuildContextInput {
  return {
    first: !context.call.contextBuilt,
    sessionId: context.run.sessionId,
    cwd: context.run.cwd,
    userInput: context.run.userInput,
    ...(context.run.systemPrompt !== undefined ? { systemPrompt: context.run.systemPrompt } : {}),
    permissions: context.deps.permissions,
    ...(context.messages.length > 0 ? { history: context.messages } : {}),
    turn: context.turn + 1,
    model: context.deps.model,
    hooks: context.deps.hooks,
    ...(context.deps.summarize ? { summarize: context.deps.summarize } : {}),
    contextWindow: context.loop.contextWindow,
    reserveTokens: context.loop.reserveTokens,
    keepRecentTokens: context.loop.keepRecentTokens,
    ...(context.call.usageAnchor ? { usageAnchor: context.call.usageAnchor } : {}),
    ...(context.call.compactNow !== undefined ? { compactNow: context.call.compactNow } : {}),
    ...(context.deps.warn ? { warn: context.deps.warn } : {}),
  };
}

export function callModelInput(context: EngineContext): CallModelInput {
  return {
    model: context.deps.model,
    request: { messages: context.messages, tools: context.deps.toolSpecs, sessionId: context.run.sessionId, turn: context.turn - 1 },
    ...(context.deps.hooks.transformContext ? { transformContext: context.deps.hooks.transformContext } : {}),
    ...(context.deps.pace ? { pace: context.deps.pace } : {}),
  };
}

/** The batch's calls in one status, with their tools, in call order. */
function callsWith(context: EngineContext, status: CallRecord["status"]): RunToolsInput["calls"] {
  const calls: Array<RunToolsInput["calls"][number]> = [];
  for (const record of context.batch) if (record.status === status) calls.push({ call: record.call, tool: context.deps.tools.get(record.call.name)! });
  return calls;
}

export function askPermissionInput(context: EngineContext): AskPermissionInput {
  return {
    calls: callsWith(context, "pending"),
    policy: context.deps.policy!,
    onAsk: context.deps.permissions.onAsk,
    ...(context.deps.permissions.whenUnanswered !== undefined ? { whenUnanswered: context.deps.permissions.whenUnanswered } : {}),
    ...(context.durable.answers ? { answers: context.durable.answers } : {}),
    ...(context.durable.answeredBy !== undefined ? { answeredBy: context.durable.answeredBy } : {}),
    ...(context.deps.hooks.beforeToolCall ? { beforeToolCall: context.deps.hooks.beforeToolCall } : {}),
  };
}

/** The allowed calls with what their decisions saw, so each can be decided again as it starts. */
function allowedCalls(context: EngineContext): RunToolsInput["calls"] {
  const calls: Array<RunToolsInput["calls"][number]> = [];
  for (const record of context.batch) {
    if (record.status !== "allowed") continue;
    const decided = record.permission ? { by: record.permission.by, ...(record.subject !== undefined ? { subject: record.subject } : {}) } : undefined;
    calls.push({ call: record.call, tool: context.deps.tools.get(record.call.name)!, ...(decided ? { decided } : {}) });
  }
  return calls;
}

export function runToolsInput(context: EngineContext): RunToolsInput {
  return {
    calls: allowedCalls(context),
    ...(context.deps.policy ? { policy: context.deps.policy } : {}),
    cwd: context.run.cwd,
    ...(context.deps.hooks.afterToolCall ? { afterToolCall: context.deps.hooks.afterToolCall } : {}),
    run: {
      sessionId: context.run.sessionId,
      depth: context.loop.depth,
      maxDelegationDepth: context.loop.maxDelegationDepth,
      deadline: context.run.deadline,
      remainingTurns: context.run.maxTurns - context.turn,
      remainingToolCalls: context.run.maxToolCalls - context.toolCallCount,
      traceFile: context.loop.traceFile,
      permissions: context.deps.permissions,
      model: context.deps.model,
    },
  };
}

export function decideRecoveryInput(context: EngineContext): DecideRecoveryInput {
  return {
    error: context.outcome.failure ?? new AgentError("MODEL_ERROR", "the model request failed"),
    attempt: context.call.modelErrorAttempts + 1,
    onModelError: context.deps.hooks.onModelError ?? (() => ({ action: "abort" as const })),
  };
}
