/**
 * A model-based test generated from the engine machine itself.
 *
 * `getSimplePaths` (xstate/graph) walks the machine over synthetic events — the effects actor's done/error events with
 * scripted outputs, the machine's own events (`model.stream`, `permission.asked`, `tool.started`, `tool.progress`, `tool.finished`,
 * `subagent.event`, `inbox.steer`, `inbox.followUp`, `ABORT`) and the run-deadline timer event — and every simple path
 * it finds is replayed on a real actor whose effects actor never answers, so that only the synthetic events drive it.
 * The replay must follow the model state by state, every run that ends must leave a valid conversation, and the union
 * of the transitions the real actors took (read from `@xstate.microstep` inspection events, eventless `always` hops
 * included) must equal the machine's static edge list.
 *
 * Every context the traversal and the replays reach is frozen deeply (test/support/deep-freeze.ts) as soon as it is
 * reached, so an action that edits what a context holds, instead of replacing it, throws where it does.
 *
 * The traversal sees two facts of the environment the guards read besides context: the caller's signal (`aborted`)
 * and the clock (`timedOut`). They are modelled as two extra events, `env.signalAborted` (the signal fires, the ABORT
 * event not yet processed) and `env.deadlinePassed` (the clock passes the deadline, the timer event not yet processed).
 */
import { compileOutput } from "../../src/tools/output-schema.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { assign, createActor, fromCallback, type ActorLogic, type AnyEventObject, type SnapshotFrom } from "xstate";
import { getSimplePaths, type StatePath } from "xstate/graph";
import type { PermissionStep } from "../../src/actors/ask-permission.js";
import type { BuiltContext } from "../../src/actors/build-context.js";
import type { EffectRequest } from "../../src/actors/effects.js";
import { AgentError } from "../../src/errors/agent-error.js";
import { aborted, timedOut, tokensExhausted } from "../../src/machine/guards/index.js";
import type { AgentHooks, ModelErrorAction } from "../../src/hooks.js";
import type { CallRecord, EngineContext, EngineInput } from "../../src/machine/context.js";
import { engineMachine, engineStateOf } from "../../src/machine/engine.js";
import type { ModelResponse, RawToolCall } from "../../src/models/model.js";
import { scriptedModel } from "../../src/models/scripted.js";
import { createPermissionPolicy } from "../../src/permissions/policy.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { conversationProblems } from "../support/conversation.js";
import { ContextFreezer } from "../support/deep-freeze.js";
import { edgeKey, staticEdges } from "../support/machine-edges.js";

afterEach(() => {
  vi.restoreAllMocks();
});

// ---------------------------------------------------------------------------------------------------------------
// The machine under test: the engine with its effects actor replaced by one that never answers.

/**
 * The effects actor stand-in never answers (only the synthetic events below drive the machine); it keeps track of the
 * work in flight, so a replay can check that a state waits exactly when its work was asked for, and that no work is
 * asked for while other work is still in flight (a state left early must cancel its work).
 */
const effects = { inFlight: undefined as EffectRequest["type"] | undefined, problems: [] as string[] };
const machine = engineMachine.provide({
  actors: {
    effects: fromCallback<EffectRequest>(({ receive }) => {
      receive((request) => {
        if (request.type === "cancel") {
          if (effects.inFlight === undefined) effects.problems.push("cancel with no work in flight");
          effects.inFlight = undefined;
          return;
        }
        if (effects.inFlight !== undefined) effects.problems.push(`${request.type} asked for while ${effects.inFlight} was in flight`);
        effects.inFlight = request.type;
      });
    }),
  },
});
/** The work a resting state waits for. */
const WORK_OF: Record<string, EffectRequest["type"] | undefined> = {
  build_context: "buildContext",
  call_model: "callModel",
  stream_text: "callModel",
  ask_permission: "askPermission",
  execute_tool: "runTools",
  recover: "decideRecovery",
  done: undefined,
};
type Snapshot = SnapshotFrom<typeof machine>;

const echo = defineTool({
  name: "echo",
  description: "Echoes its text.",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
  risk: "read",
  execute: () => "never run here",
});
const writeNote = defineTool({
  name: "write_note",
  description: "Writes a note.",
  inputSchema: { type: "object", properties: { note: { type: "string" } }, required: ["note"] },
  risk: "write",
  execute: () => "never run here",
});

/**
 * Hooks a run may have. The stand-in actors never call them, but the guards read which ones exist
 * (`needsPreparation`, `modelErrorHookApplies`), and only a run with `beforeToolCall` can see blocked calls.
 */
