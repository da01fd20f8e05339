import { join, resolve } from "node:path";
import { createActor, type Actor } from "xstate";
import { AgentError, type ErrorInfo } from "./errors/agent-error.js";
import type { AgentEvent, RunResult } from "./events.js";
import { defaultLogger } from "./logger.js";
import type { EngineContext } from "./machine/context.js";
import { engineMachine } from "./machine/engine.js";
import { observeEngine, type EngineObserver } from "./observers/observe.js";
import type { Message, ToolCall } from "./models/messages.js";
import { QUERY_OPTION_NAMES, checkOptionNames, type QueryOptions } from "./options.js";
import type { PermissionOptions } from "./permissions/types.js";
import { startInspector } from "./inspect/start.js";
import type { Inspector } from "./inspect/server.js";
import type { InspectedRun } from "./inspect/run.js";
import type { AnyTool, ToolCallOf } from "./tools/define-tool.js";
import { returned, settleOnReturn } from "./util/returned.js";
import { agentFolder, isInside, makeFileInside } from "./record/agent-folder.js";
import { auditWriter } from "./observers/audit-writer.js";
import { redactText, secretValues } from "./record/redact.js";
import { traceWriter } from "./observers/trace-writer.js";
import { transcriptPath } from "./record/transcript.js";
import { fileRunStore } from "./durable/file-run-store.js";
import type { RunStore, StoredRun } from "./durable/run-store.js";
import { storedRunOf } from "./durable/stored-run.js";
import { runCheckpointer } from "./observers/run-checkpoint.js";
import { transcriptWriter } from "./observers/transcript-writer.js";
import { effectsActor } from "./actors/effects.js";
import { prepare, type PreparedRun } from "./prepare-run.js";

/**
 * The most events the bridge holds for a caller slower than the engine (an instant model, a consumer that awaits
 * per event): past it the next model call waits until the caller has taken half of them, so the backlog stays
 * bounded however long the run (without it, about two events a step piled up).
 */
const MAX_BACKLOG = 1024;

/**
 * A running query: the event stream, plus `abort()` (ends the run `user_abort`). `Call` types the tool calls of its
 * events (query() infers it from `options.tools`).
 */
export interface QueryRun<Call extends ToolCall = ToolCall> extends AsyncGenerator<AgentEvent<Call>, RunResult, undefined> {
  abort(): void;
  readonly sessionId: string;
  /**
   * The run's result, which `for await` drops (it is the generator's return value): resolves once the last event
   * (`turn_end` or `suspended`) has been yielded, so also after a `break` at that event. Rejects as the run does
   * (what the first next() throws: INVALID_OPTIONS, SESSION_BUSY…), or with `USER_ABORT` when the loop over the
   * events stopped before the last one. It settles only as the events are read.
   */
  readonly result: Promise<RunResult>;
}

export { prepare, type PreparedRun, type HostedRun, type RunPlacement } from "./prepare-run.js";

/**
 * Runs the agent on `input`: the engine machine from build_context to done, as an async generator of events.
 * Exactly one `turn_end` comes last; the generator's return value is the run's result.
 * Invalid options throw an `AgentError` (`INVALID_OPTIONS`) at once, naming the option and how to fix it.
 */
