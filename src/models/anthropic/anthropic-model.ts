import { AgentError } from "../../errors/agent-error.js";
import type { Model, ModelCallOptions, ModelRequest, ModelResponse, ModelStreamEvent } from "../model.js";
import { retryDelayMs, sleep } from "../openai/index.js";
import { resolveAnthropicConfig, type AnthropicEnvironment, type AnthropicModelOptions, type ResolvedAnthropicConfig } from "./options.js";
import type { buildRequestBody } from "./request-body.js";
import type { EarlierSegments } from "./stream-accumulator.js";
import type { StreamAttempt } from "./stream-attempt.js";

/** How many times one model call continues a turn the API paused (`pause_turn`) before it reports the pause. */
export const MAX_PAUSE_CONTINUATIONS = 10;

/**
 * A Claude model over Anthropic's own Messages API (the official `@anthropic-ai/sdk`, an optional peer dependency
 * loaded by the first model call): thinking blocks kept and sent back with their signatures, prompt caching, server
 * tool pauses continued, overload (529) retried.
 *
 * ```ts
 * const model = anthropicModel({ model: "claude-sonnet-4-5", maxTokens: 8192, cache: true });
 * ```
 * Defaults come from `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL` and `STATECRAFT_MODEL`. Bad options throw `INVALID_OPTIONS`.
 */
export function anthropicModel(options: AnthropicModelOptions, env?: AnthropicEnvironment): Model {
  return new AnthropicMessagesModel(resolveAnthropicConfig(options, env));
}

class AnthropicMessagesModel implements Model {
  readonly name: string;
  readonly contextWindow?: number;
  readonly baseUrl: string;
  readonly sendsKey: boolean;
  readonly provider = "anthropic";

  constructor(private readonly config: ResolvedAnthropicConfig) {
    this.name = config.model;
    this.baseUrl = config.baseUrl;
    this.sendsKey = config.apiKeySource !== "none";
    if (config.contextWindow !== undefined) this.contextWindow = config.contextWindow;
  }

  /**
   * Streams one model call. A turn the API paused (`pause_turn`, a long server tool) is continued at once, its parts
   * joined into one response. Retryable failures (429, 529, 5xx, dropped or stalled streams) are retried up to
   * `maxRetries` times with backoff, each announced by a `retry` event, but never once text reached the caller.
   */
  async *stream(request: ModelRequest, { signal }: ModelCallOptions): AsyncGenerator<ModelStreamEvent, void, undefined> {
    const code = await loadRequestCode();
    let earlier: EarlierSegments | undefined;
    const streamed = { text: false };
    for (let pauses = 0; ; pauses++) {
      const body = code.buildRequestBody(this.config, request, earlier?.blocks);
      const attempt = yield* this.attemptWithRetries(code, body, signal, earlier, streamed);
      const response = attempt.accumulator.response();
      if (attempt.accumulator.rawStopReason !== "pause_turn" || pauses >= MAX_PAUSE_CONTINUATIONS) {
        yield { type: "response", response };
        return;
      }
      earlier = { blocks: attempt.accumulator.allBlocks(), usage: attempt.accumulator.totalUsage() };
    }
  }

  /** One request, retried as the failure allows; returns the attempt that completed (its response not yet sent). */
  private async *attemptWithRetries(
    code: RequestCode,
    body: ReturnType<typeof buildRequestBody>,
    signal: AbortSignal,
    earlier: EarlierSegments | undefined,
    streamed: { text: boolean },
  ): AsyncGenerator<ModelStreamEvent, StreamAttempt, undefined> {
    for (let retry = 0; ; retry++) {
      throwIfAborted(signal);
      const attempt = new code.StreamAttempt(this.config, body, signal, earlier);
      try {
        for await (const event of attempt.run()) {
          if (event.type === "response") continue;
          if (event.type === "text_delta") streamed.text = true;
          yield event;
        }
        return attempt;
      } catch (thrown) {
        throwIfAborted(signal);
        const { error, retryAfterMs } = attempt.classify(thrown);
        const partial = attempt.accumulator.hasOutput ? attempt.accumulator.response() : undefined;
        if (!error.retryable || streamed.text) throw withDetails(error, { attempts: retry + 1, partial });
        if (retry >= this.config.maxRetries) {
          const suffix = ` (gave up after ${retry + 1} attempt${retry === 0 ? "" : "s"}; maxRetries is ${this.config.maxRetries})`;
          throw withDetails(error, { attempts: retry + 1, partial, suffix });
        }
        const delayMs = retryDelayMs(retry + 1, this.config, retryAfterMs);
        yield { type: "retry", attempt: retry + 1, delayMs, error: { code: error.code, message: error.message } };
        await sleep(delayMs, signal).catch(() => throwIfAborted(signal));
      }
    }
  }
}

/** The request code and the Anthropic SDK under it, loaded by the first model call rather than by `import "statecraft"`. */
interface RequestCode {
  StreamAttempt: typeof StreamAttempt;
  buildRequestBody: typeof buildRequestBody;
}
let requestCode: Promise<RequestCode> | undefined;
function loadRequestCode(): Promise<RequestCode> {
  requestCode ??= Promise.all([import("./stream-attempt.js"), import("./request-body.js")]).then(
    ([attempt, body]) => ({ StreamAttempt: attempt.StreamAttempt, buildRequestBody: body.buildRequestBody }),
    (error: unknown) => {
      requestCode = undefined;
      throw missingSdk(error);
    },
  );
  return requestCode;
}

/** The SDK is an optional peer dependency: its absence is said with the command that installs it. */
function missingSdk(error: unknown): unknown {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code !== "ERR_MODULE_NOT_FOUND" || !String((error as Error).message).includes("@anthropic-ai/sdk")) return error;
  return new AgentError("MODEL_ERROR", "anthropicModel needs the package @anthropic-ai/sdk: npm install @anthropic-ai/sdk", { cause: error });
}

/** The caller aborted: end with its reason, as `AbortSignal.throwIfAborted` would. */
function throwIfAborted(signal: AbortSignal): void {
  if (!signal.aborted) return;
  throw signal.reason ?? new DOMException("The model call was aborted", "AbortError");
}

/** The error with how many attempts were made and the output that arrived before it (the engine keeps text). */
function withDetails(error: AgentError, details: { attempts: number; partial?: ModelResponse; suffix?: string }): AgentError {
  return new AgentError(error.code, error.message + (details.suffix ?? ""), {
    ...(error.status !== undefined ? { status: error.status } : {}),
    retryable: error.retryable,
    cause: error.cause,
    data: { ...error.data, attempts: details.attempts, ...(details.partial ? { partial: details.partial } : {}) },
  });
}
