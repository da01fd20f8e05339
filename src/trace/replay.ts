import { isDeepStrictEqual } from "node:util";
import { withoutGaps } from "./gaps.js";
import { createActor, type Actor } from "xstate";
import { buildContext, type BuildContextInput, type BuiltContext } from "../actors/build-context.js";
import { defaultEffects, effectsActor } from "../actors/effects.js";
import { AgentError } from "../errors/agent-error.js";
import type { RunUsage } from "../events.js";
import { engineMachine } from "../machine/engine.js";
import { observeEngine, type EngineObserver, type StateEntered } from "../machine/observe.js";
import type { BeforeToolCallResult, ModelErrorAction } from "../hooks.js";
import type { Inbox } from "../machine/context.js";
import type { Message, ToolCall } from "../models/messages.js";
import type { Model, ModelRequest, ModelResponse, ModelStreamEvent } from "../models/model.js";
import type { QueryOptions, QueueMode } from "../options.js";
import type { PermissionMode, PermissionPolicy, PermissionRequest, PolicyVerdict } from "../permissions/types.js";
import { prepare } from "../query.js";
import { defineTool, type AnyTool, type ToolContext, type ToolOutput } from "../tools/define-tool.js";
import { checkSessionId } from "./transcript.js";
import { TraceDetails } from "./details.js";
import { TRACE_VERSION, type TraceLine } from "./format.js";
import {
  analyseRun,
  compactionsIn,
  compactionSummaries,
  detailsOf,
  isState,
  readError,
  type RecordedBatch,
  type RecordedCall,
  type RecordedModelCall,
  type RecordedOptions,
  type RecordedResponse,
  type RecordedRun,
} from "./recording.js";
import { splitRuns, type TraceSession } from "./session.js";
import { describeLine, excerpt } from "./timeline.js";

export interface ReplayOptions {
  /** Lines of context shown before the divergence (default 3). */
  contextLines?: number;
}

/** Where a replay first stopped matching its recording. */
export interface Divergence {
  /** The seq (in the recording's numbering) of the first line that differs. */
  seq: number;
  /** The run of the session (1-based) it is in. */
  run: number;
  /** The recorded state there (`retry` etc. for other lines, `(missing line)`, `(end of recording)`). */
  recorded: string;
  /** The state the replay reached there (`(end of run)` when it had stopped). */
  replayed: string;
  /** `diverged at seq N: recorded <state>, replayed <state>` */
  message: string;
  /** What differs there, in words. */
  reason: string;
  /** The lines around it, recorded and replayed, and what the replay noticed. */
  context: string[];
}

export interface ReplayResult {
  identical: boolean;
  divergence?: Divergence;
  sessionId: string;
  /** Runs replayed (a session has one per request). */
  runs: number;
  /** Lines of the recording. */
  lines: number;
  /** The lines the replay produced, per run, numbered like the recording's. */
  replayed: TraceLine[][];
}

/**
 * Re-runs a recorded session through the real engine machine, with the outside world played back from the trace:
 * the model answers with its recorded outputs (errors and retries included), tools return their recorded results
 * (nothing runs), permission decisions are the recorded ones (the real ask_permission actor asks a stand-in policy
 * and a stand-in person), and a stop that came from outside (an abort, the deadline) is reproduced at the recorded
 * point. The replay's lines are compared with the recording: states, turns, tool calls (name and input; ids are
 * compared by position), decisions, results and the stop. The first difference is the divergence.
 * A session that can't be read as runs (a missing or misplaced line, an unknown state, no build_context) is a
 * divergence too; replay never throws for a bad trace.
 */
export async function replay(session: TraceSession, options: ReplayOptions = {}): Promise<ReplayResult> {
  const contextLines = options.contextLines ?? 3;
  const runs = splitRuns(session.lines);
  const result: ReplayResult = { identical: true, sessionId: session.sessionId, runs: runs.length, lines: session.lines.length, replayed: [] };
  if (runs.length === 0) {
    result.identical = false;
    result.divergence = divergenceAt(0, 1, "(no lines)", "(not replayed)", "the session has no lines", []);
    return result;
  }
  const cwd = analyseRun(runs[0], 0).options?.cwd;
  const summaries = compactionSummaries(session.lines, cwd, session.sessionId);
  let compactions = 0;
  for (let i = 0; i < runs.length; i++) {
    const recorded = analyseRun(runs[i], i);
    const outcome = await replayRun(recorded, session.sessionId, summaries.slice(compactions));
    compactions += compactionsIn(runs[i]);
    result.replayed.push(outcome.lines);
    const divergence = compareRun(recorded, outcome, runs.length, contextLines);
    if (divergence) {
      result.identical = false;
      result.divergence = divergence;
      return result;
    }
  }
  return result;
}

/** What one replayed run produced. */
interface RunOutcome {
  lines: TraceLine[];
  /** Things the stand-ins noticed (a call the recording never made, a crash): context for a divergence. */
  notes: string[];
  /** Why the run could not be replayed at all. */
  failure?: string;
}

/** How a stop that came from outside the engine is reproduced. */
interface StopPlan {
  reason: "user_abort" | "timeout";
  /**
   * `before-start`: the caller's signal was aborted before the run began. `guard`: a guard of a transient state saw
   * the abort or the deadline (its flag is set when the replay reaches `atSeq`). `event`: the abort or the deadline
   * arrived while the engine waited in the state at `atSeq` (sent when the replay writes that line).
   */
  style: "before-start" | "guard" | "event";
  atSeq: number;
  /** execute_tool: the calls that had finished when the stop came; the stop waits for as many. */
  waitFinished?: number;
  /** The batch the stop came in (its unfinished calls wait instead of answering). */
  batch?: RecordedBatch;
}

