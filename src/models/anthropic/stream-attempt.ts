import Anthropic from "@anthropic-ai/sdk";
import type { MessageCreateParamsStreaming } from "@anthropic-ai/sdk/resources/messages";
import { AgentError } from "../../errors/agent-error.js";
import { AttemptLimits } from "../attempt-limits.js";
import type { ModelStreamEvent } from "../model.js";
import { observedFetch } from "../openai/index.js";
import { classifyAnthropicError, type ClassifiedError } from "./error-classification.js";
import type { ResolvedAnthropicConfig } from "./options.js";
import { StreamAccumulator, type EarlierSegments } from "./stream-accumulator.js";
import type { WireRequestBody } from "./wire-types.js";

/**
 * One HTTP request of a model call and its stream. The caller's signal, the idle timer (no bytes for
 * `idleTimeoutMs`) and the attempt's time limit (`timeoutMs`) all abort the same request; `classify()` then tells
 * which one it was. The SDK runs with `maxRetries: 0`: retrying is the model's job (see anthropic-model.ts).
 */
export class StreamAttempt {
  readonly accumulator: StreamAccumulator;
  private readonly limits: AttemptLimits;

  constructor(
    private readonly config: ResolvedAnthropicConfig,
    private readonly body: WireRequestBody,
    signal: AbortSignal,
    earlier?: EarlierSegments,
  ) {
    this.accumulator = new StreamAccumulator(earlier);
    this.limits = new AttemptLimits(signal, config);
  }

  /** Streams text and thinking deltas, then the response. Throws what went wrong, to be passed to `classify()`. */
  async *run(): AsyncGenerator<ModelStreamEvent, void, undefined> {
    const { config, limits } = this;
    const { controller } = limits;
    limits.start();

    const client = new Anthropic({
      // Always given, so the SDK never looks for credentials of its own (environment, profile files) to send here.
      apiKey: config.apiKey,
      baseURL: config.baseUrl,
      maxRetries: 0,
      timeout: config.timeoutMs,
      defaultHeaders: config.headers,
      logLevel: "off",
      fetch: observedFetch({ onActivity: () => limits.touch(), onErrorBody: () => {} }),
    });

    try {
      const stream = await client.messages.create(this.body as unknown as MessageCreateParamsStreaming, { signal: controller.signal });
      for await (const event of stream) {
        yield* this.accumulator.add(event);
      }
      // The SDK ends the iteration quietly when its request is aborted.
      if (controller.signal.aborted) throw new AgentError("MODEL_ERROR", "the model request was stopped");
      if (!this.accumulator.complete) {
        throw new AgentError("MODEL_ERROR", `${config.baseUrl} closed the stream before the response ended (no message_stop)`, { retryable: true });
      }
      yield { type: "response", response: this.accumulator.response() };
    } finally {
      limits.stop();
    }
  }

  /** What went wrong, as an AgentError: the idle timer and time limit first, since their aborts look like any other. */
  classify(thrown: unknown): ClassifiedError {
    const limit = this.limits.limitError(this.config.baseUrl, thrown);
    if (limit !== undefined) return { error: limit };
    const { baseUrl, model, apiKey, apiKeySource } = this.config;
    return classifyAnthropicError(thrown, { baseUrl, model, apiKey, apiKeySource });
  }
}
