import { loadOnFirstUse } from "../load-on-first-use.js";
import type { Model, ModelCallOptions, ModelRequest, ModelStreamEvent } from "../model.js";
import { withRetries } from "../retry-loop.js";
import { resolveAiSdkConfig, type AiSdkLanguageModel, type AiSdkModelOptions, type ResolvedAiSdkConfig } from "./options.js";

/**
 * Any AI SDK language model (specification v3 of AI SDK 6's provider packages, or v2 of AI SDK 5) as a statecraft
 * model: Gemini, Bedrock, Vertex, Mistral, Groq, Claude and the rest, through their own wires.
 *
 * ```ts
 * import { google } from "@ai-sdk/google";
 * const model = aiSdkModel(google("gemini-2.5-flash"), { contextWindow: 1_000_000 });
 * ```
 * Provider metadata of each streamed part (Gemini's thought signatures, Anthropic's thinking signatures) goes back
 * with it on the next request. statecraft loads no AI SDK package itself: the model brings its own.
 */
export function aiSdkModel(languageModel: AiSdkLanguageModel, options?: AiSdkModelOptions): Model {
  return new AiSdkAdapter(languageModel, resolveAiSdkConfig(languageModel, options));
}

class AiSdkAdapter implements Model {
  readonly name: string;
  readonly contextWindow?: number;

  constructor(
    private readonly languageModel: AiSdkLanguageModel,
    private readonly config: ResolvedAiSdkConfig,
  ) {
    this.name = config.name;
    if (config.contextWindow !== undefined) this.contextWindow = config.contextWindow;
  }

  /**
   * Streams one model call. Retryable failures are retried up to `maxRetries` times with backoff, each announced by
   * a `retry` event, but never once text reached the caller. The signal aborts the provider's request.
   */
  async *stream(request: ModelRequest, { signal }: ModelCallOptions): AsyncGenerator<ModelStreamEvent, void, undefined> {
    const code = await loadCallCode();
    const options = code.callOptions(this.config, request, signal);
    yield* withRetries({
      settings: this.config,
      signal,
      start: () => new code.CallAttempt(this.languageModel, options, signal),
      partial: (attempt) => (attempt.reader.hasOutput ? attempt.reader.response() : undefined),
    });
  }
}

/** The prompt mapping and stream reading, loaded by the first model call rather than by `import "statecraft"`. */
const loadCallCode = loadOnFirstUse(() => import("./call.js").then((m) => ({ CallAttempt: m.CallAttempt, callOptions: m.callOptions })));