const TURN_HOOKS: AgentHooks = { beforeToolCall: () => undefined, prepareNextTurn: () => undefined, shouldStopAfterTurn: () => false };
const MODEL_ERROR_HOOK: AgentHooks = { onModelError: () => undefined };

/** One traversal: the run's limits and settings, and which synthetic outputs are offered. */
interface Variant {
  name: string;
  maxTurns: number;
  maxToolCalls: number;
  /** What the model call may end with (keys of `modelOutputs`). */
  outputs: readonly ModelOutputName[];
  hooks?: AgentHooks;
  maxTokens?: number;
  maxRepeatedCalls?: number;
  /** Messages may be queued (one steering, one follow-up) while the run goes on. */
  inbox?: boolean;
  /** The caller's signal has fired before the run starts. */
  abortedAtStart?: boolean;
  /**
   * The run is resumed (resume()): at a question about a write_note call it suspended at, at the model call its
   * process died in, at a tool batch with an echo call still to run, or at a batch whose calls all have results.
   */
  resumed?: "ask_permission" | "model" | "execute_tool" | "append_tool_result";
  /** The run asks for its final answer as `{ done: boolean }` (query()'s `output`), with one retry. */
  output?: boolean;
}

/** A stored run's state, as resume() hands it to the machine. */
function resumedAt(at: NonNullable<Variant["resumed"]>): Pick<EngineInput, "resume" | "history"> {
  if (at === "model") {
    return {
      history: [{ role: "user", content: "go" }],
      resume: {
        at,
        turn: 0,
        toolCallCount: 0,
        usage: { input: 0, output: 0, cached: 0, reasoning: 0 },
        batch: [],
        batchState: { open: false, hitToolLimit: false, repeat: { key: "", count: 0, refused: false } },
        call: { overflowCompacted: false, modelErrorAttempts: 0 },
        answers: {},
      },
    };
  }
  const call = at === "ask_permission" ? { id: "call-w", name: "write_note", input: { note: "n" }, sessionId: "mbt" } : { id: "call-e", name: "echo", input: { text: "a" }, sessionId: "mbt" };
  const status = at === "ask_permission" ? "pending" : at === "execute_tool" ? "allowed" : "finished";
  const result = at === "append_tool_result" ? { result: { content: "INTERRUPTED: echo had started", isError: true } } : {};
  return {
    history: [
      { role: "user", content: "go" },
      { role: "assistant", content: "", toolCalls: [{ id: call.id, name: call.name, input: call.input }] },
    ],
    resume: {
      at,
      turn: 1,
      toolCallCount: 0,
      usage: { input: 3, output: 2, cached: 0, reasoning: 0 },
      batch: [{ call, raw: { name: call.name, arguments: JSON.stringify(call.input) }, status, ...result }],
      batchState: { open: true, hitToolLimit: false, repeat: { key: "", count: 0, refused: false } },
      call: { overflowCompacted: false, modelErrorAttempts: 0 },
      answers: {},
    },
  };
}

const TIMEOUT_MS = 3_600_000; // the real deadline timer never fires during a replay: only the synthetic event does

