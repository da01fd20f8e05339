import type { AskPermissionInput } from "../actors/ask-permission.js";
import type { BuildContextInput } from "../actors/build-context.js";
import type { CallModelInput } from "../actors/call-model.js";
import type { DecideRecoveryInput } from "../actors/decide-recovery.js";
import type { RunToolsInput } from "../actors/run-tools.js";
import type { DecidedCall } from "../permissions/recheck.js";
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
    policy: context.deps.policy!,
    ...(context.messages.length > 0 ? { history: context.messages.toArray() } : {}),
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
  // Built by assignment rather than by spreading optional parts: one object per request, no empty ones on the way
  // (the same keys in the same order).
  const { hooks, pace } = context.deps;
  const input: CallModelInput = {
    model: context.deps.model,
    request: { messages: context.messages.toArray(), tools: context.deps.toolSpecs, sessionId: context.run.sessionId, turn: context.turn - 1 },
  };
  if (context.deps.output) input.request.output = context.deps.output.request;
  if (hooks.transformContext) input.transformContext = hooks.transformContext;
  if (pace) input.pace = pace;
  return input;
}

/** The batch's calls in one status, with their tools, in call order. */
function callsWith(context: EngineContext, status: CallRecord["status"]): RunToolsInput["calls"] {
  const calls: Array<RunToolsInput["calls"][number]> = [];
  for (const record of context.batch) if (record.status === status) calls.push({ call: record.call, tool: context.deps.tools.get(record.call.name)! });
  return calls;
}

export function askPermissionInput(context: EngineContext): AskPermissionInput {
  const { permissions, hooks } = context.deps;
  const { answers, answeredBy } = context.durable;
  const input: AskPermissionInput = { calls: callsWith(context, "pending"), policy: context.deps.policy!, onAsk: permissions.onAsk };
  if (permissions.whenUnanswered !== undefined) input.whenUnanswered = permissions.whenUnanswered;
  if (permissions.onDeny === "continue") input.onDeny = "continue";
  if (answers) input.answers = answers;
  if (answeredBy !== undefined) input.answeredBy = answeredBy;
  if (hooks.beforeToolCall) input.beforeToolCall = hooks.beforeToolCall;
  return input;
}

type ToolsCall = { call: CallRecord["call"]; tool: RunToolsInput["calls"][number]["tool"]; decided?: DecidedCall };

/** The allowed calls with what their decisions saw, so each can be decided again as it starts. */
function allowedCalls(context: EngineContext): RunToolsInput["calls"] {
  const calls: ToolsCall[] = [];
  const tools = context.deps.tools;
  for (const record of context.batch) {
    if (record.status !== "allowed") continue;
    const entry: ToolsCall = { call: record.call, tool: tools.get(record.call.name)! };
    if (record.permission) entry.decided = record.subject !== undefined ? { by: record.permission.by, subject: record.subject } : { by: record.permission.by };
    calls.push(entry);
  }
  return calls;
}

export function runToolsInput(context: EngineContext): RunToolsInput {
  const { deps, run, loop } = context;
  const input = { calls: allowedCalls(context) } as RunToolsInput;
  if (deps.policy) input.policy = deps.policy;
  input.cwd = run.cwd;
  if (deps.hooks.afterToolCall) input.afterToolCall = deps.hooks.afterToolCall;
  input.run = {
    sessionId: run.sessionId,
    depth: loop.depth,
    maxDelegationDepth: loop.maxDelegationDepth,
    deadline: run.deadline,
    remainingTurns: run.maxTurns - context.turn,
    remainingToolCalls: run.maxToolCalls - context.toolCallCount,
    traceFile: loop.traceFile,
    permissions: deps.permissions,
    model: deps.model,
  };
  if (deps.hostSubagent) input.run.hostSubagent = deps.hostSubagent;
  if (deps.observeSubagent) input.run.observeSubagent = deps.observeSubagent;
  if (deps.sandbox) input.run.sandbox = deps.sandbox;
  return input;
}

export function decideRecoveryInput(context: EngineContext): DecideRecoveryInput {
  return {
    error: context.outcome.failure ?? new AgentError("MODEL_ERROR", "the model request failed"),
    attempt: context.call.modelErrorAttempts + 1,
    onModelError: context.deps.hooks.onModelError ?? (() => ({ action: "abort" as const })),
  };
}
