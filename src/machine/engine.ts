import { and, assign, emit, enqueueActions, not, sendTo, setup } from "xstate";
import type { PermissionStep } from "../actors/ask-permission.js";
import type { BuiltContext } from "../actors/build-context.js";
import { startingAtOnce } from "../actors/run-tools.js";
import { effectsActor, isResultOf, type EffectName } from "../actors/effects.js";
import { toAgentError, type ErrorInfo } from "../errors/agent-error.js";
import type { EmittedEvent } from "../events.js";
import type { ModelErrorAction } from "../hooks.js";
import type { ModelResponse } from "../models/model.js";
import {
  aborted,
  batchAwaitsPermission,
  batchHasErrors,
  batchHitToolLimit,
  callsAllowed,
  fatalToolError,
  followUpQueued,
  modelErrorHookApplies,
  modelRequestedTools,
  awaitsRecoveryDecision,
  needsPreparation,
  outputRequested,
  outputRetriesSpent,
  outputValid,
  preparesContext,
  overflowRecoverable,
  permissionDenied,
  permissionSuspended,
  resumesAt,
  runFailed,
  steeringQueued,
  timedOut,
  tokensExhausted,
  toolCallsExhausted,
  turnsExhausted,
} from "./guards/index.js";
import { storeBuiltContext } from "./actions/build.js";
import { appendToolResults, recordToolFinished, startExecution } from "./actions/execution.js";
import { claimInbox, enqueue } from "./actions/inbox.js";
import { noteModelError, prepareOverflowCompaction, prepareRetry } from "./actions/model-errors.js";
import { askOutputAgain, validateOutput } from "./actions/output.js";
import { beginModelCall, recordResponse, recordStreamText } from "./actions/model-call.js";
import { denyResponse, recordPermissions } from "./actions/permissions.js";
import { beginResume, recordSuspension } from "./actions/suspend.js";
import { recoverFromErrors } from "./actions/recover.js";
import { markAnnounced } from "./actions/records.js";
import { closeRun, outputOf, stopWith, toolsCrash, type StopCause } from "./actions/stop.js";
import { parseToolCalls, validateToolCalls } from "./actions/tool-calls.js";
import type { EngineContext, EngineInput } from "./context.js";
import { initialContext } from "./initial-context.js";
import { eventOf, type EngineEvent } from "./events.js";
import type { StopReason } from "./stop-reasons.js";
import { askPermissionInput, buildContextInput, callModelInput, decideRecoveryInput, runToolsInput } from "./work-requests.js";

/** What the machine ends with. */
export interface EngineOutput {
  reason: StopReason;
  error?: ErrorInfo;
}

/** Events the machine emits for the caller (the rest of AgentEvent is derived by the query bridge). */
export type EngineEmitted = EmittedEvent;

const doneOutput = <T>(event: unknown) => (event as { output: T }).output;
/** The failed work's error, with `code` for anything thrown that is not an AgentError. */
const failure = (event: unknown, code: "MODEL_ERROR" | "HOOK_FAILED" | "ENGINE_FAILED") => toAgentError((event as { error: unknown }).error, code);
/** Every stop of the run: one action, which keeps the first reason (see actions/stop.ts for each cause's reason and code). */
const stop = (cause: StopCause) => ({ type: "stopWith", params: { cause } }) as const;
const cancel = (effect: EffectName) => ({ type: "cancelWork", params: { effect } }) as const;

