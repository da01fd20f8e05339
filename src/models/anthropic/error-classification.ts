import { APIConnectionError, APIConnectionTimeoutError, APIError } from "@anthropic-ai/sdk";
import { AgentError } from "../../errors/agent-error.js";
import { blockedPortMessage, isContextOverflow, retryAfterMs } from "../openai/index.js";
import { isWireObject } from "./wire-types.js";

/** What classification needs to know about the call that failed. */
export interface ErrorContext {
  baseUrl: string;
  model: string;
  apiKeySource: "option" | "env" | "none";
  /** The key, only so it can be scrubbed from any message a server echoes. */
  apiKey: string;
}

export interface ClassifiedError {
  error: AgentError;
  /** How long the server asked us to wait (`retry-after`, `retry-after-ms`), in milliseconds. */
  retryAfterMs?: number;
}

/** The API's error types (https://docs.anthropic.com/en/api/errors) and the HTTP status each stands for. */
const ERROR_TYPE_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

const MAX_SERVER_MESSAGE = 600;

/**
 * Turns whatever a Messages API request threw into an AgentError: retryable for 429, 408, 409, 5xx, 529 (overloaded)
 * and dropped connections; not for 400, 401, 403, 404, 413; `CONTEXT_OVERFLOW` for "prompt is too long", so that
 * compaction's one retry applies. An `error` event inside a stream is classified by its error type the same way.
 */
export function classifyAnthropicError(thrown: unknown, context: ErrorContext): ClassifiedError {
  if (thrown instanceof AgentError) return { error: thrown };
  if (thrown instanceof APIConnectionTimeoutError) {
    return { error: modelError(`no response from ${context.baseUrl} in time (connection timed out); is the server reachable?`, true, thrown, context) };
  }
  if (thrown instanceof APIConnectionError) {
    if (causeChain(thrown).some((e) => e.message === "bad port")) {
      return { error: modelError(blockedPortMessage(context.baseUrl, portOf(context.baseUrl), "baseUrl (ANTHROPIC_BASE_URL)"), false, thrown, context) };
    }
    const cause = describeCause(thrown.cause) ?? thrown.message;
    return { error: modelError(`could not connect to ${context.baseUrl} (${cause}); is baseUrl (ANTHROPIC_BASE_URL) right?`, true, thrown, context) };
  }
  if (thrown instanceof APIError) {
    const detail = detailOf(thrown.error);
    const status = thrown.status ?? (detail.type !== undefined ? ERROR_TYPE_STATUS[detail.type] : undefined);
    const inStream = thrown.status === undefined;
    const error = classifyStatus(status, detail, context, inStream, thrown);
    const shouldRetry = thrown.headers?.get("x-should-retry");
    const retryable = error.code === "MODEL_ERROR" && (shouldRetry === "true" || (shouldRetry !== "false" && error.retryable));
    const wait = inStream ? undefined : retryAfterMs(thrown.headers ?? undefined);
    return { error: withRetryable(error, retryable), ...(wait !== undefined ? { retryAfterMs: wait } : {}) };
  }
  if (thrown instanceof SyntaxError) {
    return { error: modelError(`${context.baseUrl} sent data that is not valid JSON (${thrown.message}); is it the Anthropic Messages API?`, false, thrown, context) };
  }
  if (isConnectionDrop(thrown)) {
    return { error: modelError(`the connection to ${context.baseUrl} dropped mid-response (${describeCause(thrown) ?? "connection closed"})`, true, thrown, context) };
  }
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  return { error: modelError(`model request to ${context.baseUrl} failed: ${message}`, false, thrown, context) };
}

interface ErrorDetail {
  message: string;
  type?: string;
}

