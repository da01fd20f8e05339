import { carriesMedia, MEDIA_REFUSED } from "./content-parts.js";
import { AgentError } from "../../errors/agent-error.js";
import type { Model, ModelCallOptions, ModelRequest, ModelResponse, ModelStreamEvent } from "../model.js";
import { resolveOpenAIConfig, type OpenAIEnvironment, type OpenAIModelOptions, type ResolvedOpenAIConfig } from "./options.js";
import type { buildRequestBody } from "./request-body.js";
import type { retryDelayMs, sleep } from "./retry-policy.js";
import type { StreamAttempt } from "./stream-attempt.js";

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
    const { StreamAttempt, buildRequestBody, retryDelayMs, sleep } = await loadRequestCode();
    const body = buildRequestBody(this.config, request);
    for (let retry = 0; ; retry++) {
      throwIfAborted(signal);
      const attempt = new StreamAttempt(this.config, body, signal);
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
        const partial = attempt.accumulator.hasOutput ? attempt.accumulator.response() : undefined;
        if (!error.retryable || textStreamed) {
          const refusedMedia = error.status !== undefined && error.status >= 400 && error.status < 500 && error.status !== 401 && error.status !== 429 && carriesMedia(request.messages);
          throw withDetails(error, { attempts: retry + 1, partial, ...(refusedMedia ? { suffix: MEDIA_REFUSED } : {}) });
        }
        if (retry >= this.config.maxRetries) {
          throw withDetails(error, {
            attempts: retry + 1,
            partial,
            suffix: ` (gave up after ${retry + 1} attempt${retry === 0 ? "" : "s"}; maxRetries is ${this.config.maxRetries})`,
          });
        }
        const delayMs = retryDelayMs(retry + 1, this.config, retryAfterMs);
        yield { type: "retry", attempt: retry + 1, delayMs, error: { code: error.code, message: error.message } };
        await sleep(delayMs, signal).catch(() => throwIfAborted(signal));
      }
    }
  }
}

/**
 * The request code and the OpenAI SDK under it, loaded by the first model call rather than by `import "statecraft"`:
 * the SDK is over half of the package's modules, and a program with a scripted model never needs it.
 */
interface RequestCode {
  StreamAttempt: typeof StreamAttempt;
  buildRequestBody: typeof buildRequestBody;
  retryDelayMs: typeof retryDelayMs;
  sleep: typeof sleep;
}
let requestCode: Promise<RequestCode> | undefined;
function loadRequestCode(): Promise<RequestCode> {
  requestCode ??= Promise.all([import("./stream-attempt.js"), import("./request-body.js"), import("./retry-policy.js")]).then(([attempt, body, retry]) => ({
    StreamAttempt: attempt.StreamAttempt,
    buildRequestBody: body.buildRequestBody,
    retryDelayMs: retry.retryDelayMs,
    sleep: retry.sleep,
  }));
  return requestCode;
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
    data: {
      ...error.data,
      attempts: details.attempts,
      ...(details.partial ? { partial: details.partial } : {}),
    },
  });
}
