import { AgentError } from "../../errors/agent-error.js";
import type { Model, ModelCallOptions, ModelRequest, ModelResponse, ModelStreamEvent } from "../model.js";
import { retryDelayMs, sleep } from "../openai/index.js";
import type { CallAttempt, callOptions } from "./call.js";
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
    for (let retry = 0; ; retry++) {
      throwIfAborted(signal);
      const attempt = new code.CallAttempt(this.languageModel, options, signal);
      let textStreamed = false;
      try {
        for await (const event of attempt.run()) {
          if (event.type === "text_delta") textStreamed = true;
          yield event;
        }
        return;
      } catch (thrown) {
        throwIfAborted(signal);
        const { error, retryAfterMs } = attempt.classify(thrown);
        const partial = attempt.reader.hasOutput ? attempt.reader.response() : undefined;
        if (!error.retryable || textStreamed) throw withDetails(error, { attempts: retry + 1, partial });
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

/** The prompt mapping and stream reading, loaded by the first model call rather than by `import "statecraft"`. */
interface CallCode {
  CallAttempt: typeof CallAttempt;
  callOptions: typeof callOptions;
}
let callCode: Promise<CallCode> | undefined;
function loadCallCode(): Promise<CallCode> {
  callCode ??= import("./call.js").then((m) => ({ CallAttempt: m.CallAttempt, callOptions: m.callOptions }));
  return callCode;
}

function throwIfAborted(signal: AbortSignal): void {
  if (!signal.aborted) return;
  throw signal.reason ?? new DOMException("The model call was aborted", "AbortError");
}

function withDetails(error: AgentError, details: { attempts: number; partial?: ModelResponse; suffix?: string }): AgentError {
  return new AgentError(error.code, error.message + (details.suffix ?? ""), {
    ...(error.status !== undefined ? { status: error.status } : {}),
    retryable: error.retryable,
    cause: error.cause,
    data: { ...error.data, attempts: details.attempts, ...(details.partial ? { partial: details.partial } : {}) },
  });
}
