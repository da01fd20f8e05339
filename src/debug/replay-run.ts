import { createActor } from "xstate";
import { defaultEffects, effectsActor } from "../actors/effects.js";
import { engineMachine } from "../machine/engine.js";
import { observeEngine } from "../observers/observe.js";
import type { QueryOptions } from "../options.js";
import type { PermissionMode, PermissionRequest } from "../permissions/types.js";
import { prepare } from "../query.js";
import { tracedOptionsOf } from "../run-settings.js";
import { checkSessionId } from "../record/transcript.js";
import { TraceDetails } from "../observers/details.js";
import type { AnyTraceLine } from "../record/format.js";
import { isState, type RecordedOptions, type RecordedRun } from "./recording.js";
import { RecordedContext, type QueuedMessage } from "./replay-context.js";
import { RecordedHooks } from "./replay-hooks.js";
import { RecordedModel } from "./replay-model.js";
import { RecordedPermissions } from "./replay-permissions.js";
import { ReplayRecorder } from "./replay-recorder.js";
import type { ReplayShared } from "./replay-shared.js";
import { DEADLINE_MARKER, ReplayStops } from "./replay-stop.js";
import { RecordedTools } from "./replay-tools.js";
import { requestOf } from "./blobs.js";
import type { BlobStore } from "../record/blobs.js";
import { userInputOf } from "../models/input.js";

/** What one replayed run produced. */
export interface RunOutcome {
  lines: AnyTraceLine[];
  /** Things the stand-ins noticed (a call the recording never made, a crash): context for a divergence. */
  notes: string[];
  /** Why the run could not be replayed at all. */
  failure?: string;
}

export async function replayRun(run: RecordedRun, sessionId: string, summaries: Array<string | undefined>, blobs: BlobStore): Promise<RunOutcome> {
  if (!run.build || !run.options) return { lines: [], notes: [], failure: run.problem?.message ?? "the run has no build_context line with its options" };
  try {
    return await new RunReplay(run, run.options, sessionId, summaries, blobs).play();
  } catch (error) {
    return { lines: [], notes: [], failure: `the replay could not start: ${(error as Error).message}` };
  }
}

/**
 * One run played back through the engine: the recorded options, with stand-ins (model, tools, permissions, hooks,
 * context building) that answer what the recording shows, the recorded run's queued messages and outside stop.
 */
class RunReplay {
  private readonly shared: ReplayShared;
  private readonly recorder: ReplayRecorder;
  private readonly stops: ReplayStops;
  private readonly permissions: RecordedPermissions;
  private readonly context: RecordedContext;
  private readonly hooks: RecordedHooks;
  /** Messages queued during the recorded run, by the model call (index) whose start they are sent at. */
  private queued = new Map<number, QueuedMessage[]>();
  private send?: (message: QueuedMessage) => void;

  constructor(
    private readonly recording: RecordedRun,
    private readonly options: RecordedOptions,
    private readonly sessionId: string,
    compactionSummaries: Array<string | undefined>,
    blobs: BlobStore,
  ) {
    const notes: string[] = [];
    this.recorder = new ReplayRecorder(sessionId, (line) => this.afterLine(line), () => this.stops.checkStop());
    this.stops = new ReplayStops(recording, this.recorder, notes);
    this.shared = { recording, options, recorder: this.recorder, stops: this.stops, notes, blobs };
    this.permissions = new RecordedPermissions(this.shared);
    this.context = new RecordedContext(this.shared, this.permissions);
    this.hooks = new RecordedHooks(this.shared, compactionSummaries);
  }

