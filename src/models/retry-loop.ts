import { AgentError } from "../errors/agent-error.js";
import type { ModelResponse, ModelStreamEvent } from "./model.js";
import { retryDelayMs, sleep, type BackoffSettings } from "./openai/retry-policy.js";

/** One try of a model call: its events, and what a failure of it means. */
export interface RetriedAttempt {
  run(): AsyncIterable<ModelStreamEvent>;
  classify(thrown: unknown): { error: AgentError; retryAfterMs?: number };
}

/** How a provider's model call is retried. */
export interface RetryPlan<A extends RetriedAttempt> {
  settings: BackoffSettings & { maxRetries: number };
  signal: AbortSignal;
  /** A fresh attempt of the same request. */
  start(): A;
  /** The output the failed attempt received before failing, if any (the engine keeps its text). */
  partial(attempt: A): ModelResponse | undefined;
  /** Whether text reached the caller; shared by every request of one model call (a turn continued after a pause). */
  streamed?: { text: boolean };
  /** Events the provider does not pass on (it sends its own). */
  skip?(event: ModelStreamEvent): boolean;
  /** Words added to a failure that is not retried, such as a hint of what the server refused. */
  failureSuffix?(error: AgentError): string | undefined;
}

/**
 * Runs attempts until one completes and returns it. Retryable failures are retried up to `maxRetries` times with
 * backoff, each announced by a `retry` event, but never once text reached the caller (the caller would see it twice).
 * Other failures throw an AgentError at once, with how many attempts were made.
 */
export async function* withRetries<A extends RetriedAttempt>(plan: RetryPlan<A>): AsyncGenerator<ModelStreamEvent, A, undefined> {
  const { settings, signal } = plan;
  const streamed = plan.streamed ?? { text: false };
  for (let retry = 0; ; retry++) {
    throwIfAborted(signal);
    const attempt = plan.start();
    try {
      for await (const event of attempt.run()) {
        if (plan.skip?.(event)) continue;
        if (event.type === "text_delta") streamed.text = true;
        yield event;
      }
      return attempt;
    } catch (thrown) {
      throwIfAborted(signal);
      const { error, retryAfterMs } = attempt.classify(thrown);
      const partial = plan.partial(attempt);
      if (!error.retryable || streamed.text) {
        const suffix = plan.failureSuffix?.(error);
        throw withDetails(error, { attempts: retry + 1, partial, ...(suffix !== undefined ? { suffix } : {}) });
      }
      if (retry >= settings.maxRetries) {
        const suffix = ` (gave up after ${retry + 1} attempt${retry === 0 ? "" : "s"}; maxRetries is ${settings.maxRetries})`;
        throw withDetails(error, { attempts: retry + 1, partial, suffix });
      }
      const delayMs = retryDelayMs(retry + 1, settings, retryAfterMs);
      yield { type: "retry", attempt: retry + 1, delayMs, error: { code: error.code, message: error.message } };
      await sleep(delayMs, signal).catch(() => throwIfAborted(signal));
    }
  }
}

/** The caller aborted: end with its reason, as `AbortSignal.throwIfAborted` would. */
function throwIfAborted(signal: AbortSignal): void {
  if (!signal.aborted) return;
  throw signal.reason ?? new DOMException("The model call was aborted", "AbortError");
}

/** The error with how many attempts were made and the output that arrived before it (the engine keeps text). */
function withDetails(error: AgentError, details: { attempts: number; partial?: ModelResponse | undefined; suffix?: string }): AgentError {
  return new AgentError(error.code, error.message + (details.suffix ?? ""), {
    ...(error.status !== undefined ? { status: error.status } : {}),
    retryable: error.retryable,
    cause: error.cause,
    data: { ...error.data, attempts: details.attempts, ...(details.partial ? { partial: details.partial } : {}) },
  });
}
