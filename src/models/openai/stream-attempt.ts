import OpenAI from "openai";
import type { ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";
import { AgentError } from "../../errors/agent-error.js";
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
  private readonly controller = new AbortController();
  private idleFired = false;
  private timeoutFired = false;
  private errorBody: string | undefined;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly config: ResolvedOpenAIConfig,
    private readonly body: WireRequestBody,
    private readonly signal: AbortSignal,
  ) {}

  /** Streams text and thinking deltas, then the response. Throws what went wrong, to be passed to `classify()`. */
  async *run(): AsyncGenerator<ModelStreamEvent, void, undefined> {
    const { config, controller } = this;
    const onAbort = () => controller.abort(this.signal.reason);
    this.signal.addEventListener("abort", onAbort, { once: true });
    if (this.signal.aborted) controller.abort(this.signal.reason);
    const deadline = setTimeout(() => {
      this.timeoutFired = true;
      controller.abort();
    }, config.timeoutMs);
    this.touch();

    const client = new OpenAI({
      apiKey: config.apiKey,
      baseURL: config.baseURL,
      maxRetries: 0,
      timeout: config.timeoutMs,
      defaultHeaders: config.headers,
      logLevel: "off",
      fetch: observedFetch({ onActivity: () => this.touch(), onErrorBody: (text) => (this.errorBody = text) }),
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
      clearTimeout(deadline);
      clearTimeout(this.idleTimer);
      this.signal.removeEventListener("abort", onAbort);
      // Closes the connection when the caller stopped reading early; a no-op after a complete stream.
      controller.abort();
    }
  }

  /** What went wrong, as an AgentError: the idle timer and time limit first, since their aborts look like any other. */
  classify(thrown: unknown): ClassifiedError {
    if (this.idleFired) {
      return {
        error: new AgentError(
          "MODEL_ERROR",
          `${this.config.baseURL} sent nothing for ${this.config.idleTimeoutMs} ms (idleTimeoutMs); the stream stalled`,
          { retryable: true, cause: thrown },
        ),
      };
    }
    if (this.timeoutFired) {
      return {
        error: new AgentError(
          "MODEL_ERROR",
          `the request to ${this.config.baseURL} did not finish within ${this.config.timeoutMs} ms (timeoutMs)`,
          { retryable: true, cause: thrown },
        ),
      };
    }
    return classifyModelError(thrown, {
      baseURL: this.config.baseURL,
      model: this.config.model,
      apiKey: this.config.apiKey,
      apiKeySource: this.config.apiKeySource,
      ...(this.errorBody !== undefined ? { errorBody: this.errorBody } : {}),
    });
  }

  private stopIfInterrupted(): void {
    if (this.controller.signal.aborted) throw new AttemptStopped("the model request was stopped");
  }

  /** Restarts the idle timer: bytes arrived. */
  private touch(): void {
    clearTimeout(this.idleTimer);
    if (this.controller.signal.aborted) return;
    this.idleTimer = setTimeout(() => {
      this.idleFired = true;
      this.controller.abort();
    }, this.config.idleTimeoutMs);
  }
}

function isJsonResponse(response: Response): boolean {
  const type = response.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase() ?? "";
  return type === "application/json" || type.endsWith("+json");
}
