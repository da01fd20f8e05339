import { buildContext, type BuildContextInput, type BuiltContext } from "../actors/build-context.js";
import { AgentError } from "../errors/agent-error.js";
import type { Inbox } from "../machine/context.js";
import type { Message } from "../models/messages.js";
import type { QueueMode } from "../options.js";
import { detailsOf, isState, readError } from "./recording.js";
import { hasRequest } from "./blobs.js";
import type { RecordedPermissions } from "./replay-permissions.js";
import type { ReplayShared } from "./replay-shared.js";

/** A message queued during the recorded run, sent to the replay where the recorded one was taken. */
export interface QueuedMessage {
  source: "steering" | "follow_up";
  content: string;
}

/**
 * The conversation a replayed run starts from and builds: the continued session's earlier messages (stand-ins), the
 * messages queued during the run, and each build_context as recorded (its failure, its stop).
 */
export class RecordedContext {
  constructor(
    private readonly r: ReplayShared,
    private readonly permissions: RecordedPermissions,
  ) {}

  /** A continued session's earlier conversation is not in this run's lines: stand-ins of the recorded length. */
  placeholderHistory(): Message[] {
    const { recording, options } = this.r;
    const first = recording.modelCalls[0]?.messages;
    if (!options.continued || first === undefined) return [];
    const firstCall = recording.modelCalls[0];
    const claimed = (detailsOf(recording.lines[firstCall.seq]).claimed as { messages?: unknown[] } | undefined)?.messages?.length ?? 0;
    const count = Math.max(0, first - (this.addsRequest() ? 1 : 0) - (options.systemPrompt ? 1 : 0) - claimed);
    return Array.from({ length: count }, (_, i) => ({ role: "user" as const, content: `(earlier message ${i + 1} of the session, not in this run's trace)` }));
  }

  /**
   * Messages a session queued during the recorded run (call_model's `claimed`): those claimed by the first call were
   * queued before the run; a later one is sent when the model call before its claim starts, early enough for the
   * engine to take it where it did.
   */
  queuedMessages(): { initial: Inbox; later: Map<number, QueuedMessage[]>; steeringMode: QueueMode; followUpMode: QueueMode } {
    const { recording } = this.r;
    const initial: Inbox = { steering: [], followUp: [] };
    const later = new Map<number, QueuedMessage[]>();
    let steeringMode: QueueMode = "one-at-a-time";
    let followUpMode: QueueMode = "one-at-a-time";
    for (const call of recording.modelCalls) {
      const claimed = (detailsOf(recording.lines[call.seq]).claimed ?? undefined) as { source?: unknown; messages?: unknown } | undefined;
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

  /** The `buildContext` effect of a replay. */
  async build(input: BuildContextInput, signal: AbortSignal): Promise<BuiltContext> {
    const { recording, recorder, stops } = this.r;
    const at = recorder.lastStateSeq;
    const recordedError = this.buildFailureAt(at);
    if (recordedError) throw new AgentError(recordedError.code, recordedError.message, recordedError.status !== undefined ? { status: recordedError.status } : {});
    if (stops.plan?.style === "event" && stops.plan.atSeq === at && isState(recording.lines[at], "build_context")) await stops.hang(signal);
    if (!input.first) return buildContext(input, signal);
    // Never the transcript: a continued session's earlier conversation is given (placeholders), or there is none.
    const built = await buildContext({ ...input, history: input.history ?? [] }, signal);
    const messages = built.messages ?? [];
    // An empty request with a given history adds no user message (the fork rule): a recorded run that had one gets it.
    if (this.addsRequest() && input.userInput === "") messages.push({ role: "user", content: "" });
    return { ...built, policy: this.permissions.policy() };
  }

  /** Whether the run's first build added the request as a user message (all runs but a fork given no prompt). */
  private addsRequest(): boolean {
    return hasRequest(this.r.recording);
  }

  /** The recorded error of the build that began at this seq (a build_context line followed by recover with an error). */
  private buildFailureAt(seq: number) {
    const line = this.r.recording.lines[seq];
    if (!isState(line, "build_context")) return undefined;
    const next = this.r.recording.lines.slice(seq + 1).find((l) => l.kind === "state");
    if (!isState(next, "recover")) return undefined;
    return readError(detailsOf(next).error);
  }
}