/** Hooks whose effect the trace records, so the replay can play them back. */
const PLAYED_HOOKS: ReadonlySet<string> = new Set(["onModelError", "shouldStopAfterTurn", "beforeToolCall", "afterToolCall", "transformContext"]);

/** The deadline timer's delay in a replay: a marker the replay's clock recognises (it is never waited for). */
const DEADLINE_MARKER = 2_000_000_017;

async function replayRun(run: RecordedRun, sessionId: string, summaries: Array<string | undefined>): Promise<RunOutcome> {
  if (!run.build || !run.options) return { lines: [], notes: [], failure: run.problem?.message ?? "the run has no build_context line with its options" };
  try {
    return await new RunReplay(run, run.options, sessionId, summaries).play();
  } catch (error) {
    return { lines: [], notes: [], failure: `the replay could not start: ${(error as Error).message}` };
  }
}

/** One run played back through the engine. */
class RunReplay {
  private readonly notes: string[] = [];
  private readonly plan: StopPlan | undefined;
  private readonly controller = new AbortController();
  private readonly recorder: ReplayRecorder;
  private actor?: Actor<typeof engineMachine>;
  private modelCalls = 0;
  private summaries = 0;
  private deadline?: { id: object; fire: () => void };
  private deadlinePending = false;
  private expired = false;
  private stopped = false;
  private reached = false;
  private finished = false;
  private readonly decided = new Set<RecordedCall>();
  /** Messages queued during the recorded run, by the model call (index) whose start they are sent at. */
  private queued = new Map<number, Array<{ source: "steering" | "follow_up"; content: string }>>();
  private lastDecided?: RecordedCall;

  constructor(
    private readonly recording: RecordedRun,
    private readonly options: RecordedOptions,
    private readonly sessionId: string,
    private readonly compactionSummaries: Array<string | undefined>,
  ) {
    this.plan = stopPlan(recording);
    this.recorder = new ReplayRecorder(sessionId, (line) => this.afterLine(line), () => this.checkStop());
  }

  async play(): Promise<RunOutcome> {
    const o = this.options;
    const tools: AnyTool[] = [];
    for (const t of o.tools) {
      try {
        tools.push(
          defineTool({
            name: t.name,
            description: t.description,
            inputSchema: t.inputSchema,
            risk: t.risk,
            executionMode: t.executionMode,
            maxOutputChars: Number.MAX_SAFE_INTEGER,
            execute: (input: unknown, context: ToolContext) => this.playTool(t.name, input, context),
          }),
        );
      } catch (error) {
        return { lines: [], notes: [], failure: `the recorded tool ${t.name} can't be rebuilt: ${(error as Error).message}` };
      }
    }
    const model: Model = { name: o.model ?? "replay", stream: (request, { signal }) => this.playModel(request, signal) };
    const queryOptions: QueryOptions = {
      model,
      tools,
      maxTurns: o.maxTurns,
      maxToolCalls: o.maxToolCalls,
      timeoutMs: o.timeoutMs,
      cwd: o.cwd,
      ...(o.systemPrompt !== undefined ? { systemPrompt: o.systemPrompt } : {}),
      traceFile: false,
      signal: this.controller.signal,
      permissions: {
        mode: o.permissions.mode as PermissionMode,
        allow: o.permissions.allow,
        ask: o.permissions.ask,
        deny: o.permissions.deny,
        // A question that suspended (whenUnanswered: "suspend", no onAsk) was answered later: by the recorded decision.
        ...(o.permissions.onAsk || o.permissions.whenUnanswered === "suspend" ? { onAsk: (request: PermissionRequest) => this.answer(request) } : {}),
      },
      ...(o.contextWindow !== undefined ? { contextWindow: o.contextWindow } : {}),
      // Compaction (by the window, or after an overflow) summarises with the recorded summary; it never calls the model.
      summarize: async () => this.recordedSummary(),
      ...(o.reserveTokens !== undefined ? { reserveTokens: o.reserveTokens } : {}),
      ...(o.keepRecentTokens !== undefined ? { keepRecentTokens: o.keepRecentTokens } : {}),
      ...(o.maxRepeatedCalls !== undefined ? { maxRepeatedCalls: o.maxRepeatedCalls } : {}),
      ...(o.maxTokens !== undefined ? { maxTokens: o.maxTokens } : {}),
      ...(o.maxDelegationDepth !== undefined ? { maxDelegationDepth: o.maxDelegationDepth } : {}),
      // Hooks are code: stand-ins do what the trace shows the recorded ones did.
      ...(o.hooks.includes("onModelError") ? { onModelError: () => this.recordedRecovery() } : {}),
      ...(o.hooks.includes("shouldStopAfterTurn") ? { shouldStopAfterTurn: () => this.recordedStopAfterTurn() } : {}),
      ...(o.hooks.includes("beforeToolCall") ? { beforeToolCall: (call: ToolCall) => this.recordedBeforeToolCall(call) } : {}),
    };
    let validId = true;
    try {
      checkSessionId(this.sessionId);
    } catch {
      validId = false;
    }
    const queued = this.queuedMessages();
    const prepared = prepare(this.recording.input, queryOptions, {
      ...(validId ? { sessionId: this.sessionId } : {}),
      history: this.placeholderHistory(),
      inbox: queued.initial,
      steeringMode: queued.steeringMode,
      followUpMode: queued.followUpMode,
    });
    this.queued = queued.later;
    this.recorder.details = new TraceDetails(prepared.runOptions);

    const machine = engineMachine.provide({
      actors: {
        effects: effectsActor({
          ...defaultEffects,
          buildContext: (input, signal) => this.playBuild(input, signal),
          // Recorded results are played, no file is touched: nothing to decide again (a recorded re-check is a result).
          runTools: ({ policy: _replayed, ...input }, signal, report) => defaultEffects.runTools(input, signal, report),
        }),
      },
      guards: { timedOut: () => this.expired },
      delays: { runDeadline: DEADLINE_MARKER },
    });
    const clock = {
      setTimeout: (fn: (...args: unknown[]) => void, ms: number): unknown => {
        if (ms !== DEADLINE_MARKER) return setTimeout(fn, ms);
        const id = {};
        this.deadline = { id, fire: fn };
        if (this.deadlinePending) queueMicrotask(() => this.fireDeadline());
        return id;
      },
      clearTimeout: (id: unknown) => {
        if (this.deadline?.id === id) this.deadline = undefined;
        else clearTimeout(id as ReturnType<typeof setTimeout>);
      },
    };
    // The actor takes its first steps (and reads the signal) as it is created.
    if (this.plan?.style === "before-start") this.stop();
    const actor = createActor(machine, { input: prepared.input, inspect: observeEngine([this.recorder]), clock });
    this.actor = actor;
    const ended = new Promise<void>((resolve) => {
      actor.subscribe({
        complete: () => resolve(),
        error: (error) => {
          this.notes.push(`the engine failed during the replay: ${(error as Error)?.message ?? String(error)}`);
          resolve();
        },
      });
    });
    actor.start();
    await ended;
    this.finished = true;
    actor.stop();
    const unplayed = this.options.hooks.filter((h) => !PLAYED_HOOKS.has(h));
    if (unplayed.length > 0) {
      this.notes.push(`the recorded run had hooks (${unplayed.join(", ")}) whose effect the trace does not hold; the replay runs without them`);
    }
    return { lines: this.recorder.lines, notes: this.notes };
  }

