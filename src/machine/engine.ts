import { and, assign, enqueueActions, setup, type DoneActorEvent, type ErrorActorEvent } from "xstate";
import { askPermissionActor, type PermissionDecision } from "../actors/ask-permission.js";
import { buildContextActor, type BuiltContext } from "../actors/build-context.js";
import { callModelActor } from "../actors/call-model.js";
import { runToolsActor } from "../actors/run-tools.js";
import { AgentError, toAgentError } from "../errors/agent-error.js";
import type { AgentEvent } from "../events.js";
import { emptyUsage } from "../events.js";
import type { ModelResponse } from "../models/model.js";
import {
  aborted,
  batchAwaitsExecution,
  batchAwaitsPermission,
  batchHasErrors,
  batchHitToolLimit,
  fatalToolError,
  modelRequestedTools,
  permissionDenied,
  runFailed,
  timedOut,
  toolCallsExhausted,
  turnsExhausted,
} from "../guards/index.js";
import { appendToolResults, recordToolFinished, startExecution } from "./actions/execution.js";
import { beginModelCall, recordResponse, recordStreamText } from "./actions/model-call.js";
import { denyResponse, recordPermissions } from "./actions/permissions.js";
import { recoverFromErrors } from "./actions/recover.js";
import { closeRun, limitError, stopWith } from "./actions/stop.js";
import { parseToolCalls, validateToolCalls } from "./actions/tool-calls.js";
import type { EngineContext, EngineInput } from "./context.js";
import type { EngineEvent } from "./events.js";
import type { StopReason } from "./stop-reasons.js";
import type { ErrorInfo } from "../errors/agent-error.js";

/** What the machine ends with. */
export interface EngineOutput {
  reason: StopReason;
  error?: ErrorInfo;
}

/** Events the machine emits for the caller (the rest of AgentEvent is derived by the query bridge). */
export type EngineEmitted = Extract<
  AgentEvent,
  { type: "text_delta" | "thinking_delta" | "retry" | "tool_start" | "tool_result" | "permission_request" }
>;

const modelOutput = (event: unknown) => (event as DoneActorEvent<ModelResponse>).output;
const builtOutput = (event: unknown) => (event as DoneActorEvent<BuiltContext>).output;
const decisionsOutput = (event: unknown) => (event as DoneActorEvent<PermissionDecision[]>).output;
const actorError = (event: unknown, code: "MODEL_ERROR" | "HOOK_FAILED") =>
  toAgentError((event as ErrorActorEvent).error, code);

/**
 * The engine: the seed's EngineState as an XState v5 machine. Its atomic and final states are exactly the seed's ten;
 * `call_model` and `stream_text` share the compound `model` so one model invocation lives across both.
 * The machine only decides: I/O happens in the invoked actors, bookkeeping in the named actions, and everything a
 * caller sees is emitted or observed (trace, transcript, audit and the event bridge observe the actor).
 */