/**
 * The engine: the seed's EngineState as an XState v5 machine. Its atomic and final states are the seed's ten and validate_output (runs with `output`);
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
    effects: effectsActor(),
  },
  guards: {
    turnsExhausted: ({ context }) => turnsExhausted({ turn: context.turn, maxTurns: context.run.maxTurns }),
    toolCallsExhausted: ({ context }) => toolCallsExhausted({ toolCallCount: context.toolCallCount, maxToolCalls: context.run.maxToolCalls }),
    timedOut: ({ context }) => timedOut(context.run),
    aborted: ({ context }) => aborted(context),
    tokensExhausted: ({ context }) => tokensExhausted(context),
    contextBuilt: ({ context }) => context.call.contextBuilt,
    retrying: ({ context }) => context.call.retrying,
    needsPreparation: ({ context }) => needsPreparation(context),
    stopRequested: ({ event }) => doneOutput<BuiltContext>(event).stop === true,
    steeringQueued: ({ context }) => steeringQueued(context),
    inboxHasMessages: ({ context }) => steeringQueued(context) || followUpQueued(context),
    followUpQueued: ({ context }) => followUpQueued(context),
    isTextDelta: ({ event }) => event.type === "model.stream" && event.event.type === "text_delta",
    modelRequestedTools: ({ event }) => modelRequestedTools(doneOutput<ModelResponse>(event)),
    batchHasErrors: ({ context }) => batchHasErrors(context),
    batchAwaitsPermission: ({ context }) => batchAwaitsPermission(context),
    batchHitToolLimit: ({ context }) => batchHitToolLimit({ batchHitToolLimit: context.batchState.hitToolLimit }),
    fatalToolError: ({ context }) => fatalToolError(context),
    permissionDenied: ({ context, event }) => permissionDenied(doneOutput<PermissionStep[]>(event), context.deps.permissions.onDeny),
    callsAllowed: ({ context, event }) => callsAllowed(doneOutput<PermissionStep[]>(event), context.batch),
    permissionSuspended: ({ event }) => permissionSuspended(doneOutput<PermissionStep[]>(event)),
    resumesAtQuestion: ({ context }) => resumesAt(context, "ask_permission"),
    resumesAtModel: ({ context }) => resumesAt(context, "model"),
    resumesAtTools: ({ context }) => resumesAt(context, "execute_tool"),
    resumesAtResults: ({ context }) => resumesAt(context, "append_tool_result"),
    runFailed: ({ context }) => runFailed(context.outcome),
    overflowRecoverable: ({ context }) => overflowRecoverable(context),
    modelErrorHookApplies: ({ context }) => modelErrorHookApplies(context),
    retryRequested: ({ event }) => doneOutput<ModelErrorAction>(event).action === "retry",
    continueRequested: ({ event }) => doneOutput<ModelErrorAction>(event).action === "continue",
    outputRequested: ({ context }) => outputRequested(context.deps),
    outputValid: ({ context }) => outputValid(context.outcome),
    outputRetriesSpent: ({ context }) => outputRetriesSpent(context.outcome, context.deps.output?.retries ?? 0),
  },
  actions: {
    storeBuiltContext: assign(({ context, event }) => storeBuiltContext(context, doneOutput<BuiltContext>(event))),
    // One assign where the two would follow each other on a transition: one snapshot instead of two. The inbox is
    // claimed into the conversation just stored, as it would be one action after the other.
    storeBuiltContextAndClaimInbox: assign(({ context, event }) => {
      const stored = storeBuiltContext(context, doneOutput<BuiltContext>(event));
      return { ...stored, ...claimInbox({ ...context, ...stored }) };
    }),
    announceCompaction: enqueueActions(({ context, enqueue }) => {
      const compaction = context.call.compaction;
      if (compaction) enqueue.emit({ type: "compaction", tokensBefore: compaction.tokensBefore, tokensAfter: compaction.tokensAfter });
    }),
    claimInbox: assign(({ context }) => claimInbox(context)),
    announceClaimed: enqueueActions(({ context, enqueue }) => {
      for (const message of context.inbox.claimed) enqueue.emit({ type: "user_message", message, source: context.inbox.claimedFrom ?? "steering" });
    }),
    enqueueMessage: assign(({ context, event }) =>
      event.type === "inbox.steer" ? enqueue(context, "steering", event.message) : event.type === "inbox.followUp" ? enqueue(context, "follow_up", event.message) : {},
    ),
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
    recordResponse: assign(({ context, event }) => recordResponse(context, doneOutput<ModelResponse>(event))),
    // build_context's own failures are AgentErrors (a hook's HOOK_FAILED, a damaged transcript's INVALID_OPTIONS): anything
    // else thrown there is the engine failing (or the disk under it), not the model.
    recordContextFailure: assign(({ context, event }) => ({ outcome: { ...context.outcome, failure: failure(event, "ENGINE_FAILED"), failedIn: "build_context" as const } })),
    recordModelFailure: assign(({ context, event }) => ({ outcome: { ...context.outcome, failure: failure(event, "MODEL_ERROR"), failedIn: "call_model" as const } })),
    recordPermissionFailure: assign(({ context, event }) => ({ outcome: { ...context.outcome, failure: failure(event, "HOOK_FAILED"), failedIn: "ask_permission" as const } })),
    recordToolsFailure: assign(({ context, event }) => ({ outcome: { ...context.outcome, failure: toolsCrash((event as { error: unknown }).error), failedIn: "execute_tool" as const } })),
    recordHookFailure: assign(({ context, event }) => ({ outcome: { ...context.outcome, failure: failure(event, "HOOK_FAILED") } })),
    parseToolCalls: assign(({ context }) => parseToolCalls(context)),
    validateToolCalls: assign(({ context }) => validateToolCalls(context)),
    recoverFromErrors: assign(({ context }) => recoverFromErrors(context)),
    prepareRetry: assign(({ context }) => prepareRetry(context)),
    noteModelError: assign(({ context }) => noteModelError(context)),
    prepareOverflowCompaction: assign(({ context }) => prepareOverflowCompaction(context)),
    recordPermissions: assign(({ context, event }) => recordPermissions(context, doneOutput<PermissionStep[]>(event))),
    denyResponse: assign(({ context }) => denyResponse(context)),
    // Emitting actions bound to one event type are plain `emit`s: no enqueueActions resolved per event.
    announcePermissionRequest: emit(({ event }) => {
      const asked = eventOf(event, "permission.asked");
      return { type: "permission_request", call: asked.call, reason: asked.reason };
    }),
    recordSuspension: assign(({ context, event }) => recordSuspension(context, doneOutput<PermissionStep[]>(event))),
    announceSuspension: emit(({ context }) => ({
      type: "suspended",
      sessionId: context.run.sessionId,
      runId: context.durable.runId,
      pending: context.durable.pending ?? [],
    })),
    beginResume: assign(({ context }) => beginResume(context)),
    startExecution: assign(({ context }) => startExecution(context)),
    announceToolStart: emit(({ event }) => ({ type: "tool_start", call: eventOf(event, "tool.started").call })),
    announceToolProgress: emit(({ event }) => {
      const { call, progress, total, message } = eventOf(event, "tool.progress");
      return { type: "tool_progress", call, progress, ...(total === undefined ? {} : { total }), ...(message === undefined ? {} : { message }) };
    }),
    relaySubagentEvent: emit(({ event }) => eventOf(event, "subagent.event").event),
    /** A call's result is announced by the action that records it: one assign a finished call, not two. */
    recordToolFinished: enqueueActions(({ context, event, enqueue }) => {
      const finished = eventOf(event, "tool.finished");
      const recorded = recordToolFinished(context, finished);
      if (!recorded) return;
      enqueue.assign({ batch: recorded.batch });
      const { call, result } = recorded.record;
      if (result) enqueue.emit({ type: "tool_result", call, result });
    }),
    appendToolResults: assign(({ context }) => appendToolResults(context)),
    /**
     * Every call gets exactly one `tool_result` event, the moment its result is known. The records announced are
     * replaced by ones that say so; nothing is assigned when there is nothing to announce (most of the times it runs).
     */
    announceResults: enqueueActions(({ context, enqueue }) => {
      const marked = markAnnounced(context.batch);
      if (!marked) return;
      enqueue.assign({ batch: marked.batch });
      for (const record of marked.announced) enqueue.emit({ type: "tool_result", call: record.call, result: record.result! });
    }),
    stopWith: assign(({ context }, params: { cause: StopCause }) => stopWith(context, params.cause)),
    closeRun: assign(({ context }) => closeRun(context)),
    validateOutput: assign(({ context }) => validateOutput(context)),
    askOutputAgain: assign(({ context }) => askOutputAgain(context)),
    // Work is asked of the effects actor on entry and cancelled on exit (see effectsActor).
    requestContext: enqueueActions(({ context, enqueue }) => {
      if (preparesContext(context)) enqueue.sendTo("effects", { type: "buildContext", input: buildContextInput(context) });
    }),
    requestModelCall: sendTo("effects", ({ context }) => ({ type: "callModel" as const, input: callModelInput(context) })),
    requestPermission: sendTo("effects", ({ context }) => ({ type: "askPermission" as const, input: askPermissionInput(context) })),
    /** Asks for the batch; the calls that start the moment it is asked for are announced here, later starts are reported. */
    requestTools: enqueueActions(({ context, enqueue }) => {
      const input = runToolsInput(context);
      const starting = startingAtOnce(input.calls);
      for (let i = 0; i < starting; i++) enqueue.emit({ type: "tool_start", call: input.calls[i].call });
      enqueue.sendTo("effects", { type: "runTools", input });
    }),
    requestRecovery: enqueueActions(({ context, enqueue }) => {
      if (awaitsRecoveryDecision(context)) enqueue.sendTo("effects", { type: "decideRecovery", input: decideRecoveryInput(context) });
    }),
    /** A state left before its work ended (abort, deadline, a guard) cancels it; one left on its work's result has nothing in flight. */
    cancelWork: enqueueActions(({ context, event, enqueue }, params: { effect: EffectName }) => {
      if (isResultOf(event, params.effect)) return;
      if (params.effect === "buildContext" && !preparesContext(context)) return;
      if (params.effect === "decideRecovery" && !awaitsRecoveryDecision(context)) return;
      enqueue.sendTo("effects", { type: "cancel" });
    }),
  },
  delays: {
    runDeadline: ({ context }) => Math.max(0, context.run.deadline - Date.now()),
  },
}).createMachine({
  id: "engine",
  context: ({ input }) => initialContext(input),
  // The run's limits hold in every state: an abort or the deadline leaves whatever state is active, which stops
  // (and so aborts) the actor working there. Queued messages are accepted in every state too.
  on: {
    ABORT: { target: ".done", actions: stop("user_abort") },
    "inbox.steer": { actions: "enqueueMessage" },
    "inbox.followUp": { actions: "enqueueMessage" },
  },
  after: {
    runDeadline: { target: ".done", actions: stop("timeout") },
  },
  // The run's I/O: one long-lived actor that each working state asks for its piece of work.
  invoke: { id: "effects", src: "effects" },
  initial: "build_context",
  states: {
    build_context: {
      entry: "requestContext",
      exit: cancel("buildContext"),
      always: [
        // A resumed run goes back to where it stopped (docs/durable.md): its context was built before.
        { guard: "resumesAtQuestion", target: "ask_permission", actions: "beginResume" },
        { guard: "resumesAtModel", target: "model", actions: "beginResume" },
        { guard: "resumesAtTools", target: "execute_tool", actions: "beginResume" },
        { guard: "resumesAtResults", target: "append_tool_result", actions: "beginResume" },
        { guard: "aborted", target: "done", actions: stop("user_abort") },
        { guard: and(["contextBuilt", "tokensExhausted"]), target: "done", actions: stop("max_tokens") },
        { guard: and(["contextBuilt", not("retrying"), "turnsExhausted"]), target: "done", actions: stop("max_turns") },
        // The cheap inbox check first: needsPreparation (the context estimate among its parts) is then decided once.
        { guard: and(["inboxHasMessages", not("needsPreparation")]), target: "model", actions: ["claimInbox", "announceClaimed"] },
        { guard: not("needsPreparation"), target: "model" },
      ],
      on: {
        "buildContext.done": [
          { guard: "stopRequested", target: "done", actions: stop("final_answer") },
          { guard: and([not("retrying"), "turnsExhausted"]), target: "done", actions: ["storeBuiltContext", stop("max_turns")] },
          { target: "model", actions: ["storeBuiltContextAndClaimInbox", "announceCompaction", "announceClaimed"] },
        ],
        "buildContext.error": { target: "recover", actions: "recordContextFailure" },
      },
    },
    model: {
      entry: ["beginModelCall", "requestModelCall"],
      exit: cancel("callModel"),
      on: {
        "callModel.done": [
          { guard: "modelRequestedTools", target: "parse_tool_call", actions: "recordResponse" },
          { guard: and(["steeringQueued", not("turnsExhausted")]), target: "build_context", actions: "recordResponse" },
          { guard: and(["followUpQueued", not("turnsExhausted")]), target: "build_context", actions: "recordResponse" },
          { guard: "outputRequested", target: "validate_output", actions: "recordResponse" },
          { target: "done", actions: ["recordResponse", stop("final_answer")] },
        ],
        "callModel.error": { target: "recover", actions: "recordModelFailure" },
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
      entry: "requestPermission",
      exit: cancel("askPermission"),
      on: {
        "askPermission.done": [
          { guard: "permissionDenied", target: "done", actions: ["recordPermissions", "denyResponse", stop("permission_denied"), "announceResults"] },
          // The run stops here, in ask_permission, until resume() answers the open questions (docs/durable.md).
          { guard: "permissionSuspended", actions: ["recordPermissions", "recordSuspension", "announceSuspension"] },
          { guard: "callsAllowed", target: "execute_tool", actions: ["recordPermissions", "announceResults"] },
          { target: "append_tool_result", actions: ["recordPermissions", "announceResults"] },
        ],
        "askPermission.error": { target: "recover", actions: "recordPermissionFailure" },
        "permission.asked": { actions: "announcePermissionRequest" },
      },
    },
    execute_tool: {
      entry: ["startExecution", "requestTools"],
      exit: cancel("runTools"),
      on: {
        "runTools.done": [{ guard: "batchHasErrors", target: "recover" }, { target: "append_tool_result" }],
        "runTools.error": { target: "recover", actions: "recordToolsFailure" },
        "tool.started": { actions: "announceToolStart" },
        "tool.progress": { actions: "announceToolProgress" },
        // A tool that blocked the event loop past the deadline finishes before the late deadline timer fires: the
        // deadline still wins, and the late result is dropped like any result that arrives after the run stopped.
        "tool.finished": [{ guard: "timedOut", target: "done", actions: stop("timeout") }, { actions: "recordToolFinished" }],
        "subagent.event": { actions: "relaySubagentEvent" },
      },
    },
    append_tool_result: {
      entry: ["appendToolResults", "announceResults"],
      always: [
        { guard: and(["toolCallsExhausted", "batchHitToolLimit"]), target: "done", actions: stop("max_tool_calls") },
        { guard: "aborted", target: "done", actions: stop("user_abort") },
        { guard: "timedOut", target: "done", actions: stop("timeout") },
        { guard: "turnsExhausted", target: "done", actions: stop("max_turns") },
        { target: "build_context" },
      ],
    },
    recover: {
      entry: ["recoverFromErrors", "announceResults", "requestRecovery"],
      exit: cancel("decideRecovery"),
      always: [
        { guard: "overflowRecoverable", target: "build_context", actions: "prepareOverflowCompaction" },
        { guard: and(["runFailed", not("modelErrorHookApplies")]), target: "done", actions: stop("failure") },
        { guard: "fatalToolError", target: "done", actions: stop("tool_fatal") },
        { guard: "batchAwaitsPermission", target: "ask_permission" },
        { guard: not("runFailed"), target: "append_tool_result" },
      ],
      // Reached only for a failed model request that onModelError decides about.
      on: {
        "decideRecovery.done": [
          { guard: "retryRequested", target: "model", actions: "prepareRetry" },
          { guard: "continueRequested", target: "build_context", actions: "noteModelError" },
          { target: "done", actions: stop("failure") },
        ],
        "decideRecovery.error": { target: "done", actions: ["recordHookFailure", stop("failure")] },
      },
    },
    // The final answer checked against the run's `output` schema: a match ends the run; a mismatch goes back to the
    // model with the errors while retries and turns are left.
    validate_output: {
      entry: "validateOutput",
      always: [
        { guard: "outputValid", target: "done", actions: stop("final_answer") },
        { guard: and([not("outputRetriesSpent"), not("turnsExhausted")]), target: "build_context", actions: "askOutputAgain" },
        { target: "done", actions: stop("output_invalid") },
      ],
    },
    done: {
      type: "final",
      // Every way here set a reason; reaching done without one is a defect of the engine, said so (never a model's code).
      entry: [stop("engine_defect"), "closeRun", "announceResults"],
    },
  },
  output: ({ context }) => outputOf(context),
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
