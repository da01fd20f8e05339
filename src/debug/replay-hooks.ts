import { isDeepStrictEqual } from "node:util";
import type { BeforeToolCallResult, ModelErrorAction } from "../hooks.js";
import type { ToolCall } from "../models/messages.js";
import type { QueryOptions } from "../options.js";
import type { AnyTraceLine } from "../record/format.js";
import { isState } from "./recording.js";
import type { ReplayShared } from "./replay-shared.js";

/** Hooks whose effect the trace records, so the replay can play them back. */
const PLAYED_HOOKS: ReadonlySet<string> = new Set(["onModelError", "shouldStopAfterTurn", "beforeToolCall", "afterToolCall", "transformContext"]);

/** Hooks are code: the replay's stand-ins do what the trace shows the recorded ones did. */
export class RecordedHooks {
  private summaries = 0;

  constructor(
    private readonly r: ReplayShared,
    private readonly compactionSummaries: Array<string | undefined>,
  ) {}

  /** The stand-ins of the hooks the recorded run had. */
  options(): Pick<QueryOptions, "onModelError" | "shouldStopAfterTurn" | "beforeToolCall"> {
    const hooks = this.r.options.hooks;
    return {
      ...(hooks.includes("onModelError") ? { onModelError: () => this.recordedRecovery() } : {}),
      ...(hooks.includes("shouldStopAfterTurn") ? { shouldStopAfterTurn: () => this.recordedStopAfterTurn() } : {}),
      ...(hooks.includes("beforeToolCall") ? { beforeToolCall: (call: ToolCall) => this.recordedBeforeToolCall(call) } : {}),
    };
  }

  /** What the replay says of the recorded hooks it cannot play back, if any. */
  unplayedNote(): string | undefined {
    const unplayed = this.r.options.hooks.filter((h) => !PLAYED_HOOKS.has(h));
    if (unplayed.length === 0) return undefined;
    return `the recorded run had hooks (${unplayed.join(", ")}) whose effect the trace does not hold; the replay runs without them`;
  }

  /** onModelError: what the recorded run did after this recover line (a retry, a continue, or the end). */
  private recordedRecovery(): ModelErrorAction {
    const next = this.nextRecordedState(this.r.recorder.lastStateSeq);
    if (isState(next, "call_model")) return { action: "retry" };
    if (isState(next, "build_context")) return { action: "continue" };
    return { action: "abort" };
  }

  /** shouldStopAfterTurn: true where the recorded run went from this build_context straight to done. */
  private recordedStopAfterTurn(): boolean {
    return isState(this.nextRecordedState(this.r.recorder.lastStateSeq), "done");
  }

  /** beforeToolCall: the block, edit or failure the recording shows for this call. */
  private recordedBeforeToolCall(call: ToolCall): BeforeToolCallResult {
    const where = this.r.recorder.calls.get(call.id);
    const recorded = where ? this.r.recording.batches.find((b) => b.callIndex === where.callIndex)?.calls[where.position] : undefined;
    if (!recorded) return undefined;
    const content = recorded.result?.content ?? "";
    if (!recorded.permission && content.startsWith("Blocked: ")) return { block: true, reason: content.slice("Blocked: ".length) };
    const failed = recorded.result?.error;
    if (!recorded.permission && failed?.code === "HOOK_FAILED") throw new Error(failed.message.replace(/^hook beforeToolCall failed: /, ""));
    const decided = recorded.permission?.input;
    if (decided !== undefined && !isDeepStrictEqual(decided, call.input)) return { input: decided };
    return undefined;
  }

  /** `summarize`: compaction summarises with the recorded summary, in order. */
  recordedSummary(): string {
    const summary = this.compactionSummaries[this.summaries++];
    if (summary !== undefined) return summary;
    this.r.notes.push("a compaction's summary is neither in the trace nor in the session's transcript; the replay summarises with a stand-in text");
    return "(the summary of this compaction is not in the trace)";
  }

  private nextRecordedState(seq: number): AnyTraceLine | undefined {
    return this.r.recording.lines.slice(seq + 1).find((l) => l.kind === "state");
  }
}