  /** A continued session's earlier conversation is not in this run's lines: stand-ins of the recorded length. */
  private placeholderHistory(): Message[] {
    const first = this.recording.modelCalls[0]?.messages;
    if (!this.options.continued || first === undefined) return [];
    const firstCall = this.recording.modelCalls[0];
    const claimed = (detailsOf(this.recording.lines[firstCall.seq]).claimed as { messages?: unknown[] } | undefined)?.messages?.length ?? 0;
    const count = Math.max(0, first - (this.addsRequest() ? 1 : 0) - (this.options.systemPrompt ? 1 : 0) - claimed);
    return Array.from({ length: count }, (_, i) => ({ role: "user" as const, content: `(earlier message ${i + 1} of the session, not in this run's trace)` }));
  }

  /**
   * Messages a session queued during the recorded run (call_model's `claimed`): those claimed by the first call were
   * queued before the run; a later one is sent when the model call before its claim starts, early enough for the
   * engine to take it where it did.
   */
  private queuedMessages() {
    const initial: Inbox = { steering: [], followUp: [] };
    const later = new Map<number, Array<{ source: "steering" | "follow_up"; content: string }>>();
    let steeringMode: QueueMode = "one-at-a-time";
    let followUpMode: QueueMode = "one-at-a-time";
    for (const call of this.recording.modelCalls) {
      const claimed = (detailsOf(this.recording.lines[call.seq]).claimed ?? undefined) as { source?: unknown; messages?: unknown } | undefined;
      if (!claimed || !Array.isArray(claimed.messages) || claimed.messages.length === 0) continue;
      const source = claimed.source === "follow_up" ? "follow_up" : "steering";
      const contents = claimed.messages.filter((m): m is string => typeof m === "string");
      if (contents.length > 1) {
        if (source === "steering") steeringMode = "all";
        else followUpMode = "all";
      }
      if (call.index === 0) {
        for (const content of contents) (source === "steering" ? initial.steering : initial.followUp).push({ role: "user", content });
      } else {
        const at = later.get(call.index - 1) ?? [];
        for (const content of contents) at.push({ source, content });
        later.set(call.index - 1, at);
      }
    }
    return { initial, later, steeringMode, followUpMode };
  }

  /** onModelError: what the recorded run did after this recover line (a retry, a continue, or the end). */
  private recordedRecovery(): ModelErrorAction {
    const next = this.nextRecordedState(this.recorder.lastStateSeq);
    if (isState(next, "call_model")) return { action: "retry" };
    if (isState(next, "build_context")) return { action: "continue" };
    return { action: "abort" };
  }

  /** shouldStopAfterTurn: true where the recorded run went from this build_context straight to done. */
  private recordedStopAfterTurn(): boolean {
    return isState(this.nextRecordedState(this.recorder.lastStateSeq), "done");
  }

