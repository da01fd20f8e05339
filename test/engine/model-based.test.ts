/**
 * A model-based test generated from the engine machine itself.
 *
 * `getSimplePaths` (xstate/graph) walks the machine over synthetic events — the invoked actors' done/error events with
 * scripted outputs, the machine's own events (`model.stream`, `permission.asked`, `tool.started`, `tool.finished`,
 * `ABORT`) and the run-deadline timer event — and every simple path it finds is replayed on a real actor whose invoked
 * actors never settle, so that only the synthetic events drive it. The replay must follow the model state by state,
 * and the union of the transitions the real actors took (read from `@xstate.microstep` inspection events, eventless
 * `always` hops included) must equal the machine's static edge list.
 *
 * The traversal sees two facts of the environment the guards read besides context: the caller's signal (`aborted`)
 * and the clock (`timedOut`). They are modelled as two extra events, `env.signalAborted` (the signal fires, the ABORT
 * event not yet processed) and `env.deadlinePassed` (the clock passes the deadline, the timer event not yet processed).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createActor, fromPromise, type ActorLogic, type AnyEventObject, type SnapshotFrom } from "xstate";
import { getSimplePaths, type StatePath } from "xstate/graph";
import type { AskPermissionInput, PermissionDecision } from "../../src/actors/ask-permission.js";
import type { BuildContextInput, BuiltContext } from "../../src/actors/build-context.js";
import type { CallModelInput } from "../../src/actors/call-model.js";
import type { RunToolsInput } from "../../src/actors/run-tools.js";
import { AgentError } from "../../src/errors/agent-error.js";
import { aborted, timedOut } from "../../src/guards/index.js";
import type { CallRecord, EngineContext, EngineInput } from "../../src/machine/context.js";
import { engineMachine, engineStateOf } from "../../src/machine/engine.js";
import type { ModelResponse, RawToolCall } from "../../src/models/model.js";
import { scriptedModel } from "../../src/models/scripted.js";
import { createPermissionPolicy } from "../../src/permissions/policy.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { conversationProblems } from "../support/conversation.js";
import { edgeKey, staticEdges } from "../support/machine-edges.js";

afterEach(() => {
  vi.restoreAllMocks();
});

// ---------------------------------------------------------------------------------------------------------------
// The machine under test: the engine with its invoked actors replaced by stand-ins that never settle.

const never = <Output, Input>() => fromPromise<Output, Input>(() => new Promise<Output>(() => {}));
const machine = engineMachine.provide({
  actors: {
    buildContext: never<BuiltContext, BuildContextInput>(),
    callModel: never<ModelResponse, CallModelInput>(),
    askPermission: never<PermissionDecision[], AskPermissionInput>(),
    runTools: never<void, RunToolsInput>(),
  },
});
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

/** A run's limits; the traversal stays finite because turns and tool calls are few. */
interface Variant {
  name: string;
  maxTurns: number;
  maxToolCalls: number;
  /** The model outputs offered (keys of `modelOutputs`). */
  outputs: readonly ModelOutputName[];
  /** The caller's signal has fired before the run starts. */
  abortedAtStart?: boolean;
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
    deps: {
      model: scriptedModel([]),
      tools: new Map([
        [echo.name, echo],
        [writeNote.name, writeNote],
      ]),
      toolSpecs: [],
      permissions: {},
      signal,
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Synthetic events. Each is a recipe built from the snapshot it is sent to (tool-call ids are random per run, and
// the machine's actions update the batch's records in place, so every event gets fresh objects from a factory).

interface LabelledEvent extends AnyEventObject {
  label: string;
}
interface Recipe {
  label: string;
  /** The stable states where the event is offered. */
  in: readonly string[];
  build(snapshot: Snapshot): AnyEventObject | undefined;
}

const MODEL_STATES = ["call_model", "stream_text"];
const STABLE_STATES = ["build_context", ...MODEL_STATES, "ask_permission", "execute_tool"];

const call = (name: string, input: unknown): RawToolCall => ({ name, arguments: JSON.stringify(input) });
const modelOutputs = {
  text: () => ({ text: "All done.", toolCalls: [], finishReason: "stop", usage: { input: 3, output: 2 } }),
  validCall: () => ({ text: "", toolCalls: [call("echo", { text: "a" })], finishReason: "tool_calls" }),
  unknownTool: () => ({ text: "", toolCalls: [call("nope", {})], finishReason: "tool_calls" }),
  invalidJson: () => ({ text: "", toolCalls: [{ name: "echo", arguments: "{not json" }], finishReason: "tool_calls" }),
  invalidInput: () => ({ text: "", toolCalls: [call("echo", { wrong: 1 })], finishReason: "tool_calls" }),
  truncated: () => ({ text: "", toolCalls: [call("echo", { text: "cut" })], finishReason: "length" }),
  twoCalls: () => ({ text: "", toolCalls: [call("echo", { text: "1" }), call("write_note", { note: "2" })], finishReason: "tool_calls" }),
  unknownThenValid: () => ({ text: "", toolCalls: [call("nope", {}), call("write_note", { note: "n" })], finishReason: "tool_calls" }),
} satisfies Record<string, () => ModelResponse>;
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

const RECIPES: readonly Recipe[] = [
  {
    label: "buildContext.done",
    in: ["build_context"],
    build: () => ({
      type: "xstate.done.actor.buildContext",
      output: { messages: [{ role: "user", content: "go" }], policy: createPermissionPolicy({}) } satisfies BuiltContext,
    }),
  },
  { label: "buildContext.error", in: ["build_context"], build: () => ({ type: "xstate.error.actor.buildContext", error: new Error("transcript unreadable") }) },
  { label: "model.text_delta", in: MODEL_STATES, build: () => ({ type: "model.stream", event: { type: "text_delta", text: "Hi " } }) },
  { label: "model.thinking_delta", in: MODEL_STATES, build: () => ({ type: "model.stream", event: { type: "thinking_delta", text: "hmm" } }) },
  ...ALL_OUTPUTS.map((name): Recipe => ({
    label: `callModel.done:${name}`,
    in: MODEL_STATES,
    build: () => ({ type: "xstate.done.actor.callModel", output: modelOutputs[name]() }),
  })),
  {
    label: "callModel.error",
    in: MODEL_STATES,
    build: () => ({ type: "xstate.error.actor.callModel", error: new AgentError("MODEL_ERROR", "model request failed (500): upstream", { status: 500 }) }),
  },
  {
    label: "permission.asked",
    in: ["ask_permission"],
    build: (s) => {
      const record = pending(s)[0];
      return record && { type: "permission.asked", call: record.call, reason: "write_note is a write tool" };
    },
  },
  {
    label: "askPermission.done:allow",
    in: ["ask_permission"],
    build: (s) => ({
      type: "xstate.done.actor.askPermission",
      output: pending(s).map((r): PermissionDecision => ({ toolCallId: r.call.id, decision: "allow", by: "human", input: r.call.input })),
    }),
  },
  {
    label: "askPermission.done:deny",
    in: ["ask_permission"],
    build: (s) => {
      const record = pending(s)[0];
      return (
        record && {
          type: "xstate.done.actor.askPermission",
          output: [{ toolCallId: record.call.id, decision: "deny", by: "human", input: record.call.input, reason: "denied when asked" }] satisfies PermissionDecision[],
        }
      );
    },
  },
  { label: "askPermission.error", in: ["ask_permission"], build: () => ({ type: "xstate.error.actor.askPermission", error: new AgentError("HOOK_FAILED", "onAsk threw") }) },
  {
    label: "tool.started",
    in: ["execute_tool"],
    build: (s) => {
      const record = allowed(s)[0];
      return record && { type: "tool.started", call: record.call };
    },
  },
  { label: "tool.finished:ok", in: ["execute_tool"], build: finished("ok") },
  { label: "tool.finished:failing", in: ["execute_tool"], build: finished("failing") },
  { label: "tool.finished:fatal", in: ["execute_tool"], build: finished("fatal") },
  { label: "runTools.done", in: ["execute_tool"], build: () => ({ type: "xstate.done.actor.runTools", output: undefined }) },
  { label: "runTools.error", in: ["execute_tool"], build: () => ({ type: "xstate.error.actor.runTools", error: new Error("runner crashed") }) },
  { label: "ABORT", in: STABLE_STATES, build: () => ({ type: "ABORT" }) },
  { label: "deadline", in: STABLE_STATES, build: () => ({ type: "xstate.after.runDeadline.engine" }) },
];

/** Environment events: offered once per run, while tools run (the guards that read them sit right after). */
const ENV_LABELS = ["env.signalAborted", "env.deadlinePassed"] as const;
const envOffered = (s: Snapshot) => engineStateOf(s.value) === "execute_tool" && !aborted(s.context) && !timedOut(s.context);

function eventsFor(variant: Variant, snapshot: Snapshot): LabelledEvent[] {
  if (snapshot.status !== "active") return [];
  const state = engineStateOf(snapshot.value);
  const offered = new Set(variant.outputs.map((name) => `callModel.done:${name}`));
  const events: LabelledEvent[] = [];
  for (const recipe of RECIPES) {
    if (!recipe.in.includes(state)) continue;
    if (recipe.label.startsWith("callModel.done:") && !offered.has(recipe.label)) continue;
    const event = recipe.build(snapshot);
    if (event) events.push({ ...event, label: recipe.label });
  }
  if (envOffered(snapshot)) for (const label of ENV_LABELS) events.push({ type: label, label });
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
    batch: c.batchOpen ? c.batch.map(recordSummary) : [],
    batchOpen: c.batchOpen,
    hitLimit: c.batchHitToolLimit,
    failure: c.failure?.code ?? "",
    stop: c.stopReason ?? "",
    aborted: aborted(c),
    late: timedOut(c),
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
 * question announced, a tool start): the event's edge is taken, and the path ends there, since its continuation
 * would repeat the one without the event.
 */
const echoes = new WeakMap<Snapshot, string>();

/**
 * The machine as the traversal sees it: every transition starts from copies of the batch records and the message
 * list (the machine's actions update those in place, and the traversal branches from one snapshot many times), and
 * the two environment events change what the signal and clock guards read.
 */
const traversalLogic: ActorLogic<Snapshot, LabelledEvent, EngineInput> = {
  config: machine.config,
  transition(snapshot, event, scope) {
    if (event.type === "env.signalAborted") {
      return withContext(snapshot, { deps: { ...snapshot.context.deps, signal: AbortSignal.abort() } });
    }
    if (event.type === "env.deadlinePassed") return withContext(snapshot, { deadline: Number.NEGATIVE_INFINITY });
    const fresh = withContext(snapshot, { batch: snapshot.context.batch.map((r) => ({ ...r })), messages: [...snapshot.context.messages] });
    const next = machine.transition(fresh, event as never, scope as never);
    if (abstractOf(next) !== abstractOf(snapshot)) return next;
    const echoed = { ...next } as Snapshot;
    echoes.set(echoed, event.label);
    return echoed;
  },
  getInitialSnapshot: (scope, input) => machine.getInitialSnapshot(scope as never, input),
  getPersistedSnapshot: (snapshot) => snapshot,
};

function generatePaths(variant: Variant): Array<StatePath<Snapshot, LabelledEvent>> {
  return getSimplePaths(traversalLogic, {
    input: inputOf(variant, variant.abortedAtStart ? AbortSignal.abort() : new AbortController().signal),
    events: (s) => (echoes.has(s) ? [] : eventsFor(variant, s)),
    serializeState: (s) => (echoes.has(s) ? `${abstractOf(s)} after ${echoes.get(s)}` : abstractOf(s)),
    serializeEvent: (e) => e.label,
  });
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
  const actor = createActor(machine, {
    input: inputOf(variant, controller.signal),
    inspect: (inspection) => {
      if (inspection.type === "@xstate.microstep") for (const t of inspection._transitions) taken.add(edgeKey(t));
    },
  });
  const fail = (message: string) => new Error(`${variant.name}: ${message}\n  path: ${describePath(path)}`);
  const alive = () => {
    const snapshot = actor.getSnapshot();
    if (snapshot.status === "error") throw fail(`the actor failed: ${String((snapshot.error as Error)?.stack ?? snapshot.error)}`);
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
      else if (label === "env.deadlinePassed") vi.spyOn(Date, "now").mockReturnValue(snapshot.context.deadline);
      else {
        const recipe = RECIPES.find((r) => r.label === label);
        const event = recipe?.build(snapshot);
        if (!event) throw fail(`event ${label} cannot be built in ${abstractState(snapshot)}`);
        actor.send(event as never);
      }
      alive();
      const got = abstractState(actor.getSnapshot());
      const want = abstractOf(step.state);
      if (got !== want) throw fail(`after ${label} the actor is in ${got}, the model says ${want}`);
      const context = actor.getSnapshot().context;
      if (context.turn > context.maxTurns) throw fail(`turn ${context.turn} exceeds maxTurns ${context.maxTurns}`);
    }
    const end = actor.getSnapshot();
    if (end.status === "done") {
      const output = end.output!;
      if (output.reason !== end.context.stopReason) throw fail(`output reason ${output.reason} differs from context ${end.context.stopReason}`);
      if (output.reason !== "final_answer" && !output.error) throw fail(`reason ${output.reason} without an error`);
      reasons.add(output.reason);
      const unanswered = end.context.batch.filter((r) => !r.result);
      if (unanswered.length) throw fail(`done with calls that have no result: ${unanswered.map(recordSummary).join(", ")}`);
      const problems = conversationProblems(end.context.messages);
      if (problems.length) throw fail(`the conversation is invalid at done:\n    ${problems.join("\n    ")}`);
    }
  } finally {
    actor.stop();
    vi.restoreAllMocks();
  }
}

const VARIANTS: readonly Variant[] = [
  { name: "one model call, every model output", maxTurns: 1, maxToolCalls: 1, outputs: ALL_OUTPUTS },
  // A second turn: the loop back to call_model, a budget spent by the first turn, limits met after tool results.
  // (Invalid JSON, invalid input and a truncated response take the same edges as an unknown tool.)
  { name: "two model calls", maxTurns: 2, maxToolCalls: 1, outputs: ["text", "validCall", "unknownTool", "twoCalls"] },
  // Two calls of one response both allowed: the only way a call can still await execution when recover runs.
  { name: "two tool calls may run", maxTurns: 1, maxToolCalls: 2, outputs: ["twoCalls"] },
  // query() requires maxTurns ≥ 1; the machine itself accepts 0, and its build_context guards it.
  { name: "maxTurns 0 (machine input only)", maxTurns: 0, maxToolCalls: 1, outputs: ["text"] },
  { name: "signal aborted before the start", maxTurns: 2, maxToolCalls: 1, outputs: ["text"], abortedAtStart: true },
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
