import { AgentError } from "../../errors/agent-error.js";
import { isContextOverflow, retryAfterMs } from "../openai/index.js";
import { StreamErrorPart } from "./stream-reader.js";

export interface ClassifiedError {
  error: AgentError;
  retryAfterMs?: number;
}

/**
 * An AI SDK `APICallError`, read by its fields rather than by `instanceof`, so statecraft loads no AI SDK package
 * (and a second copy of @ai-sdk/provider in the user's tree is recognised too).
 */
interface ApiCallErrorLike {
  message: string;
  statusCode?: number;
  isRetryable: boolean;
  responseHeaders?: Record<string, string>;
  responseBody?: string;
  url?: string;
}

function isApiCallError(value: unknown): value is ApiCallErrorLike {
  if (!(value instanceof Error)) return false;
  const candidate = value as Partial<ApiCallErrorLike> & { name?: string };
  return candidate.name === "AI_APICallError" || (typeof candidate.isRetryable === "boolean" && "responseBody" in candidate);
}

const RETRYABLE_IN_STREAM = /overload|rate|server|internal|unavailable|timeout|api_error|resource_exhausted/i;
const DROPPED = /terminated|fetch failed|other side closed|socket hang up|premature close|ECONNRESET|EPIPE|ECONNREFUSED/i;

/**
 * What a failed call of an AI SDK model means: the provider's own `isRetryable` for HTTP errors (429, 5xx…), with
 * `CONTEXT_OVERFLOW` for an overflowing prompt and messages that say what to check for 401/403/404; an `error`
 * part retryable when its type says overload, rate or server; dropped connections retryable.
 */
export function classifyAiSdkError(thrown: unknown, provider: string, modelId: string): ClassifiedError {
  if (thrown instanceof AgentError) return { error: thrown };
  const where = `${provider} model "${modelId}"`;
  if (isApiCallError(thrown)) {
    const status = thrown.statusCode;
    const detail = serverWords(thrown);
    const options = { ...(status !== undefined ? { status } : {}), cause: thrown };
    if (status !== undefined && status !== 429 && status < 500 && isContextOverflow(undefined, undefined, `${thrown.message} ${thrown.responseBody ?? ""}`)) {
      return { error: new AgentError("CONTEXT_OVERFLOW", `${where}: the conversation no longer fits the context window: ${detail}`, options) };
    }
    const hint =
      status === 401
        ? "the API key was missing or rejected; check the provider's key setting"
        : status === 403
          ? "access denied; check that the key may use this model"
          : status === 404
            ? "the model or endpoint was not found; check the model id and the provider's baseURL"
            : status === 429
              ? "rate limited"
              : status !== undefined && status >= 500
                ? "server error"
                : "the request failed";
    const wait = retryAfterMs(thrown.responseHeaders ? new Headers(thrown.responseHeaders) : undefined);
    const error = new AgentError("MODEL_ERROR", `HTTP ${status ?? "error"} from ${where}: ${hint}: ${detail}`, { ...options, retryable: thrown.isRetryable });
    return { error, ...(wait !== undefined ? { retryAfterMs: wait } : {}) };
  }
  if (thrown instanceof StreamErrorPart) {
    const inner = thrown.error;
    if (isApiCallError(inner)) return classifyAiSdkError(inner, provider, modelId);
    const type = typeof inner === "object" && inner !== null ? String((inner as { type?: unknown }).type ?? "") : "";
    if (isContextOverflow(undefined, type, thrown.message)) {
      return { error: new AgentError("CONTEXT_OVERFLOW", `${where}: the conversation no longer fits the context window: ${thrown.message}`, { cause: inner }) };
    }
    const retryable = RETRYABLE_IN_STREAM.test(`${type} ${thrown.message}`);
    return { error: new AgentError("MODEL_ERROR", `${where} reported an error in its stream${type ? ` (${type})` : ""}: ${thrown.message}`, { retryable, cause: inner }) };
  }
  const message = thrown instanceof Error ? describeChain(thrown) : String(thrown);
  const retryable = thrown instanceof Error && DROPPED.test(message);
  return { error: new AgentError("MODEL_ERROR", `${where} failed: ${message}`, { retryable, cause: thrown }) };
}

function serverWords(error: ApiCallErrorLike): string {
  const body = error.responseBody?.trim();
  if (body === undefined || body === "" || error.message.includes(body)) return error.message;
  return `${error.message} (${body.length > 600 ? `${body.slice(0, 600)}…` : body})`;
}

function describeChain(error: Error): string {
  const parts: string[] = [];
  for (let current: unknown = error, depth = 0; depth < 4 && current instanceof Error; depth++, current = current.cause) {
    const code = (current as { code?: unknown }).code;
    parts.push(typeof code === "string" && !current.message.includes(code) ? `${current.message} [${code}]` : current.message);
  }
  return parts.join(": ");
}