export const engineMachine = setup({
  types: {
    context: {} as EngineContext,
    input: {} as EngineInput,
    events: {} as EngineEvent,
    output: {} as EngineOutput,
    emitted: {} as EngineEmitted,
  },
  actors: {
    buildContext: buildContextActor,
    callModel: callModelActor,
    askPermission: askPermissionActor,
    runTools: runToolsActor,
  },
  guards: {
    turnsExhausted: ({ context }) => turnsExhausted(context),
    toolCallsExhausted: ({ context }) => toolCallsExhausted(context),
    timedOut: ({ context }) => timedOut(context),
    aborted: ({ context }) => aborted(context),
    modelRequestedTools: ({ event }) => modelRequestedTools(modelOutput(event)),
    batchHasErrors: ({ context }) => batchHasErrors(context),
    batchAwaitsPermission: ({ context }) => batchAwaitsPermission(context),
    batchAwaitsExecution: ({ context }) => batchAwaitsExecution(context),
    batchHitToolLimit: ({ context }) => batchHitToolLimit(context),
    fatalToolError: ({ context }) => fatalToolError(context),
    runFailed: ({ context }) => runFailed(context),
    permissionDenied: ({ event }) => permissionDenied(decisionsOutput(event)),
    isTextDelta: ({ event }) => event.type === "model.stream" && event.event.type === "text_delta",
  },
  actions: {
    storeBuiltContext: assign(({ context, event }) => {
      const built = builtOutput(event);
      return { messages: built.messages, deps: { ...context.deps, policy: built.policy } };
    }),
    beginModelCall: assign(({ context }) => beginModelCall(context)),
    relayModelStream: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "model.stream") return;
      const streamed = event.event;
      if (streamed.type === "text_delta") {
        enqueue.assign(recordStreamText(context, streamed.text));
        enqueue.emit({ type: "text_delta", text: streamed.text });
      } else if (streamed.type === "thinking_delta") {
        enqueue.emit({ type: "thinking_delta", text: streamed.text });
      } else {
        enqueue.emit({ type: "retry", attempt: streamed.attempt, delayMs: streamed.delayMs, error: streamed.error });
      }
    }),
    recordResponse: assign(({ context, event }) => recordResponse(context, modelOutput(event))),
    recordModelFailure: assign(({ event }) => ({ failure: actorError(event, "MODEL_ERROR") })),
    recordPermissionFailure: assign(({ event }) => ({ failure: actorError(event, "HOOK_FAILED") })),
    parseToolCalls: assign(({ context }) => parseToolCalls(context)),
    validateToolCalls: assign(({ context }) => validateToolCalls(context)),
    recoverFromErrors: assign(({ context }) => recoverFromErrors(context)),
    recordPermissions: assign(({ context, event }) => recordPermissions(context, decisionsOutput(event))),
    denyResponse: assign(({ context }) => denyResponse(context)),
    announcePermissionRequest: enqueueActions(({ event, enqueue }) => {
      if (event.type === "permission.asked") enqueue.emit({ type: "permission_request", call: event.call, reason: event.reason });
    }),
    startExecution: assign(({ context }) => startExecution(context)),
    announceToolStart: enqueueActions(({ event, enqueue }) => {
      if (event.type === "tool.started") enqueue.emit({ type: "tool_start", call: event.call });
    }),
    recordToolFinished: assign(({ context, event }) => (event.type === "tool.finished" ? recordToolFinished(context, event) : {})),
    appendToolResults: assign(({ context }) => appendToolResults(context)),
    /** Every call gets exactly one `tool_result` event, the moment its result is known. */
    announceResults: enqueueActions(({ context, enqueue }) => {
      for (const record of context.batch) {
        if (!record.result || record.announced) continue;
        record.announced = true;
        enqueue.emit({ type: "tool_result", call: record.call, result: record.result });
      }
    }),
    stopWithFinalAnswer: assign(({ context }) => stopWith(context, "final_answer")),
    stopWithLimit: assign(({ context }, params: { reason: StopReason }) =>
      stopWith(context, params.reason, limitError(params.reason, context)),
    ),
    closeRun: assign(({ context }) => closeRun(context)),
  },
  delays: {
    runDeadline: ({ context }) => Math.max(0, context.deadline - Date.now()),
  },
}).createMachine({
  id: "engine",
  context: ({ input }) => {
    const startedAt = input.startedAt ?? Date.now();
    return {
      sessionId: input.sessionId,
      userInput: input.userInput,
      cwd: input.cwd,
      ...(input.systemPrompt !== undefined ? { systemPrompt: input.systemPrompt } : {}),
      maxTurns: input.maxTurns,
      maxToolCalls: input.maxToolCalls,
      timeoutMs: input.timeoutMs,
      startedAt,
      deadline: startedAt + input.timeoutMs,
      turn: 0,
      toolCallCount: 0,
      usage: emptyUsage(),
      messages: input.history ? [...input.history] : [],
      streamingText: "",
      batch: [],
      batchOpen: false,
      batchHitToolLimit: false,
      finalText: "",
      deps: input.deps,
    };
  },
  // The run's limits hold in every state: an abort or the deadline leaves whatever state is active, which stops
  // (and so aborts) the actor working there.
  on: {
    ABORT: { target: ".done", actions: { type: "stopWithLimit", params: { reason: "user_abort" } } },
  },
  after: {
    runDeadline: { target: ".done", actions: { type: "stopWithLimit", params: { reason: "timeout" } } },
  },
  initial: "build_context",
  states: {
    build_context: {
      always: { guard: "aborted", target: "done", actions: { type: "stopWithLimit", params: { reason: "user_abort" } } },
      invoke: {
        id: "buildContext",
        src: "buildContext",
        input: ({ context }) => ({
          sessionId: context.sessionId,
          cwd: context.cwd,
          userInput: context.userInput,
          ...(context.systemPrompt !== undefined ? { systemPrompt: context.systemPrompt } : {}),
          permissions: context.deps.permissions,
          ...(context.messages.length > 0 ? { history: context.messages } : {}),
        }),
        onDone: [
          { guard: "turnsExhausted", target: "done", actions: ["storeBuiltContext", { type: "stopWithLimit", params: { reason: "max_turns" } }] },
          { target: "model", actions: "storeBuiltContext" },
        ],
        onError: { target: "recover", actions: "recordModelFailure" },
      },
    },
    model: {
      entry: "beginModelCall",
      invoke: {
        id: "callModel",
        src: "callModel",
        input: ({ context, self }) => ({
          model: context.deps.model,
          request: {
            messages: context.messages,
            tools: context.deps.toolSpecs,
            sessionId: context.sessionId,
            turn: context.turn - 1,
          },
          parent: self,
        }),
        onDone: [
          { guard: "modelRequestedTools", target: "parse_tool_call", actions: "recordResponse" },
          { target: "done", actions: ["recordResponse", "stopWithFinalAnswer"] },
        ],
        onError: { target: "recover", actions: "recordModelFailure" },
      },
      initial: "call_model",
      states: {
        call_model: {
          on: { "model.stream": [{ guard: "isTextDelta", target: "stream_text", actions: "relayModelStream" }, { actions: "relayModelStream" }] },
        },
        stream_text: {
          on: { "model.stream": { actions: "relayModelStream" } },
        },
      },
    },
    parse_tool_call: {
      entry: "parseToolCalls",
      always: "validate_tool",
    },
    validate_tool: {
      entry: "validateToolCalls",
      always: [
        { guard: "batchHasErrors", target: "recover" },
        { guard: "batchAwaitsPermission", target: "ask_permission" },
        { target: "append_tool_result" },
      ],
    },
    ask_permission: {
      invoke: {
        id: "askPermission",
        src: "askPermission",
        input: ({ context, self }) => ({
          calls: context.batch
            .filter((r) => r.status === "pending")
            .map((r) => ({ call: r.call, tool: context.deps.tools.get(r.call.name)! })),
          policy: context.deps.policy!,
          onAsk: context.deps.permissions.onAsk,
          parent: self,
        }),
        onDone: [
          { guard: "permissionDenied", target: "done", actions: ["recordPermissions", "denyResponse", "announceResults"] },
          { target: "execute_tool", actions: "recordPermissions" },
        ],
        onError: { target: "recover", actions: "recordPermissionFailure" },
      },
      on: { "permission.asked": { actions: "announcePermissionRequest" } },
    },
    execute_tool: {
      entry: "startExecution",
      invoke: {
        id: "runTools",
        src: "runTools",
        input: ({ context, self }) => ({
          calls: context.batch
            .filter((r) => r.status === "allowed")
            .map((r) => ({ call: r.call, tool: context.deps.tools.get(r.call.name)! })),
          cwd: context.cwd,
          parent: self,
        }),
        onDone: [{ guard: "batchHasErrors", target: "recover" }, { target: "append_tool_result" }],
        onError: { target: "recover", actions: "recordModelFailure" },
      },
      on: {
        "tool.started": { actions: "announceToolStart" },
        "tool.finished": { actions: ["recordToolFinished", "announceResults"] },
      },
    },
    append_tool_result: {
      entry: ["appendToolResults", "announceResults"],
      always: [
        { guard: and(["toolCallsExhausted", "batchHitToolLimit"]), target: "done", actions: { type: "stopWithLimit", params: { reason: "max_tool_calls" } } },
        { guard: "aborted", target: "done", actions: { type: "stopWithLimit", params: { reason: "user_abort" } } },
        { guard: "timedOut", target: "done", actions: { type: "stopWithLimit", params: { reason: "timeout" } } },
        { guard: "turnsExhausted", target: "done", actions: { type: "stopWithLimit", params: { reason: "max_turns" } } },
        { target: "model" },
      ],
    },
    recover: {
      entry: ["recoverFromErrors", "announceResults"],
      always: [
        { guard: "runFailed", target: "done" },
        { guard: "fatalToolError", target: "done" },
        { guard: "batchAwaitsPermission", target: "ask_permission" },
        { guard: "batchAwaitsExecution", target: "execute_tool" },
        { target: "append_tool_result" },
      ],
    },
    done: {
      type: "final",
      entry: ["closeRun", "announceResults"],
    },
  },
  output: ({ context }) => ({
    reason: context.stopReason ?? "model_error",
    ...(context.stopError ? { error: context.stopError } : {}),
  }),
});

export type EngineMachine = typeof engineMachine;

/** The engine's current state name (the atomic state of a snapshot value). */
export function engineStateOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (value && typeof value === "object") {
    const [parent, child] = Object.entries(value as Record<string, unknown>)[0] ?? [];
    return parent === undefined ? "" : engineStateOf(child);
  }
  return "";
}

export { AgentError };