  /** beforeToolCall: the block, edit or failure the recording shows for this call. */
  private recordedBeforeToolCall(call: ToolCall): BeforeToolCallResult {
    const where = this.recorder.calls.get(call.id);
    const recorded = where ? this.recording.batches.find((b) => b.callIndex === where.callIndex)?.calls[where.position] : undefined;
    if (!recorded) return undefined;
    const content = recorded.result?.content ?? "";
    if (!recorded.permission && content.startsWith("Blocked: ")) return { block: true, reason: content.slice("Blocked: ".length) };
    const failed = recorded.result?.error;
    if (!recorded.permission && failed?.code === "HOOK_FAILED") throw new Error(failed.message.replace(/^hook beforeToolCall failed: /, ""));
    const decided = recorded.permission?.input;
    if (decided !== undefined && !isDeepStrictEqual(decided, call.input)) return { input: decided };
    return undefined;
  }

  private nextRecordedState(seq: number): TraceLine | undefined {
    return this.recording.lines.slice(seq + 1).find((l) => l.kind === "state");
  }

  // ——— the model ———

  private async *playModel(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelStreamEvent> {
    void request;
    const index = this.modelCalls++;
    const call = this.recording.modelCalls[index];
    if (!call) {
      this.notes.push(`the replay made model call #${index + 1}, which the recording does not have`);
      throw new AgentError("MODEL_ERROR", `replay: the recording has no model call #${index + 1}`);
    }
    const outcome = call.outcome;
    if (outcome.kind === "response" && outcome.response.thinking) yield { type: "thinking_delta", text: outcome.response.thinking };
    for (const entry of call.stream) {
      if (signal.aborted) throw signal.reason;
      if (entry.type === "retry") yield { type: "retry", attempt: entry.attempt, delayMs: entry.delayMs, error: entry.error };
      else yield { type: "text_delta", text: this.streamedText(call) };
    }
    if (signal.aborted) throw signal.reason;
    switch (outcome.kind) {
      case "response":
        yield { type: "response", response: toModelResponse(outcome.response) };
        return;
      case "error":
        throw new AgentError(outcome.error.code, outcome.error.message, outcome.error.status !== undefined ? { status: outcome.error.status } : {});
      case "cut":
        await this.hang(signal);
        return;
      default:
        this.notes.push(`the recording ends before the outcome of model call #${index + 1} (seq ${call.seq})`);
        // The recording stops here (a crash, or a run still going): so does the replay.
        if (!this.recording.done && index === this.recording.modelCalls.length - 1) await this.hang(signal);
        throw new AgentError("MODEL_ERROR", `replay: the recording ends before this model call's outcome`);
    }
  }

  /** The text a call streamed: its response's, or what was cut off (the done line keeps it). */
  private streamedText(call: RecordedModelCall): string {
    const outcome = call.outcome;
    if (outcome.kind === "response") return outcome.response.text;
    if (outcome.kind === "cut") return outcome.text ?? "";
    const last = call.index === this.recording.modelCalls.length - 1;
    const doneText = this.recording.done ? detailsOf(this.recording.done).text : undefined;
    if (last && typeof doneText === "string") return doneText;
    // What a failed request streamed before a retry or a continue is not in the trace; that there was some is.
    return "(text streamed before the request failed; not in the trace)";
  }

  private recordedSummary(): string {
    const summary = this.compactionSummaries[this.summaries++];
    if (summary !== undefined) return summary;
    this.notes.push("a compaction's summary is neither in the trace nor in the session's transcript; the replay summarises with a stand-in text");
    return "(the summary of this compaction is not in the trace)";
  }

  // ——— build_context ———

  private async playBuild(input: BuildContextInput, signal: AbortSignal): Promise<BuiltContext> {
    const at = this.recorder.lastStateSeq;
    const recordedError = this.buildFailureAt(at);
    if (recordedError) throw new AgentError(recordedError.code, recordedError.message, recordedError.status !== undefined ? { status: recordedError.status } : {});
    if (this.plan?.style === "event" && this.plan.atSeq === at && isState(this.recording.lines[at], "build_context")) await this.hang(signal);
    if (!input.first) return buildContext(input, signal);
    // Never the transcript: a continued session's earlier conversation is given (placeholders), or there is none.
    const built = await buildContext({ ...input, history: input.history ?? [] }, signal);
    const messages = built.messages ?? [];
    // An empty request with a given history adds no user message (the fork rule): a recorded run that had one gets it.
    if (this.addsRequest() && input.userInput === "") messages.push({ role: "user", content: "" });
    return { ...built, policy: this.policy() };
  }

  /** Whether the run's first build added the request as a user message (all runs but a fork given no prompt). */
  private addsRequest(): boolean {
    const forked = (this.recording.lines[0] as { forkedAt?: unknown } | undefined)?.forkedAt !== undefined;
    return !(forked && this.recording.input === "");
  }

  /** The recorded error of the build that began at this seq (a build_context line followed by recover with an error). */
  private buildFailureAt(seq: number) {
    const line = this.recording.lines[seq];
    if (!isState(line, "build_context")) return undefined;
    const next = this.recording.lines.slice(seq + 1).find((l) => l.kind === "state");
    if (!isState(next, "recover")) return undefined;
    return readError(detailsOf(next).error);
  }

  // ——— permissions ———

  /** A policy that gives each call the recorded verdict; calls a person decided are asked (and answered by `answer`). */
  private policy(): PermissionPolicy {
    return {
      mode: this.options.permissions.mode as PermissionMode,
      sessionRules: [],
      evaluate: (tool, input) => this.verdict(tool.name, input),
      rememberAllow: (tool) => this.lastDecided?.permission?.rule ?? tool.name,
    };
  }

  private verdict(name: string, input: unknown): PolicyVerdict {
    const batch = this.currentBatch();
    const call = batch?.calls.find((c) => !this.decided.has(c) && c.permission && c.name === name && isDeepStrictEqual(c.permission.input ?? c.input, input));
    if (!call?.permission) {
      // The line with the decision may be missing (a damaged trace); a call that ran to a result was allowed.
      const ran = batch?.calls.find((c) => !this.decided.has(c) && c.name === name && c.result?.durationMs !== undefined && (!c.hasInput || isDeepStrictEqual(c.input, input)));
      if (ran) {
        this.decided.add(ran);
        this.lastDecided = ran;
        this.notes.push(`the decision for ${name} is not in the recording; it ran, so the replay allows it`);
        return { kind: "allow", by: "mode" };
      }
      this.lastDecided = undefined;
      if (this.plan?.style === "event" && this.plan.batch === batch) return { kind: "ask", reason: "the run stopped before this call was decided" };
      this.notes.push(`the replay asked about ${name} ${excerpt(JSON.stringify(input) ?? "")}, which the recording never decided`);
      return { kind: "deny", by: "mode", reason: "replay: the recording has no decision for this call" };
    }
    this.decided.add(call);
    this.lastDecided = call;
    const p = call.permission;
    if (p.by === "human") return { kind: "ask", reason: "a person was asked" };
    if (p.by === "default") return { kind: "ask", reason: deniedReason(call).replace(/, and no one could be asked \(no permissions\.onAsk\)$/, "") };
    const by = p.by === "rule" ? "rule" : "mode";
    if (p.decision === "deny") return { kind: "deny", by, reason: deniedReason(call), ...(p.rule !== undefined ? { rule: p.rule } : {}) };
    return { kind: "allow", by, ...(p.rule !== undefined ? { rule: p.rule } : {}) };
  }

  /** The stand-in person: answers what was answered; a question the run stopped during is never answered. */
  private async answer(request: PermissionRequest): Promise<"allow" | "deny" | "allow_always"> {
    const call = this.lastDecided;
    if (call?.permission?.by === "human" && call.name === request.call.name) return call.permission.decision;
    await this.hang();
    return "deny";
  }

  private currentBatch(): RecordedBatch | undefined {
    return this.recording.batches.find((b) => b.callIndex === this.recorder.modelCallIndex);
  }

  // ——— tools ———

  private async playTool(name: string, input: unknown, context: ToolContext): Promise<ToolOutput> {
    const where = this.recorder.calls.get(context.toolCallId);
    const batch = where ? this.recording.batches.find((b) => b.callIndex === where.callIndex) : undefined;
    const recorded = where ? batch?.calls[where.position] : undefined;
    const shown = `${name} ${excerpt(JSON.stringify(input) ?? "")}`;
    if (!recorded) {
      this.notes.push(`the replay ran ${shown}, which the recording never ran`);
      return { content: `replay: the recording has no result for ${shown}`, isError: true };
    }
    if (recorded.name !== name || (recorded.hasInput && !isDeepStrictEqual(recorded.permission?.input ?? recorded.input, input))) {
      this.notes.push(`the replay ran ${shown} where the recording ran ${recorded.name} ${excerpt(JSON.stringify(recorded.input) ?? "")}`);
      return { content: `replay: the recording has no result for ${shown}`, isError: true };
    }
    const result = recorded.result;
    if (result && result.durationMs !== undefined) {
      if (result.error) throw new AgentError(result.error.code, result.error.message, result.error.status !== undefined ? { status: result.error.status } : {});
      return { content: result.content, isError: result.isError, ...(result.details ? { details: result.details } : {}) };
    }
    if (recorded.ran && this.plan?.style === "event" && this.plan.batch === batch) return this.hang(context.signal);
    this.notes.push(`the recording has no result of ${shown} (seq ${batch?.seq})`);
    return { content: `replay: the recording has no result for ${shown}`, isError: true };
  }

  // ——— stops from outside ———

  private afterLine(line: TraceLine): void {
    if (isState(line, "call_model")) {
      for (const m of this.queued.get(this.recorder.modelCallIndex) ?? []) {
        this.actor?.send({ type: m.source === "steering" ? "inbox.steer" : "inbox.followUp", message: { role: "user", content: m.content } });
      }
    }
    const plan = this.plan;
    if (!plan || this.stopped || line.seq !== plan.atSeq) return;
    this.reached = true;
    if (plan.style === "guard") {
      // The guard of the next (transient) state reads it: set, don't send.
      this.stopped = true;
      if (plan.reason === "user_abort") this.controller.abort();
      else this.expired = true;
      return;
    }
    this.checkStop();
  }

  private checkStop(): void {
    const plan = this.plan;
    if (!plan || this.stopped || plan.style !== "event" || !this.reached) return;
    if (plan.waitFinished !== undefined && this.recorder.finishedInBatch < plan.waitFinished) return;
    this.stop();
  }

  private stop(): void {
    this.stopped = true;
    const reason = this.plan?.reason ?? "user_abort";
    if (this.plan?.style === "before-start") {
      this.controller.abort();
      return;
    }
    if (reason === "timeout") this.fireDeadline();
    else this.actor?.send({ type: "ABORT" });
  }

  private fireDeadline(): void {
    const deadline = this.deadline;
    if (!deadline) {
      this.deadlinePending = true;
      return;
    }
    this.deadline = undefined;
    this.deadlinePending = false;
    deadline.fire();
  }

  /**
   * Waits where the recorded run was stopped from outside, until the replay stops it too. Should the stop not come
   * (the replay went elsewhere), the run is stopped once everything else has settled, so a replay always ends.
   */
  private hang(signal?: AbortSignal): Promise<never> {
    setImmediate(() => {
      if (this.stopped || this.finished) return;
      this.notes.push("the replay waited where the recording has no answer; it was stopped there");
      if (this.plan && this.plan.style !== "before-start") this.stop();
      else {
        this.stopped = true;
        this.actor?.send({ type: "ABORT" });
      }
    });
    return new Promise<never>((_resolve, reject) => {
      if (signal?.aborted) reject(signal.reason);
      signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
  }
}

/** Writes the replayed run's lines the way the trace writer does (without a file), and follows its batches. */
class ReplayRecorder implements EngineObserver {
  readonly lines: TraceLine[] = [];
  details = new TraceDetails({});
  /** The replay's call ids → the model call (index) and position in its response. */
  readonly calls = new Map<string, { callIndex: number; position: number }>();
  modelCallIndex = -1;
  lastStateSeq = -1;
  finishedInBatch = 0;
  private running = new Set<string>();
  private seq = 0;
  private turn = 0;

  constructor(
    private readonly sessionId: string,
    private readonly onLine: (line: TraceLine) => void,
    private readonly onFinished: () => void,
  ) {}

  state(entered: StateEntered): void {
    this.turn = entered.context.turn;
    const { state, context } = entered;
    const line = {
      v: TRACE_VERSION,
      sessionId: this.sessionId,
      seq: this.seq++,
      time: new Date(entered.time).toISOString(),
      kind: "state",
      state,
      turn: this.turn,
      details: this.details.of(entered),
    } as TraceLine;
    this.lines.push(line);
    this.lastStateSeq = line.seq;
    if (state === "call_model") this.modelCallIndex++;
    if (state === "parse_tool_call") context.batch.forEach((r, position) => this.calls.set(r.call.id, { callIndex: this.modelCallIndex, position }));
    if (state === "execute_tool") {
      this.running = new Set(context.batch.filter((r) => r.status === "allowed").map((r) => r.call.id));
      this.finishedInBatch = 0;
    }
    this.onLine(line);
  }

  emitted(event: Parameters<NonNullable<EngineObserver["emitted"]>>[0]): void {
    if (event.type === "retry") {
      const line = {
        v: TRACE_VERSION,
        sessionId: this.sessionId,
        seq: this.seq++,
        time: new Date().toISOString(),
        kind: "retry",
        turn: this.turn,
        attempt: event.attempt,
        delayMs: event.delayMs,
        error: event.error,
      } as TraceLine;
      this.lines.push(line);
      this.onLine(line);
    } else if (event.type === "compaction") {
      const line = {
        v: TRACE_VERSION,
        sessionId: this.sessionId,
        seq: this.seq++,
        time: new Date().toISOString(),
        kind: "compaction",
        turn: this.turn,
        tokensBefore: event.tokensBefore,
        tokensAfter: event.tokensAfter,
      } as TraceLine;
      this.lines.push(line);
      this.onLine(line);
    } else if (event.type === "tool_result" && this.running.has(event.call.id)) {
      this.finishedInBatch++;
      this.onFinished();
    }
  }
}

/** How the recorded run's outside stop is reproduced, if it had one. */
function stopPlan(run: RecordedRun): StopPlan | undefined {
  const done = run.done;
  if (!done) return undefined;
  const reason = detailsOf(done).reason;
  if (reason !== "user_abort" && reason !== "timeout") return undefined;
  const at = run.lines.indexOf(done);
  const before = run.lines[at - 1];
  if (!before) return undefined;
  const lastState = [...run.lines.slice(0, at)].reverse().find((l) => l.kind === "state");
  if (isState(lastState, "append_tool_result")) return { reason, style: "guard", atSeq: lastState.seq - 1 };
  if (reason === "user_abort" && before.seq === 0) return { reason, style: "before-start", atSeq: 0 };
  const plan: StopPlan = { reason, style: "event", atSeq: before.seq };
  const batch = run.batches[run.batches.length - 1];
  if (batch && batch.seq < before.seq) plan.batch = batch;
  if (isState(lastState, "execute_tool") && lastState === before && batch) {
    plan.waitFinished = batch.calls.filter((c) => c.ran && c.result?.durationMs !== undefined).length;
  }
  return plan;
}

function toModelResponse(r: RecordedResponse): ModelResponse {
  return {
    text: r.text,
    toolCalls: r.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments, ...(c.providerId !== undefined ? { providerId: c.providerId } : {}) })),
    finishReason: r.finishReason,
    ...(r.usage ? { usage: r.usage } : {}),
    ...(r.thinking ? { thinking: r.thinking } : {}),
  };
}

