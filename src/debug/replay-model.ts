import { AgentError } from "../errors/agent-error.js";
import type { Model, ModelResponse, ModelStreamEvent } from "../models/model.js";
import { detailsOf, type RecordedModelCall, type RecordedResponse } from "./recording.js";
import type { ReplayShared } from "./replay-shared.js";

/** The stand-in model of a replay: each call streams and answers what the recorded call did, in order. */
export class RecordedModel {
  private calls = 0;

  constructor(private readonly r: ReplayShared) {}

  model(): Model {
    return { name: this.r.options.model ?? "replay", stream: (_request, { signal }) => this.play(signal) };
  }

  private async *play(signal: AbortSignal): AsyncGenerator<ModelStreamEvent> {
    const { recording, notes, stops } = this.r;
    const index = this.calls++;
    const call = recording.modelCalls[index];
    if (!call) {
      notes.push(`the replay made model call #${index + 1}, which the recording does not have`);
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
        await stops.hang(signal);
        return;
      default:
        notes.push(`the recording ends before the outcome of model call #${index + 1} (seq ${call.seq})`);
        // The recording stops here (a crash, or a run still going): so does the replay.
        if (!recording.done && index === recording.modelCalls.length - 1) await stops.hang(signal);
        throw new AgentError("MODEL_ERROR", `replay: the recording ends before this model call's outcome`);
    }
  }

  /** The text a call streamed: its response's, or what was cut off (the done line keeps it). */
  private streamedText(call: RecordedModelCall): string {
    const { recording } = this.r;
    const outcome = call.outcome;
    if (outcome.kind === "response") return outcome.response.text;
    if (outcome.kind === "cut") return outcome.text ?? "";
    const last = call.index === recording.modelCalls.length - 1;
    const doneText = recording.done ? detailsOf(recording.done).text : undefined;
    if (last && typeof doneText === "string") return doneText;
    // What a failed request streamed before a retry or a continue is not in the trace; that there was some is.
    return "(text streamed before the request failed; not in the trace)";
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
