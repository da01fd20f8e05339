import { AgentError } from "./errors/agent-error.js";
import { contentText } from "./models/content.js";
import type { QueryInput } from "./models/input.js";
import type { OutputOf, OutputSchema } from "./tools/output-schema.js";
import type { AgentEvent, RunResult } from "./events.js";
import { defaultLogger, type Logger } from "./logger.js";
import type { EngineContext } from "./machine/context.js";
import type { InternalObserver } from "./observers/observe.js";
import { turnEndOf } from "./observers/run-summary.js";
import type { AuditLine } from "./observers/audit-writer.js";
import type { ToolCall } from "./models/messages.js";
import { QUERY_OPTION_NAMES, checkOptionNames, type QueryOptions } from "./options.js";
import { startInspector } from "./inspect/start.js";
import type { Inspector } from "./inspect/server.js";
import { engineObserverOf, type InspectedRun } from "./inspect/run.js";
import { askThroughInspector } from "./inspect/ask-through-inspector.js";
import type { AnyTool, ToolCallOf } from "./tools/define-tool.js";
import { returned, settleOnReturn } from "./util/returned.js";
import { agentFolder, makeFileInside } from "./record/agent-folder.js";
import type { TraceLine } from "./record/format.js";
import { redactText, secretValues } from "./record/redact.js";
import { transcriptFromLines, transcriptPath, type TranscriptEntry } from "./record/transcript.js";
import { MemoryLines, type MemoryStore } from "./durable/memory-store.js";
import { lockRun, refuseOverSuspended } from "./durable/run-lock.js";
import type { RunStore } from "./durable/run-store.js";
import { EventBridge } from "./event-bridge.js";
import { prepare } from "./prepare-run.js";
import { tracedOptionsOf, type RunSettings } from "./run-settings.js";
import { driveRun, type EngineActor } from "./run-driver.js";
import { runObservers } from "./run-observers.js";
import { placeOf, type RunMemory, type RunPlace } from "./store-option.js";

/**
 * A running query: the event stream, plus `abort()` (ends the run `user_abort`). `Call` types the tool calls of its
 * events (query() infers it from `options.tools`).
 */
export interface QueryRun<Call extends ToolCall = ToolCall, Output = unknown> extends AsyncGenerator<AgentEvent<Call>, RunResult<Output>, undefined> {
  abort(): void;
  readonly sessionId: string;
  /**
   * The run's result, which `for await` drops (it is the generator's return value): resolves once the last event
   * (`turn_end` or `suspended`) has been yielded, so also after a `break` at that event. Rejects as the run does
   * (what the first next() throws: INVALID_OPTIONS, SESSION_BUSY…), or with `USER_ABORT` when the loop over the
   * events stopped before the last one. It settles only as the events are read.
   */
  readonly result: Promise<RunResult<Output>>;
  /**
   * The run's trace lines so far, with `store: "memory"` (docs/durable.md, "Where a run is kept"); its subagents'
   * lines among them, as in a trace file. With another store it throws `INVALID_OPTIONS`: the trace is in its file
   * (`readTrace()` reads it).
   */
  trace(): TraceLine[];
  /** The session's transcript so far (every run of it in this process), with `store: "memory"`. */
  transcript(): TranscriptEntry[];
  /** The run's audit lines so far (one per tool call), with `store: "memory"`. */
  audit(): AuditLine[];
}

export { prepare, type RunPlacement } from "./prepare-run.js";
export type { RunSettings, HostedRun } from "./run-settings.js";

/**
 * Runs the agent on `input`: the engine machine from build_context to done, as an async generator of events.
 * Exactly one `turn_end` comes last; the generator's return value is the run's result.
 * Invalid options throw an `AgentError` (`INVALID_OPTIONS`) at once, naming the option and how to fix it.
 */
export function query<const Tools extends readonly AnyTool[] = readonly AnyTool[], const Output extends OutputSchema | undefined = undefined>(
  input: QueryInput,
  options: QueryOptions<Tools> & { output?: Output },
): QueryRun<ToolCallOf<Tools>, OutputOf<Output>> {
  // A one-run session: the same engine, with empty queues. The engine holds the tools and hooks untyped.
  const untyped = options as unknown as QueryOptions;
  if (untyped && typeof untyped === "object") checkOptionNames(untyped, QUERY_OPTION_NAMES, "query()");
  return startRun(prepare(input, untyped), untyped) as unknown as QueryRun<ToolCallOf<Tools>, OutputOf<Output>>;
}

/** How a run is tied to what started it (a session's inbox, a parent run). */
export interface RunLifecycle {
  /** Before the first event: the actor that will run (a session sends queued messages to it). */
  started?(actor: EngineActor): void;
  /**
   * After the last event: the run's final context (a session takes back messages it did not claim). A suspended run
   * keeps its queued messages: they are stored with it and handed back when it is resumed.
   */
  settled?(context: EngineContext, suspended?: Extract<AgentEvent, { type: "suspended" }>): void;
  /** Instead of running: the generator's first next() rejects with this (a busy session). */
  refuse?(): AgentError | undefined;
  /** The run passed refuse() but failed before its engine started (`started` never comes). */
  notStarted?(): void;
}

