import { carriesMedia, MEDIA_REFUSED } from "./content-parts.js";
import { loadOnFirstUse } from "../load-on-first-use.js";
import type { Model, ModelCallOptions, ModelRequest, ModelStreamEvent } from "../model.js";
import { withRetries } from "../retry-loop.js";
import { resolveOpenAIConfig, type OpenAIEnvironment, type OpenAIModelOptions, type ResolvedOpenAIConfig } from "./options.js";

/**
 * A model served by any OpenAI-compatible Chat Completions endpoint: OpenAI, vLLM, Ollama, llama.cpp, LM Studio,
 * OpenRouter, DeepSeek, Groq, Together, Mistral, Azure, Gemini's compatible endpoint.
 *
 * ```ts
 * const model = openaiModel({ model: "qwen2.5:7b", baseURL: "http://localhost:11434/v1" });
 * ```
 * Defaults come from `OPENAI_API_KEY`, `OPENAI_BASE_URL` and `STATECRAFT_MODEL`. Bad options throw `INVALID_OPTIONS`.
 */
export function openaiModel(options: OpenAIModelOptions = {}, env?: OpenAIEnvironment): Model {
  return new OpenAIChatModel(resolveOpenAIConfig(options, env));
}

class OpenAIChatModel implements Model {
  readonly name: string;
  // The OpenAI API, or a server speaking it: "openai", as the GenAI conventions name both.
  readonly provider = "openai";
  readonly contextWindow?: number;
  readonly baseUrl: string;
  readonly sendsKey: boolean;

  constructor(private readonly config: ResolvedOpenAIConfig) {
    this.name = config.model;
    this.baseUrl = config.baseURL;
    this.sendsKey = config.apiKeySource !== "none";
    if (config.contextWindow !== undefined) this.contextWindow = config.contextWindow;
  }

  /**
   * Streams one model call. Retryable failures (429, 408, 409, 5xx, dropped or stalled streams) are retried up to
   * `maxRetries` times with backoff, each announced by a `retry` event, but never once text reached the caller
   * (the caller would see it twice). Other failures throw an AgentError at once.
   */
  async *stream(request: ModelRequest, { signal }: ModelCallOptions): AsyncGenerator<ModelStreamEvent, void, undefined> {
    const { StreamAttempt, buildRequestBody } = await loadRequestCode();
    const body = buildRequestBody(this.config, request);
    yield* withRetries({
      settings: this.config,
      signal,
      start: () => new StreamAttempt(this.config, body, signal),
      partial: (attempt) => (attempt.accumulator.hasOutput ? attempt.accumulator.response() : undefined),
      failureSuffix: (error) => {
        const refusedMedia = error.status !== undefined && error.status >= 400 && error.status < 500 && error.status !== 401 && error.status !== 429 && carriesMedia(request.messages);
        return refusedMedia ? MEDIA_REFUSED : undefined;
      },
    });
  }
}

/**
 * The request code and the OpenAI SDK under it, loaded by the first model call rather than by `import "statecraft"`:
 * the SDK is over half of the package's modules, and a program with a scripted model never needs it.
 */
const loadRequestCode = loadOnFirstUse(async () => {
  const [attempt, body] = await Promise.all([import("./stream-attempt.js"), import("./request-body.js")]);
  return { StreamAttempt: attempt.StreamAttempt, buildRequestBody: body.buildRequestBody };
});
