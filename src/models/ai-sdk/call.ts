import type { ModelRequest, ModelStreamEvent } from "../model.js";
import { classifyAiSdkError, type ClassifiedError } from "./error-classification.js";
import type { AiSdkCallOptions, AiSdkLanguageModel, ResolvedAiSdkConfig } from "./options.js";
import { toPrompt, toTool } from "./prompt.js";
import { StreamReader } from "./stream-reader.js";

/** The call options of one model call, in the specification's shapes. */
export function callOptions(config: ResolvedAiSdkConfig, request: ModelRequest, signal: AbortSignal): AiSdkCallOptions {
  return {
    prompt: toPrompt(request.messages),
    ...(request.tools.length > 0 ? { tools: request.tools.map(toTool), toolChoice: { type: "auto" as const } } : {}),
    ...(config.maxTokens !== undefined ? { maxOutputTokens: config.maxTokens } : {}),
    ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
    // The run's `output` as the specification's JSON response format: each provider asks for it its own way.
    ...(request.output ? { responseFormat: { type: "json", schema: request.output.schema, name: request.output.name } } : {}),
    ...(config.providerOptions !== undefined ? { providerOptions: config.providerOptions } : {}),
    ...(Object.keys(config.headers).length > 0 ? { headers: config.headers } : {}),
    abortSignal: signal,
  };
}

/** One `doStream` call and the reading of its stream. */
export class CallAttempt {
  readonly reader = new StreamReader();

  constructor(
    private readonly model: AiSdkLanguageModel,
    private readonly options: AiSdkCallOptions,
    private readonly signal: AbortSignal,
  ) {}

  async *run(): AsyncGenerator<ModelStreamEvent, void, undefined> {
    const { stream } = await this.model.doStream(this.options);
    const reader = stream.getReader();
    // A provider that ignores the signal still stops: its stream is cancelled.
    const onAbort = () => void reader.cancel(this.signal.reason).catch(() => {});
    this.signal.addEventListener("abort", onAbort, { once: true });
    try {
      for (;;) {
        if (this.signal.aborted) throw this.signal.reason;
        const { done, value } = await reader.read();
        if (done) break;
        yield* this.reader.add(value);
      }
      if (this.signal.aborted) throw this.signal.reason;
      yield { type: "response", response: this.reader.response() };
    } finally {
      this.signal.removeEventListener("abort", onAbort);
      // Stops the provider's request when the caller stopped reading early; nothing left to stop after a full read.
      await reader.cancel().catch(() => {});
      reader.releaseLock();
    }
  }

  classify(thrown: unknown): ClassifiedError {
    return classifyAiSdkError(thrown, this.model.provider, this.model.modelId);
  }
}