export type { EngineActor } from "./run-driver.js";

/** Starts a prepared run as a QueryRun; nothing happens until the first next(). */
export function startRun(prepared: RunSettings, options: QueryOptions, lifecycle: RunLifecycle = {}): QueryRun {
  const result = returned<RunResult>();
  const control: RunControl = { aborted: false, finished: result.resolve };
  const generator = runEngine(prepared, options, control, lifecycle) as QueryRun;
  withResult(generator, prepared.input.sessionId, result);
  withRecords(generator, options.store, () => control.memory);
  kept.set(generator, () => control.memory);
  generator.abort = () => {
    control.aborted = true;
    control.abort?.();
  };
  return generator;
}

/** How a QueryRun and its generator talk: the abort it asks for, the result once the last event is known. */
interface RunControl {
  abort?: () => void;
  aborted: boolean;
  finished: (result: RunResult) => void;
  /** What the run keeps in memory (`store: "memory"`), once it has started. */
  memory?: RunMemory | undefined;
}

/** Each run's memory, for a run that wraps another (resume()'s). */
const kept = new WeakMap<QueryRun, () => RunMemory | undefined>();

/** What a run started by `startRun` keeps in memory (`store: "memory"`), once it has started. */
export function memoryOfRun(run: QueryRun): RunMemory | undefined {
  return kept.get(run)?.();
}

/** Gives a run `trace()`, `transcript()` and `audit()`: the lines it keeps in memory, parsed. */
export function withRecords(generator: QueryRun, store: QueryOptions["store"], memory: () => RunMemory | undefined): void {
  const read = <T>(part: "trace" | "transcript" | "audit") => (): T[] => {
    if (store !== "memory") {
      throw new AgentError("INVALID_OPTIONS", `run.${part}() reads what a run keeps in memory; this run writes its ${part} to files (store: "file"): start it with store: "memory", or read the files (readTrace() reads the trace)`);
    }
    return (memory()?.[part].lines ?? []).map((line) => JSON.parse(line) as T);
  };
  generator.trace = read<TraceLine>("trace");
  generator.transcript = read<TranscriptEntry>("transcript");
  generator.audit = read<AuditLine>("audit");
}

/** Gives a run's generator its `sessionId` and its `result` (settled as the generator ends, see QueryRun.result). */
export function withResult(generator: QueryRun, sessionId: string, result = returned<RunResult>()): void {
  Object.defineProperty(generator, "sessionId", { value: sessionId, enumerable: true });
  Object.defineProperty(generator, "result", { value: result.promise, enumerable: true });
  settleOnReturn(generator, result, () => new AgentError("USER_ABORT", `run ${sessionId} was stopped before its last event (the loop over its events ended early), so it has no result; it ended user_abort`));
}

async function* runEngine(
  prepared: RunSettings,
  options: QueryOptions,
  control: RunControl,
  lifecycle: RunLifecycle,
): AsyncGenerator<AgentEvent, RunResult, undefined> {
  const refusal = lifecycle.refuse?.();
  if (refusal) throw refusal;
  const { input } = prepared;
  const logger = options.logger ?? defaultLogger();
  const onError = (error: Error) => logger.error({ err: error.message, sessionId: input.sessionId }, "statecraft: trace write failed");
  input.deps.warn = (message) => logger.warn({ sessionId: input.sessionId }, `statecraft: ${message}`);
  const opened = await openRun(prepared, options, logger, lifecycle);
  const { inspector, release } = opened;
  const inspected = inspector?.attach({ sessionId: input.sessionId, input: contentText(input.userInput), runOptions: tracedOptionsOf(prepared) });
  if (inspector && inspected) input.deps.permissions = askThroughInspector(input.deps.permissions, inspector, inspected);
  const memory = opened.place.memory ? keepInMemory(prepared, opened.place.memory) : undefined;
  control.memory = memory;
  const secrets = secretValues();
  const own = options.observers;
  if (own?.some((o) => o.subagent !== undefined)) {
    input.deps.observeSubagent = (start) => own.flatMap((o) => o.subagent?.(start) ?? []);
  }
  const bridge = new EventBridge();
  input.deps.pace = bridge.pace;
  const observers = runObservers(prepared, {
    ...(memory ? { memory } : {}),
    ...(opened.checkpoints ? { checkpoints: opened.checkpoints } : {}),
    secrets,
    onError,
    ...(inspected ? { inspected: inspectedObserver(inspected) } : {}),
    ...(options.observers ? { own: options.observers } : {}),
    bridge: bridgeObserver(bridge, prepared, secrets),
  });
  if (inspector) bridge.push({ type: "inspector", url: inspector.url });
  let settled = false;
  try {
    return yield* driveRun(prepared, {
      observers,
      bridge,
      store: opened.store,
      secrets,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(lifecycle.started ? { started: lifecycle.started } : {}),
      settle(context, suspended) {
        if (settled) return;
        settled = true;
        lifecycle.settled?.(context, suspended);
      },
      finished: control.finished,
      onAbort: (abort) => (control.abort = abort),
      aborted: () => control.aborted,
    });
  } finally {
    await release?.();
    observers.close();
    inspected?.end();
    if (inspector) {
      if (options.inspect?.keepOpen) inspector.unref();
      else await inspector.close();
    }
  }
}

