import OpenAI from "openai";
import type { ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";
import { AgentError } from "../../errors/agent-error.js";
import { AttemptLimits } from "../attempt-limits.js";
import type { ModelStreamEvent } from "../model.js";
import { classifyModelError, type ClassifiedError } from "./error-classification.js";
import { observedFetch } from "./observed-fetch.js";
import type { ResolvedOpenAIConfig } from "./options.js";
import { StreamAccumulator } from "./stream-accumulator.js";
import type { WireRequestBody } from "./wire-types.js";

/** Thrown inside an attempt when its own controller stopped it; `classify()` says why. */
class AttemptStopped extends Error {}

/**
 * One HTTP request of a model call and its stream. The caller's signal, the idle timer (no bytes for
 * `idleTimeoutMs`) and the attempt's time limit (`timeoutMs`) all abort the same request; `classify()` then tells
 * which one it was. The SDK runs with `maxRetries: 0`: retrying is the model's job (see openai-model.ts).
 */
export class StreamAttempt {
  readonly accumulator = new StreamAccumulator();
  private readonly limits: AttemptLimits;
  private errorBody: string | undefined;

  constructor(
    private readonly config: ResolvedOpenAIConfig,
    private readonly body: WireRequestBody,
    signal: AbortSignal,
  ) {
    this.limits = new AttemptLimits(signal, config);
  }

  /** Streams text and thinking deltas, then the response. Throws what went wrong, to be passed to `classify()`. */
  async *run(): AsyncGenerator<ModelStreamEvent, void, undefined> {
    const { config, limits } = this;
    const { controller } = limits;
    limits.start();

    const client = new OpenAI({
      apiKey: config.apiKey,
      baseURL: config.baseURL,
      maxRetries: 0,
      timeout: config.timeoutMs,
      defaultHeaders: config.headers,
      logLevel: "off",
      fetch: observedFetch({ onActivity: () => limits.touch(), onErrorBody: (text) => (this.errorBody = text) }),
    });

    try {
      const { data: stream, response } = await client.chat.completions
        .create(this.body as unknown as ChatCompletionCreateParamsStreaming, { signal: controller.signal })
        .withResponse();

      if (isJsonResponse(response)) {
        // A server that ignored `stream: true`: its one JSON body is a stream of one chunk.
        const completion: unknown = await response.json();
        this.stopIfInterrupted();
        yield* this.accumulator.addCompletion(completion);
      } else {
        for await (const chunk of stream) {
          yield* this.accumulator.addChunk(chunk);
        }
        // The SDK ends the iteration quietly when its request is aborted.
        this.stopIfInterrupted();
        if (this.accumulator.chunks === 0) {
          throw new AgentError("MODEL_ERROR", `${config.baseURL} closed the stream without sending any data`, { retryable: true });
        }
      }
      yield { type: "response", response: this.accumulator.response() };
    } finally {
      limits.stop();
    }
  }

  /** What went wrong, as an AgentError: the idle timer and time limit first, since their aborts look like any other. */
  classify(thrown: unknown): ClassifiedError {
    const limit = this.limits.limitError(this.config.baseURL, thrown);
    if (limit !== undefined) return { error: limit };
    return classifyModelError(thrown, {
      baseURL: this.config.baseURL,
      model: this.config.model,
      apiKey: this.config.apiKey,
      apiKeySource: this.config.apiKeySource,
      ...(this.errorBody !== undefined ? { errorBody: this.errorBody } : {}),
    });
  }

  private stopIfInterrupted(): void {
    if (this.limits.controller.signal.aborted) throw new AttemptStopped("the model request was stopped");
  }
}

function isJsonResponse(response: Response): boolean {
  const type = response.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase() ?? "";
  return type === "application/json" || type.endsWith("+json");
}