/** The reason a recorded deny gave, read back from the call's result ("Permission denied: <reason>. <tool> was not run."). */
function deniedReason(call: RecordedCall): string {
  const content = call.result?.content ?? "";
  const match = /^Permission denied: ([\s\S]*)\. \S+ was not run\.$/.exec(content);
  return match ? match[1] : content || "denied";
}

// ——— comparison ———

const COMPARED_KINDS: ReadonlySet<string> = new Set(["state", "retry", "compaction"]);

function compareRun(run: RecordedRun, outcome: RunOutcome, runCount: number, contextLines: number): Divergence | undefined {
  const runNumber = run.index + 1;
  const replayedAt = (seq: number) => outcome.lines.find((l) => l.seq === seq);
  const extra = (): string[] => [
    ...(runCount > 1 ? [`run ${runNumber} of ${runCount} in the session`] : []),
    ...(outcome.failure ? [`replay: ${outcome.failure}`] : []),
    ...outcome.notes.map((n) => `replay: ${n}`),
  ];
  if (run.problem) {
    const p = run.problem;
    const recorded =
      p.kind === "missing" ? "(missing line)" : p.kind === "no_done" ? "(end of recording)" : p.kind === "unknown_state" ? `unknown state ${JSON.stringify((p.found as { state?: unknown } | undefined)?.state)}` : p.found ? labelOf(p.found) : "(missing line)";
    const replayedLine = replayedAt(p.seq);
    const replayed = replayedLine ? labelOf(replayedLine) : outcome.lines.length ? "(end of run)" : "(not replayed)";
    return divergenceAt(p.seq, runNumber, recorded, replayed, `the trace can't be read as a run: ${p.message}`, [
      ...contextOf(run.lines, outcome.lines, p.seq, contextLines),
      ...extra(),
    ]);
  }
  if (outcome.failure) {
    return divergenceAt(0, runNumber, labelOf(run.lines[0]), "(not replayed)", outcome.failure, extra());
  }
  const recordedLines = withoutGaps(run.lines).filter((l) => COMPARED_KINDS.has(l.kind));
  const replayedLines = outcome.lines;
  const recordedRefs = refsOf(run);
  const replayedRefs = refsOf(analyseRun(replayedLines, run.index));
  let firstDetail: { index: number; reason: string } | undefined;
  const length = Math.max(recordedLines.length, replayedLines.length);
  for (let i = 0; i < length; i++) {
    const r = recordedLines[i];
    const p = replayedLines[i];
    if (!p) {
      return divergenceAt(r.seq, runNumber, labelOf(r), "(end of run)", "the replay stopped before the recording did", [
        ...contextOf(run.lines, replayedLines, r.seq, contextLines),
        ...detailNote(firstDetail, recordedLines),
        ...extra(),
      ]);
    }
    if (!r) {
      const seq = recordedLines.length ? recordedLines[recordedLines.length - 1].seq + 1 : p.seq;
      return divergenceAt(seq, runNumber, "(end of recording)", labelOf(p), "the replay went on after the recording ended", [
        ...contextOf(run.lines, replayedLines, seq, contextLines),
        ...detailNote(firstDetail, recordedLines),
        ...extra(),
      ]);
    }
    const turnR = (r as { turn?: unknown }).turn;
    const turnP = (p as { turn?: unknown }).turn;
    if (labelOf(r) !== labelOf(p) || turnR !== turnP) {
      const reason = labelOf(r) !== labelOf(p) ? `the engine went to ${labelOf(p)} where the recording went to ${labelOf(r)}` : `turn ${String(turnP)} where the recording has turn ${String(turnR)}`;
      return divergenceAt(r.seq, runNumber, labelOf(r), labelOf(p), reason, [
        ...contextOf(run.lines, replayedLines, r.seq, contextLines),
        ...detailNote(firstDetail, recordedLines),
        ...extra(),
      ]);
    }
    if (!firstDetail) {
      const difference = detailDifference(normalise(r, recordedRefs), normalise(p, replayedRefs));
      if (difference) firstDetail = { index: i, reason: difference };
    }
  }
  if (firstDetail) {
    const r = recordedLines[firstDetail.index];
    const p = replayedLines[firstDetail.index];
    return divergenceAt(r.seq, runNumber, labelOf(r), labelOf(p), firstDetail.reason, [...contextOf(run.lines, replayedLines, r.seq, contextLines), ...extra()]);
  }
  return undefined;
}