  async play(): Promise<RunOutcome> {
    const o = this.options;
    const tools = new RecordedTools(this.shared).tools();
    if (!Array.isArray(tools)) return { lines: [], notes: [], failure: tools.failure };
    const queryOptions: QueryOptions = {
      model: new RecordedModel(this.shared).model(),
      tools,
      maxTurns: o.maxTurns,
      maxToolCalls: o.maxToolCalls,
      timeoutMs: o.timeoutMs,
      cwd: o.cwd,
      ...(o.systemPrompt !== undefined ? { systemPrompt: o.systemPrompt } : {}),
      traceFile: false,
      signal: this.stops.controller.signal,
      permissions: {
        mode: o.permissions.mode as PermissionMode,
        allow: o.permissions.allow,
        ask: o.permissions.ask,
        deny: o.permissions.deny,
        ...(o.permissions.onDeny === "continue" ? { onDeny: "continue" as const } : {}),
        // A question that suspended (whenUnanswered: "suspend", no onAsk) was answered later: by the recorded decision.
        ...(o.permissions.onAsk || o.permissions.whenUnanswered === "suspend" ? { onAsk: (request: PermissionRequest) => this.permissions.answer(request) } : {}),
      },
      ...(o.contextWindow !== undefined ? { contextWindow: o.contextWindow } : {}),
      // Compaction (by the window, or after an overflow) summarises with the recorded summary; it never calls the model.
      summarize: async () => this.hooks.recordedSummary(),
      ...(o.reserveTokens !== undefined ? { reserveTokens: o.reserveTokens } : {}),
      ...(o.keepRecentTokens !== undefined ? { keepRecentTokens: o.keepRecentTokens } : {}),
      ...(o.maxRepeatedCalls !== undefined ? { maxRepeatedCalls: o.maxRepeatedCalls } : {}),
      ...(o.maxTokens !== undefined ? { maxTokens: o.maxTokens } : {}),
      // The answer is checked again against the schema the model was asked for, as recorded.
      ...(o.output !== undefined ? { output: o.output, ...(o.outputRetries !== undefined ? { outputRetries: o.outputRetries } : {}) } : {}),
      ...(o.maxDelegationDepth !== undefined ? { maxDelegationDepth: o.maxDelegationDepth } : {}),
      ...this.hooks.options(),
    };
    let validId = true;
    try {
      checkSessionId(this.sessionId);
    } catch {
      validId = false;
    }
    const queued = this.context.queuedMessages();
    // The request as the engine had it: its images and files read back from the blobs the trace names.
    const request = requestOf(this.recording, this.shared.blobs);
    const prepared = prepare(userInputOf(request), queryOptions, {
      ...(validId ? { sessionId: this.sessionId } : {}),
      history: this.context.placeholderHistory(),
      inbox: queued.initial,
      steeringMode: queued.steeringMode,
      followUpMode: queued.followUpMode,
    });
    this.queued = queued.later;
    this.recorder.details = new TraceDetails(tracedOptionsOf(prepared));

    const machine = engineMachine.provide({
      actors: {
        effects: effectsActor({
          ...defaultEffects,
          buildContext: (input, signal) => this.context.build(input, signal),
          // Recorded results are played, no file is touched: nothing to decide again (a recorded re-check is a result).
          runTools: ({ policy: _replayed, ...input }, signal, report) => defaultEffects.runTools(input, signal, report),
        }),
      },
      guards: { timedOut: () => this.stops.expired },
      delays: { runDeadline: DEADLINE_MARKER },
    });
    this.stops.beforeStart();
    const actor = createActor(machine, { input: prepared.input, inspect: observeEngine([this.recorder]), clock: this.stops.clock });
    this.stops.attach(actor);
    this.send = (m) => actor.send({ type: m.source === "steering" ? "inbox.steer" : "inbox.followUp", message: { role: "user", content: m.content } });
    const notes = this.shared.notes;
    const ended = new Promise<void>((resolve) => {
      actor.subscribe({
        complete: () => resolve(),
        error: (error) => {
          notes.push(`the engine failed during the replay: ${(error as Error)?.message ?? String(error)}`);
          resolve();
        },
      });
    });
    actor.start();
    await ended;
    this.stops.finished = true;
    actor.stop();
    const unplayed = this.hooks.unplayedNote();
    if (unplayed !== undefined) notes.push(unplayed);
    return { lines: this.recorder.lines, notes };
  }

  private afterLine(line: AnyTraceLine): void {
    if (isState(line, "call_model")) {
      for (const m of this.queued.get(this.recorder.modelCallIndex) ?? []) this.send?.(m);
    }
    this.stops.afterLine(line);
  }
}