export function query<const Tools extends readonly AnyTool[] = readonly AnyTool[]>(input: string, options: QueryOptions<Tools>): QueryRun<ToolCallOf<Tools>> {
  // A one-run session: the same engine, with empty queues. The engine holds the tools and hooks untyped.
  const untyped = options as unknown as QueryOptions;
  if (untyped && typeof untyped === "object") checkOptionNames(untyped, QUERY_OPTION_NAMES, "query()");
  return startRun(prepare(input, untyped), untyped) as QueryRun<ToolCallOf<Tools>>;
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

export type EngineActor = Actor<typeof engineMachine>;

/** Starts a prepared run as a QueryRun; nothing happens until the first next(). */
export function startRun(prepared: PreparedRun, options: QueryOptions, lifecycle: RunLifecycle = {}): QueryRun {
  const result = returned<RunResult>();
  const control: RunControl = { aborted: false, finished: result.resolve };
  const generator = runEngine(prepared, options, control, lifecycle) as QueryRun;
  withResult(generator, prepared.input.sessionId, result);
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
}

/** Gives a run's generator its `sessionId` and its `result` (settled as the generator ends, see QueryRun.result). */
export function withResult(generator: QueryRun, sessionId: string, result = returned<RunResult>()): void {
  Object.defineProperty(generator, "sessionId", { value: sessionId, enumerable: true });
  Object.defineProperty(generator, "result", { value: result.promise, enumerable: true });
  settleOnReturn(generator, result, () => new AgentError("USER_ABORT", `run ${sessionId} was stopped before its last event (the loop over its events ended early), so it has no result; it ended user_abort`));
}

async function* runEngine(
  prepared: PreparedRun,
  options: QueryOptions,
  control: RunControl,
  lifecycle: RunLifecycle,
): AsyncGenerator<AgentEvent, RunResult, undefined> {
  const refusal = lifecycle.refuse?.();
  if (refusal) throw refusal;
  const { input } = prepared;
  const logger = options.logger ?? defaultLogger();
  const reportWriteFailure = (error: Error) => logger.error({ err: error.message, sessionId: input.sessionId }, "statecraft: trace write failed");
  input.deps.warn = (message) => logger.warn({ sessionId: input.sessionId }, `statecraft: ${message}`);
  // A durable run keeps a checkpoint in the run store as it goes (a subagent is part of its parent's step), holding
  // the run's lock meanwhile: a resume() of it while it runs is refused. A resumed run is durable.
  const store = prepared.resumed?.store ?? options.runStore ?? fileRunStore(input.cwd);
  // A hosted run (statecraft/dbos) keeps no checkpoints of its own: its host journals each step.
  const hosted = prepared.hosted;
  // A new session's transcript file is made while the run's lock is taken, off the event loop (see makeFileInside).
  const transcriptMade = hosted ? undefined : makeFileInside(agentFolder(input.cwd), transcriptPath(input.cwd, input.sessionId));
  const durable = !hosted && (prepared.resumed !== undefined || (options.durable !== false && input.loop.depth === 0));
  let release = prepared.resumed?.release;
  let locked = !store.lock || release !== undefined;
  if (durable && !locked) {
    try {
      release = await store.lock!(input.sessionId);
      locked = true;
    } catch (error) {
      const busy = (error as AgentError).code === "RUN_BUSY";
      logger[busy ? "warn" : "error"]({ sessionId: input.sessionId, err: (error as Error).message }, "statecraft: the run is not checkpointed (it can't be resumed if its process dies)");
    }
  }
  if (durable && locked && !prepared.resumed) {
    try {
      await refuseOverSuspended(store, input.sessionId, logger);
    } catch (error) {
      await release?.();
      lifecycle.notStarted?.();
      throw error;
    }
  }
  await transcriptMade;
  let inspector: Awaited<ReturnType<typeof startInspector>> | undefined;
  try {
    inspector = options.inspect ? await startInspector({ port: options.inspect.port ?? 0 }) : undefined;
  } catch (error) {
    await release?.();
    lifecycle.notStarted?.();
    throw error;
  }
  const inspected = inspector?.attach({ sessionId: input.sessionId, input: input.userInput, runOptions: prepared.runOptions });
  if (inspector && inspected) input.deps.permissions = askThroughInspector(input.deps.permissions, inspector, inspected);
  const secrets = secretValues();

  // The event bridge: observers push, the generator pulls.
  const queue: AgentEvent[] = [];
  let head = 0;
  let wake: (() => void) | undefined;
  const push = (event: AgentEvent) => {
    queue.push(event);
    wake?.();
  };
  let caughtUp: { promise: Promise<void>; resolve: () => void } | undefined;
  const catchUp = () => {
    const waiting = caughtUp;
    caughtUp = undefined;
    waiting?.resolve();
  };
  input.deps.pace = (signal) => {
    if (queue.length - head <= MAX_BACKLOG) return undefined;
    if (!caughtUp) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      caughtUp = { promise, resolve };
    }
    const waiting = caughtUp.promise;
    return new Promise<void>((resolve) => {
      const aborted = () => resolve();
      signal.addEventListener("abort", aborted, { once: true });
      // Removed once caught up: the work's signal may serve the next piece of work, which must find no listener.
      void waiting.then(() => {
        signal.removeEventListener("abort", aborted);
        resolve();
      });
    });
  };
  const bridge: EngineObserver = {
    state(entered) {
      // A resumed run passes through build_context on its way back to ask_permission: not a step of its own.
      if (entered.state === "build_context" && entered.from === undefined && prepared.resumed) return;
      if (entered.state !== "done") push({ type: "state", state: entered.state, turn: entered.context.turn });
    },
    // A failed request's message may quote what was sent (a key, a URL with credentials): redacted like the trace.
    emitted: (event) => push(event.type === "retry" ? { ...event, error: { ...event.error, message: redactText(event.error.message, secrets) } } : event),
  };
  const trace = prepared.traceFile || hosted
    ? traceWriter({
            ...(hosted ? { out: hosted.sinks.trace } : {}),
            file: prepared.traceFile || "",
            // A trace in the workspace's own .agent/ is written like the engine's other files there: never through a link.
            ...(prepared.traceFile && isInside(agentFolder(input.cwd), resolve(input.cwd, prepared.traceFile)) ? { inside: agentFolder(input.cwd) } : {}),
            sessionId: input.sessionId,
            runOptions: prepared.runOptions,
            secrets,
            onError: reportWriteFailure,
            ...(input.loop.parentSession !== undefined ? { parentSession: input.loop.parentSession } : {}),
            ...(prepared.forkedAt ? { forkedAt: prepared.forkedAt } : {}),
            ...(prepared.resumed ? { resumed: { seq: prepared.resumed.seq, fields: prepared.resumed.fields } } : {}),
          })
    : undefined;
  const writers = [
    ...(trace ? [trace] : []),
    transcriptWriter({ cwd: input.cwd, sessionId: input.sessionId, secrets, onError: reportWriteFailure, ...(prepared.resumed?.recovered ? { reset: true } : {}), ...(hosted ? { out: hosted.sinks.transcript } : {}) }),
    auditWriter({ file: join(agentFolder(input.cwd), "audit.jsonl"), inside: agentFolder(input.cwd), secrets, onError: reportWriteFailure, ...(hosted ? { out: hosted.sinks.audit } : {}) }),
  ];

  const riskOf = (name: string) => input.deps.tools.get(name)?.risk;
  const checkpoints = durable && locked ? [runCheckpointer({ store, settings: prepared.settings, riskOf, ...(trace ? { trace } : {}), onError: reportWriteFailure })] : [];
  writers.push(...checkpoints);

  if (inspector) push({ type: "inspector", url: inspector.url });
  const machine = hosted ? engineMachine.provide({ ...(hosted.time?.machine ?? {}), actors: { effects: effectsActor(hosted.effects) } }) : engineMachine;
  const actor = createActor(machine, {
    input,
    inspect: observeEngine([...writers, ...(inspected ? [inspected.observer] : []), bridge]),
    ...(hosted?.time ? { clock: hosted.time.clock } : {}),
  });
  lifecycle.started?.(actor);
  let finished = false;
  let crash: unknown;
  actor.subscribe({
    complete: () => {
      finished = true;
      wake?.();
    },
    error: (error) => {
      crash = error;
      finished = true;
      wake?.();
    },
  });
  const abort = () => {
    if (actor.getSnapshot().status === "active") actor.send({ type: "ABORT" });
  };
  let settled = false;
  const settle = (suspended?: Extract<AgentEvent, { type: "suspended" }>) => {
    if (settled) return;
    settled = true;
    lifecycle.settled?.(actor.getSnapshot().context, suspended);
  };
  control.abort = abort;
  options.signal?.addEventListener("abort", abort, { once: true });

  /**
   * The machine stopped in ask_permission at questions it may not answer now: the run is stored, the actor stopped
   * (nothing is held open, the process may exit), and `suspended` is the last event instead of `turn_end`.
   */
  async function* suspend(event: Extract<AgentEvent, { type: "suspended" }>): AsyncGenerator<AgentEvent, RunResult, undefined> {
    const context = actor.getSnapshot().context;
    actor.stop();
    for (const writer of writers) writer.close();
    await store.save(storedRunOf(context, prepared.settings, trace?.nextSeq() ?? 0, Date.now()));
    settle(event);
    inspected?.end();
    const result: RunResult = {
      status: "suspended",
      runId: event.runId,
      pending: event.pending,
      text: context.outcome.finalText,
      messages: context.messages.filter((m) => m.role !== "system"),
      usage: { ...context.usage },
      sessionId: input.sessionId,
      turns: context.turn,
      toolCalls: context.toolCallCount,
    };
    control.finished(result);
    yield event;
    return result;
  }

  try {
    actor.start();
    if (control.aborted) abort();
    for (;;) {
      while (head < queue.length) {
        const event = queue[head];
        queue[head++] = undefined as unknown as AgentEvent; // let delivered events be collected
        if (caughtUp && queue.length - head <= MAX_BACKLOG / 2) catchUp();
        if (event.type === "suspended") return yield* suspend(event);
        yield event;
      }
      // Everything delivered: start the queue over rather than let it grow with the run.
      queue.length = 0;
      head = 0;
      catchUp();
      if (finished) break;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
    const snapshot = actor.getSnapshot();
    const context = snapshot.context;
    // A resumed run that ran to its end is no longer resumable: its stored state goes.
    if (prepared.resumed && crash === undefined) await prepared.resumed.store.delete(input.sessionId);
    let reason = snapshot.output?.reason ?? context.outcome.stopReason ?? "model_error";
    let error: ErrorInfo | undefined = snapshot.output?.error;
    if (crash !== undefined) {
      reason = "model_error";
      error = { code: "ENGINE_FAILED", message: `the engine failed: ${(crash as Error)?.message ?? String(crash)}` };
    }
    // The error is shown (the CLI prints it) and kept by callers; redacted like the trace, which records it too.
    if (error) error = { ...error, message: redactText(error.message, secrets) };
    const usage = { ...context.usage };
    const turnEnd: AgentEvent = {
      type: "turn_end",
      reason,
      sessionId: input.sessionId,
      turns: context.turn,
      toolCalls: context.toolCallCount,
      usage,
      ...(error ? { error } : {}),
    };
    // The session is free again before the caller sees the end (it may start the next run right away).
    settle();
    inspected?.publish(turnEnd);
    inspected?.end();
    const messages: Message[] = context.messages.filter((m) => m.role !== "system");
    const result: RunResult = {
      status: "completed",
      reason,
      text: context.outcome.finalText,
      messages,
      usage,
      sessionId: input.sessionId,
      turns: context.turn,
      toolCalls: context.toolCallCount,
      ...(error ? { error } : {}),
    };
    // Known before the last event is yielded: `run.result` settles even when the caller breaks out at turn_end.
    control.finished(result);
    yield turnEnd;
    return result;
  } finally {
    catchUp();
    await release?.();
    // A consumer that stops early (break, return) ends the run: abort it so done is recorded, then stop it.
    if (actor.getSnapshot().status === "active") abort();
    actor.stop();
    settle();
    options.signal?.removeEventListener("abort", abort);
    for (const writer of writers) writer.close();
    inspected?.end();
    if (inspector) {
      if (options.inspect?.keepOpen) inspector.unref();
      else await inspector.close();
    }
  }
}

/**
 * A new run of a session whose run is suspended would overwrite what resume() needs: the suspended run comes first.
 * A stored run that can't be read is replaced by the new run's (said in the log: it could not be resumed anyway).
 */
async function refuseOverSuspended(store: RunStore, sessionId: string, logger: QueryOptions["logger"]): Promise<void> {
  let stored: StoredRun | undefined;
  try {
    stored = await store.load(sessionId);
  } catch (error) {
    (logger ?? defaultLogger()).warn({ sessionId, err: (error as Error).message }, "statecraft: the session's stored run can't be resumed; the new run replaces it");
    return;
  }
  if (stored?.status === "running") {
    (logger ?? defaultLogger()).warn({ sessionId, runId: stored.runId }, "statecraft: the session's interrupted run is given up (resume(sessionId) would have continued it); the new run replaces it");
    return;
  }
  if (stored?.status !== "suspended") return;
  throw new AgentError(
    "SESSION_BUSY",
    `session ${sessionId} has a suspended run waiting on ${stored.pending.map((c) => c.callId).join(", ")}; resume it (resume(sessionId, { answers }), or statecraft resume ${sessionId}), or delete .agent/runs/${sessionId}.json to give it up`,
  );
}

/**
 * While a page of the inspector is connected, a permission question goes to the page too: the first answer (page or
 * `onAsk`) wins and the other question is withdrawn. With no page connected, `onAsk` (or deny) as usual.
 */
function askThroughInspector(permissions: PermissionOptions, inspector: Inspector, inspected: InspectedRun): PermissionOptions {
  const terminal = permissions.onAsk;
  return {
    ...permissions,
    onAsk: async (request) => {
      // With no page to ask, as without the inspector: onAsk, else what whenUnanswered says.
      if (inspector.pages === 0) return terminal ? terminal(request) : permissions.whenUnanswered === "suspend" ? "suspend" : "deny";
      const answered = new AbortController();
      const withdraw = request.signal ? AbortSignal.any([request.signal, answered.signal]) : answered.signal;
      const fromPage = inspected.requestPermission(request, { signal: withdraw });
      const fromTerminal = terminal ? Promise.resolve(terminal({ ...request, signal: withdraw })) : new Promise<never>(() => {});
      try {
        return await Promise.race([fromPage, fromTerminal]);
      } finally {
        answered.abort();
        fromPage.catch(() => undefined);
      }
    },
  };
}