function divergenceAt(seq: number, run: number, recorded: string, replayed: string, reason: string, context: string[]): Divergence {
  return { seq, run, recorded, replayed, message: `diverged at seq ${seq}: recorded ${recorded}, replayed ${replayed}`, reason, context };
}

function detailNote(first: { index: number; reason: string } | undefined, recorded: TraceLine[]): string[] {
  return first ? [`earlier, at seq ${recorded[first.index].seq}, the states matched but ${first.reason}`] : [];
}

function labelOf(line: TraceLine): string {
  return isState(line) ? line.state : line.kind;
}

function contextOf(recorded: readonly TraceLine[], replayed: readonly TraceLine[], seq: number, count: number): string[] {
  const out: string[] = [];
  const window = (lines: readonly TraceLine[]) => lines.filter((l) => l.seq >= seq - count && l.seq <= seq);
  for (const line of window(recorded)) out.push(`recorded ${describeLine(line)}`);
  for (const line of window(replayed)) out.push(`replayed ${describeLine(line)}`);
  return out;
}

/** Call ids → `model call.position`, so the recording's and the replay's (random) ids compare by position. */
function refsOf(run: RecordedRun): Map<string, string> {
  const refs = new Map<string, string>();
  for (const batch of run.batches) for (const call of batch.calls) if (call.id !== undefined) refs.set(call.id, `call ${batch.callIndex + 1}.${call.position + 1}`);
  return refs;
}