function classifyStatus(status: number | undefined, detail: ErrorDetail, context: ErrorContext, inStream: boolean, cause: unknown): AgentError {
  const server = detail.message ? `: ${detail.message}` : "";
  const from = inStream ? `${context.baseUrl} reported an error after the response started (${detail.type ?? "error"})` : `HTTP ${status} from ${context.baseUrl}`;
  const options = { ...(inStream || status === undefined ? {} : { status }), cause };
  if (status !== undefined && status < 500 && status !== 429 && isContextOverflow(undefined, detail.type, detail.message)) {
    return new AgentError("CONTEXT_OVERFLOW", scrub(`${from}: the conversation no longer fits the context window of model "${context.model}"${server}`, context), options);
  }
  let retryable = false;
  let message: string;
  if (status === 401) {
    message =
      context.apiKeySource === "none"
        ? `${from}: no API key was sent; set ANTHROPIC_API_KEY (or pass apiKey to anthropicModel)${server}`
        : `${from}: the API key was rejected; check ANTHROPIC_API_KEY (or the apiKey option)${server}`;
  } else if (status === 403) {
    message = `${from}: access denied to model "${context.model}"; check that the key in ANTHROPIC_API_KEY has access to it${server}`;
  } else if (status === 404) {
    message = `${from}: model "${context.model}" or the endpoint was not found; check the model name (e.g. claude-sonnet-4-5) and baseUrl (ANTHROPIC_BASE_URL, without /v1)${server}`;
  } else if (status === 402) {
    message = `${from}: a billing problem on the account; check the plan and billing of the key in ANTHROPIC_API_KEY${server}`;
  } else if (status === 429) {
    retryable = true;
    message = `${from}: rate limited${server}`;
  } else if (status === 529) {
    retryable = true;
    message = `${from}: the API is overloaded${server}`;
  } else if (status === 408 || status === 409 || (status !== undefined && status >= 500)) {
    retryable = true;
    message = `${from}: server error${server}`;
  } else if (status === 413) {
    message = `${from}: the request is larger than the API accepts${server}`;
  } else if (status === 400 || status === 422) {
    message = `${from}: the API rejected the request${server}`;
  } else {
    message = `${from}${server || ": request failed"}`;
  }
  return new AgentError("MODEL_ERROR", scrub(message, context), { ...options, retryable });
}

/** `{ type: "error", error: { type, message } }`, the API's error body, or its inner object. */
function detailOf(body: unknown): ErrorDetail {
  const inner = isWireObject(body) && isWireObject(body.error) ? body.error : body;
  if (typeof inner === "string") return { message: truncate(inner) };
  if (!isWireObject(inner)) return { message: "" };
  return {
    message: truncate(typeof inner.message === "string" ? inner.message : ""),
    ...(typeof inner.type === "string" ? { type: inner.type } : {}),
  };
}

function withRetryable(error: AgentError, retryable: boolean): AgentError {
  if (error.retryable === retryable) return error;
  return new AgentError(error.code, error.message, { ...(error.status !== undefined ? { status: error.status } : {}), retryable, cause: error.cause });
}

function modelError(message: string, retryable: boolean, cause: unknown, context: ErrorContext): AgentError {
  return new AgentError("MODEL_ERROR", scrub(message, context), { retryable, cause });
}

function truncate(text: string): string {
  return text.length > MAX_SERVER_MESSAGE ? `${text.slice(0, MAX_SERVER_MESSAGE)}…` : text;
}

/** A server that echoes the key back never gets it into a message. */
function scrub(message: string, context: ErrorContext): string {
  if (context.apiKeySource === "none" || context.apiKey.length < 4) return message;
  return message.split(context.apiKey).join("[redacted]");
}

const DROP_CODES = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED", "UND_ERR_SOCKET", "ETIMEDOUT", "UND_ERR_BODY_TIMEOUT", "UND_ERR_CLOSED"]);

/** undici reports a body cut off mid-stream as `TypeError: terminated` caused by a socket error. */
function isConnectionDrop(thrown: unknown): boolean {
  return causeChain(thrown).some((error) => {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && DROP_CODES.has(code)) return true;
    return /terminated|fetch failed|other side closed|socket hang up|premature close/i.test(error.message);
  });
}

function causeChain(error: unknown): Error[] {
  const chain: Error[] = [];
  for (let current = error, depth = 0; depth < 5 && current instanceof Error; depth++, current = current.cause) chain.push(current);
  return chain;
}

function describeCause(cause: unknown): string | undefined {
  const parts = causeChain(cause)
    .slice(0, 4)
    .map((e) => {
      const code = (e as { code?: unknown }).code;
      return typeof code === "string" && !e.message.includes(code) ? `${e.message} [${code}]` : e.message;
    });
  return parts.length > 0 ? parts.join(": ") : undefined;
}

function portOf(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.port || (parsed.protocol === "https:" ? "443" : "80");
  } catch {
    return "?";
  }
}
