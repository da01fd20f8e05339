import { AgentError } from "../../errors/agent-error.js";
import { loadOnFirstUse } from "../load-on-first-use.js";
import type { Model, ModelCallOptions, ModelRequest, ModelStreamEvent } from "../model.js";
import { withRetries } from "../retry-loop.js";
import { resolveAnthropicConfig, type AnthropicEnvironment, type AnthropicModelOptions, type ResolvedAnthropicConfig } from "./options.js";
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
  private attemptWithRetries(
    code: RequestCode,
    body: ReturnType<RequestCode["buildRequestBody"]>,
    signal: AbortSignal,
    earlier: EarlierSegments | undefined,
    streamed: { text: boolean },
  ): AsyncGenerator<ModelStreamEvent, StreamAttempt, undefined> {
    return withRetries({
      settings: this.config,
      signal,
      start: () => new code.StreamAttempt(this.config, body, signal, earlier),
      partial: (attempt) => (attempt.accumulator.hasOutput ? attempt.accumulator.response() : undefined),
      streamed,
      // The joined response is sent by stream(), once the turn is no longer paused.
      skip: (event) => event.type === "response",
    });
  }
}

/** The request code and the Anthropic SDK under it, loaded by the first model call rather than by `import "statecraft"`. */
const loadRequestCode = loadOnFirstUse(() =>
  Promise.all([import("./stream-attempt.js"), import("./request-body.js")]).then(
    ([attempt, body]) => ({ StreamAttempt: attempt.StreamAttempt, buildRequestBody: body.buildRequestBody }),
    (error: unknown) => {
      throw missingSdk(error);
    },
  ),
);
type RequestCode = Awaited<ReturnType<typeof loadRequestCode>>;

/** The SDK is an optional peer dependency: its absence is said with the command that installs it. */
function missingSdk(error: unknown): unknown {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code !== "ERR_MODULE_NOT_FOUND" || !String((error as Error).message).includes("@anthropic-ai/sdk")) return error;
  return new AgentError("MODEL_ERROR", "anthropicModel needs the package @anthropic-ai/sdk: npm install @anthropic-ai/sdk", { cause: error });
}