/** What of a line is compared: everything the engine decided, not times, durations or ids. */
function normalise(line: TraceLine, refs: Map<string, string>): Record<string, unknown> {
  const ref = (id: unknown) => (typeof id === "string" ? (refs.get(id) ?? "(unknown call)") : id);
  if (line.kind === "retry") {
    const r = line as unknown as { attempt?: unknown; delayMs?: unknown; error?: { code?: unknown; message?: unknown } };
    return { attempt: r.attempt, delayMs: r.delayMs, error: { code: r.error?.code, message: r.error?.message } };
  }
  if (line.kind === "compaction") {
    const c = line as unknown as { tokensBefore?: unknown; tokensAfter?: unknown };
    return { tokensBefore: c.tokensBefore, tokensAfter: c.tokensAfter };
  }
  const d = detailsOf(line);
  const out: Record<string, unknown> = {};
  const list = (value: unknown) => (Array.isArray(value) ? (value as Array<Record<string, unknown>>) : undefined);
  if (isState(line, "build_context") && "input" in d) out.input = d.input;
  if ("messages" in d) out.messages = d.messages;
  if (d.claimed && typeof d.claimed === "object") out.claimed = d.claimed;
  if (d.compaction && typeof d.compaction === "object") out.compaction = d.compaction;
  if (d.retry === true) out.retry = true;
  const response = d.response as Record<string, unknown> | undefined;
  if (response && typeof response === "object") {
    out.response = {
      text: response.text,
      toolCalls: list(response.toolCalls)?.map((c) => ({ name: c.name, arguments: c.arguments, providerId: c.providerId })),
      finishReason: response.finishReason,
      usage: response.usage,
      thinking: response.thinking,
    };
  }
  const calls = list(d.calls);
  if (calls) out.calls = calls.map((c) => (typeof c === "string" ? ref(c) : { call: ref(c.id), name: c.name, input: c.input }));
  const run = list(d.run);
  if (run) out.run = run.map(ref);
  const permissions = list(d.permissions);
  if (permissions) out.permissions = permissions.map((p) => ({ call: ref(p.toolCallId), name: p.name, decision: p.decision, by: p.by, rule: p.rule, input: p.input }));
  const results = list(d.results);
  if (results) {
    out.results = results.map((r) => ({
      call: ref(r.toolCallId),
      name: r.name,
      content: r.content,
      isError: r.isError,
      details: r.details,
      error: r.error ? { code: (r.error as { code?: unknown }).code, message: (r.error as { message?: unknown }).message } : undefined,
    }));
  }
  const errors = list(d.errors);
  if (errors) out.errors = errors.map((e) => ({ call: ref(e.toolCallId), name: e.name, code: e.code, message: e.message, fatal: e.fatal }));
  if (d.error && typeof d.error === "object") {
    const e = d.error as Record<string, unknown>;
    out.error = { code: e.code, message: e.message, status: e.status };
  }
  if (isState(line, "done")) {
    out.reason = d.reason;
    out.turns = d.turns;
    out.toolCalls = d.toolCalls;
    out.usage = usageOf(d.usage);
    out.text = d.text;
  }
  return out;
}

