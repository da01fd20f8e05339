import { isDeepStrictEqual } from "node:util";
import { createActor, type Actor } from "xstate";
import { buildContext, type BuildContextInput, type BuiltContext } from "../actors/build-context.js";
import { defaultEffects, effectsActor } from "../actors/effects.js";
import { AgentError } from "../errors/agent-error.js";
import { engineMachine } from "../machine/engine.js";
import { observeEngine } from "../machine/observe.js";
import type { BeforeToolCallResult, ModelErrorAction } from "../hooks.js";
import type { Inbox } from "../machine/context.js";
import type { Message, ToolCall } from "../models/messages.js";
import type { Model, ModelRequest, ModelResponse, ModelStreamEvent } from "../models/model.js";
import type { QueryOptions, QueueMode } from "../options.js";
import type { PermissionMode, PermissionPolicy, PermissionRequest, PolicyVerdict } from "../permissions/types.js";
import { prepare } from "../query.js";
import { defineTool, type AnyTool, type ToolContext, type ToolOutput } from "../tools/define-tool.js";
import { checkSessionId } from "../record/transcript.js";
import { TraceDetails } from "../record/details.js";
import type { AnyTraceLine } from "../record/format.js";
import {
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
import { excerpt } from "./timeline.js";
import { ReplayRecorder } from "./replay-recorder.js";
import { stopPlan, type StopPlan } from "./replay-stop.js";

/** What one replayed run produced. */
export interface RunOutcome {
  lines: AnyTraceLine[];
  /** Things the stand-ins noticed (a call the recording never made, a crash): context for a divergence. */
  notes: string[];
  /** Why the run could not be replayed at all. */
  failure?: string;
}

/** Hooks whose effect the trace records, so the replay can play them back. */
const PLAYED_HOOKS: ReadonlySet<string> = new Set(["onModelError", "shouldStopAfterTurn", "beforeToolCall", "afterToolCall", "transformContext"]);

/** The deadline timer's delay in a replay: a marker the replay's clock recognises (it is never waited for). */
const DEADLINE_MARKER = 2_000_000_017;

export async function replayRun(run: RecordedRun, sessionId: string, summaries: Array<string | undefined>): Promise<RunOutcome> {
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

  private nextRecordedState(seq: number): AnyTraceLine | undefined {
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
      // Recorded verdicts need no parsing.
      ready: Promise.resolve(),
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
    // A call a crash interrupted gave what the recovered run told the model it gave.
    if (result && (result.durationMs !== undefined || result.interrupted)) {
      if (result.error) throw new AgentError(result.error.code, result.error.message, result.error.status !== undefined ? { status: result.error.status } : {});
      return { content: result.content, isError: result.isError, ...(result.details ? { details: result.details } : {}) };
    }
    if (recorded.ran && this.plan?.style === "event" && this.plan.batch === batch) return this.hang(context.signal);
    this.notes.push(`the recording has no result of ${shown} (seq ${batch?.seq})`);
    return { content: `replay: the recording has no result for ${shown}`, isError: true };
  }

  // ——— stops from outside ———

  private afterLine(line: AnyTraceLine): void {
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