function inputOf(variant: Variant, signal: AbortSignal): EngineInput {
  return {
    sessionId: "mbt",
    userInput: "go",
    cwd: "/nonexistent-mbt",
    maxTurns: variant.maxTurns,
    maxToolCalls: variant.maxToolCalls,
    timeoutMs: TIMEOUT_MS,
    loop: {
      steeringMode: "one-at-a-time",
      followUpMode: "one-at-a-time",
      // No context window: compaction happens only when an overflow asks for it.
      contextWindow: 0,
      reserveTokens: 0,
      keepRecentTokens: 1_000,
      maxRepeatedCalls: variant.maxRepeatedCalls ?? 3,
      ...(variant.maxTokens !== undefined ? { maxTokens: variant.maxTokens } : {}),
      depth: 0,
      maxDelegationDepth: 1,
      traceFile: false,
    },
    deps: {
      model: scriptedModel([]),
      tools: new Map([
        [echo.name, echo],
        [writeNote.name, writeNote],
      ]),
      toolSpecs: [],
      permissions: {},
      hooks: variant.hooks ?? {},
      signal,
      ...(variant.output ? { output: { ...compileOutput({ type: "object", properties: { done: { type: "boolean" } }, required: ["done"] }), retries: 1 } } : {}),
    },
    ...(variant.resumed ? resumedAt(variant.resumed) : {}),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Synthetic events. Each is a recipe built from the snapshot it is sent to (tool-call ids are random per run, so every
// event is made by a factory from the snapshot's own calls).

interface LabelledEvent extends AnyEventObject {
  label: string;
}
interface Recipe {
  label: string;
  /** Whether the event is offered in this (stable) snapshot of this variant. */
  offered(state: string, s: Snapshot, variant: Variant): boolean;
  build(s: Snapshot): AnyEventObject | undefined;
}

const MODEL_STATES = ["call_model", "stream_text"];
const STABLE_STATES = ["build_context", ...MODEL_STATES, "ask_permission", "execute_tool", "recover"];
const inStates =
  (...states: string[]) =>
  (state: string) =>
    states.includes(state);

const USAGE = { input: 3, output: 2 };
const call = (name: string, input: unknown): RawToolCall => ({ name, arguments: JSON.stringify(input) });
const response = (toolCalls: RawToolCall[], finishReason = "tool_calls"): ModelResponse => ({ text: "", toolCalls, finishReason, usage: USAGE });
const modelOutputs = {
  text: () => ({ type: "callModel.done", output: { text: "All done.", toolCalls: [], finishReason: "stop", usage: USAGE } }),
  /** A final answer that matches the structured-output variant's schema (plain text to the others). */
  jsonAnswer: () => ({ type: "callModel.done", output: { text: '{"done":true}', toolCalls: [], finishReason: "stop", usage: USAGE } }),
  validCall: () => ({ type: "callModel.done", output: response([call("echo", { text: "a" })]) }),
  unknownTool: () => ({ type: "callModel.done", output: response([call("nope", {})]) }),
  invalidJson: () => ({ type: "callModel.done", output: response([{ name: "echo", arguments: "{not json" }]) }),
  invalidInput: () => ({ type: "callModel.done", output: response([call("echo", { wrong: 1 })]) }),
  truncated: () => ({ type: "callModel.done", output: response([call("echo", { text: "cut" })], "length") }),
  twoCalls: () => ({ type: "callModel.done", output: response([call("echo", { text: "1" }), call("write_note", { note: "2" })]) }),
  unknownThenValid: () => ({ type: "callModel.done", output: response([call("nope", {}), call("write_note", { note: "n" })]) }),
  modelError: () => ({ type: "callModel.error", error: new AgentError("MODEL_ERROR", "model request failed (500): upstream", { status: 500 }) }),
  contextOverflow: () => ({ type: "callModel.error", error: new AgentError("CONTEXT_OVERFLOW", "model request failed (400 context_length_exceeded)", { status: 400 }) }),
} satisfies Record<string, () => AnyEventObject>;
type ModelOutputName = keyof typeof modelOutputs;
const ALL_OUTPUTS = Object.keys(modelOutputs) as ModelOutputName[];

const pending = (s: Snapshot) => s.context.batch.filter((r) => r.status === "pending");
const allowed = (s: Snapshot) => s.context.batch.filter((r) => r.status === "allowed");

const finished = (kind: "ok" | "failing" | "fatal") => (s: Snapshot) => {
  const record = allowed(s)[0];
  if (!record) return undefined;
  const base = { type: "tool.finished", id: record.call.id, durationMs: 1 };
  if (kind === "ok") return { ...base, result: { content: "fine", isError: false } };
  if (kind === "failing") return { ...base, error: new AgentError("TOOL_FAILED", "ENOENT: no such file") };
  return { ...base, error: new AgentError("TOOL_FATAL", "disk on fire"), fatal: true };
};

const permissions = (label: string, steps: (s: Snapshot) => PermissionStep[], needsHook = false): Recipe => ({
  label,
  offered: (state, _s, variant) => state === "ask_permission" && (!needsHook || variant.hooks?.beforeToolCall !== undefined),
  build: (s) => (pending(s).length ? { type: "askPermission.done", output: steps(s) } : undefined),
});

const recovery = (action: ModelErrorAction["action"]): Recipe => ({
  label: `decideRecovery.done:${action}`,
  offered: inStates("recover"),
  build: () => ({ type: "decideRecovery.done", output: { action } }),
});

/** Messages are queued while the first model call works (the root accepts them in every state: one edge each). */
const queueing = (state: string, s: Snapshot, variant: Variant) => variant.inbox === true && state === "call_model" && s.context.turn === 1;

const RECIPES: readonly Recipe[] = [
  {
    label: "buildContext.done:first",
    offered: (state, s) => state === "build_context" && !s.context.call.contextBuilt,
    build: () => ({
      type: "buildContext.done",
      output: { messages: [{ role: "user", content: "go" }], policy: createPermissionPolicy({}) } satisfies BuiltContext,
    }),
  },
  {
    label: "buildContext.done:next",
    offered: (state, s) => state === "build_context" && s.context.call.contextBuilt,
    build: () => ({ type: "buildContext.done", output: {} satisfies BuiltContext }),
  },
  {
    // shouldStopAfterTurn said stop
    label: "buildContext.done:stop",
    offered: (state, s, variant) => state === "build_context" && s.context.call.contextBuilt && variant.hooks?.shouldStopAfterTurn !== undefined,
    build: () => ({ type: "buildContext.done", output: { stop: true } satisfies BuiltContext }),
  },
  { label: "buildContext.error", offered: inStates("build_context"), build: () => ({ type: "buildContext.error", error: new Error("transcript unreadable") }) },
  { label: "model.text_delta", offered: inStates(...MODEL_STATES), build: () => ({ type: "model.stream", event: { type: "text_delta", text: "Hi " } }) },
  { label: "model.thinking_delta", offered: inStates(...MODEL_STATES), build: () => ({ type: "model.stream", event: { type: "thinking_delta", text: "hmm" } }) },
  ...ALL_OUTPUTS.map(
    (name): Recipe => ({
      label: `callModel:${name}`,
      offered: (state, _s, variant) => MODEL_STATES.includes(state) && variant.outputs.includes(name),
      build: modelOutputs[name],
    }),
  ),
  {
    label: "permission.asked",
    offered: inStates("ask_permission"),
    build: (s) => {
      const record = pending(s)[0];
      return record && { type: "permission.asked", call: record.call, reason: "write_note is a write tool" };
    },
  },
  permissions("askPermission.done:allow", (s) =>
    pending(s).map((r) => ({ toolCallId: r.call.id, kind: "decided", decision: { toolCallId: r.call.id, decision: "allow", by: "human", input: r.call.input } })),
  ),
  permissions("askPermission.done:deny", (s) => {
    const r = pending(s)[0];
    return [{ toolCallId: r.call.id, kind: "decided", decision: { toolCallId: r.call.id, decision: "deny", by: "human", input: r.call.input, reason: "denied when asked" } }];
  }),
  // onAsk (or whenUnanswered) suspended the questions: the run rests in ask_permission with nothing in flight
  permissions("askPermission.done:suspend", (s) => pending(s).map((r) => ({ toolCallId: r.call.id, kind: "suspended", reason: "write_note is a write tool", input: r.call.input }))),
  // beforeToolCall blocked every call, or broke on it: nothing is allowed and nothing denied
  permissions("askPermission.done:blocked", (s) => pending(s).map((r) => ({ toolCallId: r.call.id, kind: "blocked", reason: "not today" })), true),
  permissions(
    "askPermission.done:hookFailed",
    (s) => pending(s).map((r) => ({ toolCallId: r.call.id, kind: "failed", error: new AgentError("HOOK_FAILED", "hook beforeToolCall failed: boom") })),
    true,
  ),
  { label: "askPermission.error", offered: inStates("ask_permission"), build: () => ({ type: "askPermission.error", error: new AgentError("HOOK_FAILED", "onAsk threw") }) },
  {
    label: "tool.started",
    offered: inStates("execute_tool"),
    build: (s) => {
      const record = allowed(s)[0];
      return record && { type: "tool.started", call: record.call };
    },
  },
  {
    label: "tool.progress",
    offered: inStates("execute_tool"),
    build: (s) => {
      const record = allowed(s)[0];
      return record && { type: "tool.progress", call: record.call, progress: 1, total: 2 };
    },
  },
  { label: "tool.finished:ok", offered: inStates("execute_tool"), build: finished("ok") },
  { label: "tool.finished:failing", offered: inStates("execute_tool"), build: finished("failing") },
  { label: "tool.finished:fatal", offered: inStates("execute_tool"), build: finished("fatal") },
  {
    label: "subagent.event",
    offered: inStates("execute_tool"),
    build: () => ({
      type: "subagent.event",
      event: { type: "subagent_event", sessionId: "child", parentSession: "mbt", depth: 1, event: { type: "text_delta", text: "child says hi" } },
    }),
  },
  { label: "runTools.done", offered: inStates("execute_tool"), build: () => ({ type: "runTools.done", output: undefined }) },
  { label: "runTools.error", offered: inStates("execute_tool"), build: () => ({ type: "runTools.error", error: new Error("runner crashed") }) },
  recovery("retry"),
  recovery("continue"),
  recovery("abort"),
  { label: "decideRecovery.error", offered: inStates("recover"), build: () => ({ type: "decideRecovery.error", error: new AgentError("HOOK_FAILED", "hook onModelError failed: boom") }) },
  {
    label: "inbox.steer",
    offered: (state, s, variant) => queueing(state, s, variant) && s.context.inbox.steering.length === 0,
    build: () => ({ type: "inbox.steer", message: { role: "user", content: "also check the tests" } }),
  },
  {
    label: "inbox.followUp",
    offered: (state, s, variant) => queueing(state, s, variant) && s.context.inbox.followUp.length === 0,
    build: () => ({ type: "inbox.followUp", message: { role: "user", content: "then write a summary" } }),
  },
  { label: "ABORT", offered: () => true, build: () => ({ type: "ABORT" }) },
  { label: "deadline", offered: () => true, build: () => ({ type: "xstate.after.runDeadline.engine" }) },
];

/**
 * Environment events: offered once per run, when the last tool of a response has finished (the guards that read them
 * come right after, in append_tool_result). The clock may also pass the deadline while a tool still runs: a tool that
 * blocks the event loop finishes before the late timer event is processed.
 */
const envOffered = (s: Snapshot): string[] => {
  if (engineStateOf(s.value) !== "execute_tool" || aborted(s.context) || timedOut(s.context)) return [];
  return allowed(s).length === 0 ? ["env.signalAborted", "env.deadlinePassed"] : ["env.deadlinePassed"];
};

function eventsFor(variant: Variant, snapshot: Snapshot): LabelledEvent[] {
  // A suspended run's actor is stopped and stored: nothing more happens to it (resume() starts a new one).
  if (snapshot.status !== "active" || snapshot.context.durable.pending) return [];
  const state = engineStateOf(snapshot.value);
  if (!STABLE_STATES.includes(state)) throw new Error(`the machine rests in ${state}, which is not a stable state of this model`);
  const events: LabelledEvent[] = [];
  for (const recipe of RECIPES) {
    if (!recipe.offered(state, snapshot, variant)) continue;
    const event = recipe.build(snapshot);
    if (event) events.push({ ...event, label: recipe.label });
  }
  for (const label of envOffered(snapshot)) events.push({ type: label, label });
  return events;
}

// ---------------------------------------------------------------------------------------------------------------
// The abstraction the traversal works on: what the guards can see, not ids or texts.

function recordSummary(r: CallRecord): string {
  return [r.status, r.error?.code ?? "", r.result ? (r.result.isError ? "error_result" : "ok_result") : "", r.fatal ? "fatal" : ""].join(":");
}

function abstractState(s: Snapshot): string {
  const c = s.context;
  return JSON.stringify({
    state: engineStateOf(s.value),
    status: s.status,
    turn: c.turn,
    toolCalls: c.toolCallCount,
    // A closed batch is history: the next response replaces it before any guard reads it.
    batch: c.batchState.open ? c.batch.map(recordSummary) : [],
    batchOpen: c.batchState.open,
    hitLimit: c.batchState.hitToolLimit,
    failure: c.outcome.failure ? `${c.outcome.failure.code} in ${c.outcome.failedIn}` : "",
    retrying: c.call.retrying,
    // onModelError is told the attempt: a first failure, or a request that failed again after a retry
    retried: c.call.modelErrorAttempts > 0,
    contextBuilt: c.call.contextBuilt,
    compactNow: c.call.compactNow !== undefined,
    overflowCompacted: c.call.overflowCompacted,
    tokensExhausted: tokensExhausted(c),
    // what the last answer was: follow-ups are taken only after an answer without tool calls
    response: c.call.response ? (c.call.response.toolCalls.length ? "tools" : "text") : "",
    inbox: [c.inbox.steering.length, c.inbox.followUp.length],
    repeat: `${c.batchState.repeat.key}×${c.batchState.repeat.count}${c.batchState.repeat.refused ? " refused" : ""}`,
    stop: c.outcome.stopReason ?? "",
    suspended: c.durable.pending !== undefined,
    resuming: c.durable.resumeAt ?? "",
    aborted: aborted(c),
    late: timedOut(c.run),
  });
}

function withContext(s: Snapshot, patch: Partial<EngineContext>): Snapshot {
  return { ...s, context: { ...s.context, ...patch } } as Snapshot;
}

/** Abstract states are read many times per snapshot while paths are enumerated. */
const abstractCache = new WeakMap<Snapshot, string>();
function abstractOf(s: Snapshot): string {
  let known = abstractCache.get(s);
  if (known === undefined) abstractCache.set(s, (known = abstractState(s)));
  return known;
}

/**
 * Snapshots reached by an event that changed nothing the model sees (a text delta while streaming, a permission
 * question announced, a tool start or progress, a subagent's event relayed): the event's edge is taken, and the path ends there,
 * since its continuation would repeat the one without the event. (Simple paths never take such self-loops otherwise.)
 */
const echoes = new WeakMap<Snapshot, string>();

/**
 * The machine as the traversal sees it: the traversal branches from one snapshot many times, which needs no copies
 * (the context is a value: the machine's actions replace what they change), and the two environment events change
 * what the signal and clock guards read.
 */
const traversal = { freezer: new ContextFreezer() };
const traversalLogic: ActorLogic<Snapshot, LabelledEvent, EngineInput> = {
  config: machine.config,
  transition(snapshot, event, scope) {
    traversal.freezer.freeze(snapshot.context);
    if (event.type === "env.signalAborted") {
      return withContext(snapshot, { deps: { ...snapshot.context.deps, signal: AbortSignal.abort() } });
    }
    if (event.type === "env.deadlinePassed") return withContext(snapshot, { run: { ...snapshot.context.run, deadline: Number.NEGATIVE_INFINITY } });
    const next = machine.transition(snapshot, event as never, scope as never);
    traversal.freezer.freeze(next.context);
    if (abstractOf(next) !== abstractOf(snapshot)) return next;
    const echoed = { ...next } as Snapshot;
    echoes.set(echoed, event.label);
    return echoed;
  },
  getInitialSnapshot: (scope, input) => machine.getInitialSnapshot(scope as never, input),
  getPersistedSnapshot: (snapshot) => snapshot,
};

function generatePaths(variant: Variant): Array<StatePath<Snapshot, LabelledEvent>> {
  traversal.freezer = new ContextFreezer();
  const paths = getSimplePaths(traversalLogic, {
    input: inputOf(variant, variant.abortedAtStart ? AbortSignal.abort() : new AbortController().signal),
    events: (s) => (echoes.has(s) ? [] : eventsFor(variant, s)),
    serializeState: (s) => (echoes.has(s) ? `${abstractOf(s)} after ${echoes.get(s)}` : abstractOf(s)),
    serializeEvent: (e) => e.label,
  });
  const changed = traversal.freezer.conversationsChanged();
  if (changed.length) throw new Error(`${variant.name}: conversations changed while the traversal branched: ${changed.join("; ")}`);
  return paths;
}

/**
 * The paths that are no prefix of another. Simple paths are prefix-closed (a prefix of a simple path is the simple
 * path to its last state), so replaying these, checking the state after every step, replays every generated path.
 */
function maximalPaths(paths: Array<StatePath<Snapshot, LabelledEvent>>): Array<StatePath<Snapshot, LabelledEvent>> {
  const key = (p: StatePath<Snapshot, LabelledEvent>, length: number) => p.steps.slice(1, length).map((s) => s.event.label).join(" ");
  const prefixes = new Set<string>();
  for (const p of paths) for (let n = 1; n < p.steps.length; n++) prefixes.add(key(p, n));
  return paths.filter((p) => !prefixes.has(key(p, p.steps.length)));
}

// ---------------------------------------------------------------------------------------------------------------
// Replay on a real actor.

interface Replayed {
  paths: number;
  taken: Set<string>;
  /** The reasons of the runs that reached done. */
  reasons: Set<string>;
}

function describePath(path: StatePath<Snapshot, LabelledEvent>): string {
  return path.steps.map((s) => s.event.label ?? s.event.type).join(" → ");
}

function replay(variant: Variant, path: StatePath<Snapshot, LabelledEvent>, taken: Set<string>, reasons: Set<string>): void {
  const controller = new AbortController();
  if (variant.abortedAtStart) controller.abort();
  // Each context the actor reaches is frozen at once: a later action that edits it in place throws, failing the actor.
  const freezer = new ContextFreezer();
  const actor = createActor(machine, {
    input: inputOf(variant, controller.signal),
    inspect: (inspection) => {
      if (inspection.type === "@xstate.microstep") for (const t of inspection._transitions) taken.add(edgeKey(t));
      if (inspection.type === "@xstate.microstep" || inspection.type === "@xstate.snapshot") {
        const context = (inspection.snapshot as { context?: EngineContext }).context;
        if (context) freezer.freeze(context);
      }
    },
  });
  const fail = (message: string) => new Error(`${variant.name}: ${message}\n  path: ${describePath(path)}`);
  effects.inFlight = undefined;
  effects.problems = [];
  const warn = vi.spyOn(console, "warn");
  const alive = () => {
    const snapshot = actor.getSnapshot();
    if (snapshot.status === "error") throw fail(`the actor failed: ${String((snapshot.error as Error)?.stack ?? snapshot.error)}`);
    if (effects.problems.length) throw fail(effects.problems.join("; "));
    if (warn.mock.calls.length) throw fail(`XState warned: ${warn.mock.calls.map((c) => String(c[0])).join("; ")}`);
    const state = engineStateOf(snapshot.value);
    const work = snapshot.context.durable.pending ? undefined : WORK_OF[state];
    if (snapshot.status === "active" && effects.inFlight !== work) {
      throw fail(`resting in ${state} with ${effects.inFlight ?? "no work"} in flight, expected ${work ?? "none"}`);
    }
  };
  try {
    actor.start();
    alive();
    const [first, ...rest] = path.steps;
    if (abstractState(actor.getSnapshot()) !== abstractOf(first.state)) {
      throw fail(`initial state ${abstractState(actor.getSnapshot())}, model says ${abstractOf(first.state)}`);
    }
    for (const step of rest) {
      const label = step.event.label;
      const snapshot = actor.getSnapshot();
      if (label === "env.signalAborted") controller.abort();
      else if (label === "env.deadlinePassed") vi.spyOn(Date, "now").mockReturnValue(snapshot.context.run.deadline);
      else {
        const recipe = RECIPES.find((r) => r.label === label);
        const event = recipe?.build(snapshot);
        if (!event) throw fail(`event ${label} cannot be built in ${abstractState(snapshot)}`);
        // A result event is the work in flight ending.
        if (/\.(done|error)$/.test(event.type)) effects.inFlight = undefined;
        actor.send(event as never);
      }
      alive();
      const got = abstractState(actor.getSnapshot());
      const want = abstractOf(step.state);
      if (got !== want) throw fail(`after ${label} the actor is in ${got}, the model says ${want}`);
      const context = actor.getSnapshot().context;
      if (context.turn > context.run.maxTurns) throw fail(`turn ${context.turn} exceeds maxTurns ${context.run.maxTurns}`);
    }
    const end = actor.getSnapshot();
    if (end.status === "done") {
      const output = end.output!;
      if (output.reason !== end.context.outcome.stopReason) throw fail(`output reason ${output.reason} differs from context ${end.context.outcome.stopReason}`);
      if (output.reason !== "final_answer" && !output.error) throw fail(`reason ${output.reason} without an error`);
      reasons.add(output.reason);
      const unanswered = end.context.batch.filter((r) => !r.result);
      if (unanswered.length) throw fail(`done with calls that have no result: ${unanswered.map(recordSummary).join(", ")}`);
      const problems = conversationProblems(end.context.messages.toArray());
      if (problems.length) throw fail(`the conversation is invalid at done:\n    ${problems.join("\n    ")}`);
    }
    const changed = freezer.conversationsChanged();
    if (changed.length) throw fail(`conversations changed after they were made: ${changed.join("; ")}`);
  } finally {
    actor.stop();
    vi.restoreAllMocks();
  }
}

const VARIANTS: readonly Variant[] = [
  // (A context overflow repeats the whole model call after compaction: it has its own variant, below.)
  { name: "one model call, every model output", maxTurns: 1, maxToolCalls: 1, outputs: ALL_OUTPUTS.filter((o) => o !== "contextOverflow" && o !== "jsonAnswer") },
  // `output`: the answer goes through validate_output; a mismatch is asked again once (outputRetries 1), then ends.
  { name: "structured output", maxTurns: 3, maxToolCalls: 1, outputs: ["text", "jsonAnswer"], output: true },
  // A second turn: the loop back through build_context (no work there without turn hooks), a budget spent by the
  // first turn.
  { name: "two model calls", maxTurns: 2, maxToolCalls: 1, outputs: ["text", "validCall"] },
  // Two calls of one response both allowed: the only way a call can still await execution when recover runs.
  { name: "two tool calls may run", maxTurns: 1, maxToolCalls: 2, outputs: ["twoCalls"] },
  // Turn hooks make build_context work before every model call (shouldStopAfterTurn may stop the run there);
  // beforeToolCall may block calls.
  { name: "turn hooks", maxTurns: 2, maxToolCalls: 1, outputs: ["validCall", "modelError"], hooks: TURN_HOOKS },
  // onModelError decides about a failed request: retry it, continue with a note, or stop; a context overflow is
  // compacted and retried once first.
  { name: "onModelError", maxTurns: 1, maxToolCalls: 1, outputs: ["text", "modelError", "contextOverflow"], hooks: MODEL_ERROR_HOOK },
  { name: "maxTokens", maxTurns: 2, maxToolCalls: 1, outputs: ["validCall"], maxTokens: USAGE.input + USAGE.output },
  { name: "queued messages", maxTurns: 2, maxToolCalls: 1, outputs: ["text"], inbox: true },
  { name: "repeated calls", maxTurns: 3, maxToolCalls: 3, outputs: ["validCall"], maxRepeatedCalls: 1 },
  // query() requires maxTurns ≥ 1; the machine itself accepts 0, and its build_context guards it.
  { name: "maxTurns 0 (machine input only)", maxTurns: 0, maxToolCalls: 1, outputs: ["text"] },
  { name: "signal aborted before the start", maxTurns: 2, maxToolCalls: 1, outputs: ["text"], abortedAtStart: true },
  // resume(): the machine goes straight back to the question it suspended at, and on from there.
  { name: "resumed at a suspended question", maxTurns: 2, maxToolCalls: 1, outputs: ["text", "validCall"], resumed: "ask_permission" },
  // A run whose process died: the model call in flight is made again; a batch goes on with the calls left to run, or
  // straight to its results when every call has one (finished, or INTERRUPTED).
  { name: "recovered at a model call", maxTurns: 1, maxToolCalls: 1, outputs: ["text", "validCall"], resumed: "model" },
  { name: "recovered in a tool batch", maxTurns: 2, maxToolCalls: 1, outputs: ["text"], resumed: "execute_tool" },
  { name: "recovered with every result known", maxTurns: 2, maxToolCalls: 1, outputs: ["text"], resumed: "append_tool_result" },
];

const replayed = new Map<string, Replayed>();
function replayVariant(variant: Variant): Replayed {
  const known = replayed.get(variant.name);
  if (known) return known;
  const paths = generatePaths(variant);
  const result: Replayed = { paths: paths.length, taken: new Set(), reasons: new Set() };
  for (const path of maximalPaths(paths)) replay(variant, path, result.taken, result.reasons);
  replayed.set(variant.name, result);
  return result;
}

describe("model-based: every simple path of the engine machine, replayed on a real actor", () => {
  for (const variant of VARIANTS) {
    it(`${variant.name}: every path replays, following the model state by state`, () => {
      const { paths, reasons } = replayVariant(variant);
      expect(paths).toBeGreaterThan(0);
      expect(reasons.size, "some paths end in done").toBeGreaterThan(0);
      if (variant.abortedAtStart) expect([...reasons]).toEqual(["user_abort"]);
    }, 60_000);
  }

  it("one model call reaches every stop reason", () => {
    const { reasons } = replayVariant(VARIANTS[0]);
    expect([...reasons].sort()).toEqual(["final_answer", "max_tool_calls", "max_turns", "model_error", "permission_denied", "timeout", "tool_error", "user_abort"]);
  }, 60_000);

  it("the frozen context catches an action that edits what the context holds", () => {
    // The same run through the machine as it is and with one action changed back to what it once was: editing the
    // finished call's record in place. (A context is frozen as each microstep ends, which is when anyone can see it:
    // an object an action made in the same microstep is not frozen yet.)
    const run = (m: typeof machine) => {
      const freezer = new ContextFreezer();
      const actor = createActor(m, {
        input: inputOf(VARIANTS[0], new AbortController().signal),
        inspect: (inspection) => {
          const context = (inspection.snapshot as { context?: EngineContext } | undefined)?.context;
          if (context && (inspection.type === "@xstate.microstep" || inspection.type === "@xstate.snapshot")) freezer.freeze(context);
        },
      });
      const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
      actor.subscribe({ error: () => undefined });
      actor.start();
      for (const label of ["buildContext.done:first", "callModel:validCall", "askPermission.done:allow", "tool.finished:ok"]) {
        const event = RECIPES.find((r) => r.label === label)!.build(actor.getSnapshot());
        effects.inFlight = undefined;
        actor.send(event as never);
      }
      const snapshot = actor.getSnapshot();
      actor.stop();
      errors.mockRestore();
      return snapshot;
    };
    const kept = run(machine);
    expect(kept.status).toBe("active");
    expect(kept.context.batch[0].result).toEqual({ content: "fine", isError: false });
    const editing = machine.provide({
      actions: {
        recordToolFinished: assign(({ context }) => {
          (context.batch[0] as { status: string }).status = "finished";
          return {};
        }),
      },
    });
    const failed = run(editing);
    expect(failed.status).toBe("error");
    expect(String(failed.error)).toMatch(/read only|read-only|frozen|Cannot assign/i);
  });

  it("the union of the transitions taken equals the machine's static edge list, always edges included", () => {
    const expected = staticEdges(engineMachine);
    expect(new Set(expected).size).toBe(expected.length);
    expect(expected.filter((e) => e.includes("--always["))).not.toHaveLength(0);
    const taken = new Set<string>();
    for (const variant of VARIANTS) for (const edge of replayVariant(variant).taken) taken.add(edge);
    const missing = expected.filter((e) => !taken.has(e));
    const unknown = [...taken].filter((e) => !expected.includes(e));
    expect({ missing, unknown }, `edges never taken:\n${missing.join("\n")}\ntransitions outside the static list:\n${unknown.join("\n")}`).toEqual({
      missing: [],
      unknown: [],
    });
    expect([...taken].sort()).toEqual([...expected].sort());
  }, 120_000);
});