function usageOf(value: unknown): RunUsage | undefined {
  if (!value || typeof value !== "object") return undefined;
  const u = value as Record<string, unknown>;
  const n = (x: unknown) => (typeof x === "number" ? x : 0);
  return { input: n(u.input), output: n(u.output), cached: n(u.cached), reasoning: n(u.reasoning) };
}

const FIELD_NAMES: Record<string, string> = {
  input: "the request",
  messages: "the number of messages sent to the model",
  claimed: "the queued messages taken in",
  compaction: "the compaction",
  retry: "the retried request",
  response: "the model's output",
  calls: "the tool calls",
  run: "the calls run",
  permissions: "the permission decisions",
  results: "the tool results",
  errors: "the errors",
  error: "the error",
  reason: "the stop reason",
  turns: "the turns",
  toolCalls: "the number of tool calls",
  usage: "the token usage",
  text: "the final text",
  attempt: "the retry attempt",
  delayMs: "the retry delay",
  tokensBefore: "the tokens before compaction",
  tokensAfter: "the tokens after compaction",
};

/** The first field that differs, in words with both values; undefined when the lines match. */
function detailDifference(recorded: Record<string, unknown>, replayed: Record<string, unknown>): string | undefined {
  const keys = [...new Set([...Object.keys(recorded), ...Object.keys(replayed)])];
  for (const key of keys) {
    const a = recorded[key];
    const b = replayed[key];
    if (isDeepStrictEqual(clean(a), clean(b))) continue;
    if (Array.isArray(a) && Array.isArray(b)) {
      for (let i = 0; i < Math.max(a.length, b.length); i++) {
        if (isDeepStrictEqual(clean(a[i]), clean(b[i]))) continue;
        return `${FIELD_NAMES[key] ?? key} differ at item ${i + 1}: recorded ${show(a[i])}, replayed ${show(b[i])}`;
      }
    }
    return `${FIELD_NAMES[key] ?? key} differ: recorded ${show(a)}, replayed ${show(b)}`;
  }
  return undefined;
}

/** JSON's view of a value: undefined fields dropped, so `{ a: undefined }` equals `{}`. */
function clean(value: unknown): unknown {
  return value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as unknown);
}

function show(value: unknown): string {
  return value === undefined ? "(nothing)" : excerpt(JSON.stringify(value) ?? "", 200);
}