/** What a run holds from its start to its end, besides its observers. */
interface OpenedRun {
  place: RunPlace;
  /** Where a suspended run is stored. */
  store: RunStore;
  /** Where checkpoints go, when the run keeps them. */
  checkpoints?: RunStore;
  release?: () => Promise<void>;
  inspector?: Inspector;
}

/**
 * Opens a run: where it is kept, its lock and the suspended-run check (a durable run), its transcript file, its
 * inspector. A run that fails here gives its lock back and tells its lifecycle it never started.
 */
async function openRun(prepared: RunSettings, options: QueryOptions, logger: Logger, lifecycle: RunLifecycle): Promise<OpenedRun> {
  const { input } = prepared;
  const place = placeOf(options, input.cwd);
  // A durable run keeps a checkpoint in the run store as it goes (a subagent is part of its parent's step), holding
  // the run's lock meanwhile: a resume() of it while it runs is refused. A resumed run is durable.
  const store = prepared.resumed?.store ?? place.runs;
  // A hosted run (statecraft/dbos) keeps no checkpoints of its own: its host journals each step.
  const hosted = prepared.hosted;
  // A new session's transcript file is made while the run's lock is taken, off the event loop (see makeFileInside).
  const transcriptMade = hosted || place.kind === "memory" ? undefined : makeFileInside(agentFolder(input.cwd), transcriptPath(input.cwd, input.sessionId));
  const durable = !hosted && (prepared.resumed !== undefined || (options.durable !== false && input.loop.depth === 0));
  let release = prepared.resumed?.release;
  let locked = !store.lock || release !== undefined;
  if (durable && !locked) {
    release = await lockRun(store, input.sessionId, logger);
    locked = release !== undefined;
  }
  const fail = async (error: unknown): Promise<never> => {
    await release?.();
    lifecycle.notStarted?.();
    throw error;
  };
  if (durable && locked && !prepared.resumed) await refuseOverSuspended(store, input.sessionId, logger).catch(fail);
  await transcriptMade;
  const inspector = options.inspect ? await startInspector({ port: options.inspect.port ?? 0 }).catch(fail) : undefined;
  return { place, store, ...(durable && locked ? { checkpoints: store } : {}), ...(release ? { release } : {}), ...(inspector ? { inspector } : {}) };
}

/**
 * What a run kept in memory records: its own trace and audit lines, and its session's conversation (which the next
 * run of the session in this process goes on from, as it would from the transcript file).
 */
function keepInMemory(prepared: RunSettings, memory: MemoryStore): RunMemory {
  const { input } = prepared;
  if (!input.history && !prepared.resumed && memory.hasTranscript(input.cwd, input.sessionId)) {
    const loaded = transcriptFromLines(memory.transcript(input.cwd, input.sessionId).lines, memory.allBlobs);
    input.history = loaded.messages;
    // The session's allow_always answers hold for its later runs, as the transcript file's allow rules do.
    input.deps.policy!.addSessionRules(loaded.allowRules);
  }
  const kept: RunMemory = {
    trace: new MemoryLines(),
    audit: new MemoryLines(),
    transcript: memory.transcript(input.cwd, input.sessionId),
    blobs: memory.blobs(input.cwd, input.sessionId),
  };
  // A subagent's lines are kept with its parent's, as they would share its files.
  const hostSubagent = (child: unknown) => {
    const run = child as RunSettings;
    // A parent with no trace gives its subagents none either: their lines go nowhere.
    const trace = prepared.traceFile ? kept.trace : new MemoryLines();
    run.hosted = {
      sinks: { trace, audit: kept.audit, transcript: memory.transcript(run.input.cwd, run.input.sessionId) },
      blobs: memory.blobs(run.input.cwd, run.input.sessionId),
    };
    run.input.deps.hostSubagent = hostSubagent;
  };
  input.deps.hostSubagent ??= hostSubagent;
  return kept;
}

/** The event bridge as an observer: the caller's events, from the states entered and the events emitted. */
function bridgeObserver(bridge: EventBridge, prepared: RunSettings, secrets: readonly string[]): InternalObserver {
  return {
    state(entered) {
      // A resumed run passes through build_context on its way back to ask_permission: not a step of its own.
      if (entered.state === "build_context" && entered.from === undefined && prepared.resumed) return;
      if (entered.state !== "done") bridge.push({ type: "state", state: entered.state, turn: entered.context.turn });
    },
    // A failed request's message may quote what was sent (a key, a URL with credentials): redacted like the trace.
    emitted: (event) => bridge.push(event.type === "retry" ? { ...event, error: { ...event.error, message: redactText(event.error.message, secrets) } } : event),
  };
}

/** The inspector's view of the run, told how it ended. */
function inspectedObserver(inspected: InspectedRun): InternalObserver {
  return {
    ...engineObserverOf(inspected),
    finished(summary) {
      if (summary.status === "completed") inspected.publish(turnEndOf(summary));
      inspected.end();
    },
  };
}
