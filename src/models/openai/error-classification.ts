import { APIConnectionError, APIConnectionTimeoutError, APIError } from "openai";
import { AgentError } from "../../errors/agent-error.js";
import { blockedPortMessage } from "./blocked-ports.js";
import { isContextOverflow } from "./context-overflow.js";
import { retryAfterMs } from "./retry-policy.js";
import { ServerErrorPayload } from "./server-error-payload.js";
import { isWireObject } from "./wire-types.js";

/** What classification needs to know about the call that failed. */
export interface ErrorContext {
  baseURL: string;
  model: string;
  /** Whether a key was configured, to say "not set" or "rejected" on 401. */
  apiKeySource: "option" | "env" | "none";
  /** The key, only so it can be scrubbed from any message a server echoes. */
  apiKey: string;
  /** The raw body of the failed HTTP response, when the fetch wrapper kept it (the SDK drops vLLM's messages). */
  errorBody?: string;
}

export interface ClassifiedError {
  error: AgentError;
  /** How long the server asked us to wait (`Retry-After`, `retry-after-ms`), in milliseconds. */
  retryAfterMs?: number;
}

const MAX_SERVER_MESSAGE = 600;

/**
 * Turns whatever a model request threw into an AgentError with an actionable message: retryable for 429, 408,
 * 409, 5xx, dropped connections; not retryable for 400, 401, 403, 404, 422; `CONTEXT_OVERFLOW` when the server says
 * the conversation is too long. Aborts and idle stalls are decided by the caller, which knows which signal fired.
 */
export function classifyModelError(thrown: unknown, context: ErrorContext): ClassifiedError {
  if (thrown instanceof AgentError) return { error: thrown };

  if (thrown instanceof APIConnectionTimeoutError) {
    return {
      error: new AgentError("MODEL_ERROR", `no response from ${context.baseURL} in time (connection timed out); is the server up and reachable?`, {
        retryable: true,
        cause: thrown,
      }),
    };
  }
  if (thrown instanceof APIConnectionError) {
    // fetch refused the port itself (a blocked port): nothing listening there can change that, so no retry.
    if (causeChain(thrown).some((e) => e.message === "bad port")) {
      return {
        error: new AgentError("MODEL_ERROR", scrub(blockedPortMessage(context.baseURL, portOf(context.baseURL)), context), { retryable: false, cause: thrown }),
      };
    }
    const cause = describeCause(thrown.cause) ?? thrown.message;
    return {
      error: new AgentError(
        "MODEL_ERROR",
        scrub(`could not connect to ${context.baseURL} (${cause}); is the server running and is baseURL (OPENAI_BASE_URL) right?`, context),
        { retryable: true, cause: thrown },
      ),
    };
  }
  if (thrown instanceof APIError && thrown.status !== undefined) {
    const detail = errorDetail(thrown.error, context.errorBody);
    const result = classifyStatus(thrown.status, detail, context);
    // The server's explicit word on retrying wins (OpenAI sends x-should-retry).
    const shouldRetry = thrown.headers?.get("x-should-retry");
    if (shouldRetry === "true" && result.code === "MODEL_ERROR") result.retryable = true;
    if (shouldRetry === "false") result.retryable = false;
    const wait = retryAfterMs(thrown.headers);
    return { error: toAgentError(result, thrown), ...(wait !== undefined ? { retryAfterMs: wait } : {}) };
  }
  if (thrown instanceof APIError || thrown instanceof ServerErrorPayload) {
    // An error reported inside a 200 response: `event: error`, or an `error` key in a chunk or JSON body.
    const payload = thrown instanceof ServerErrorPayload ? thrown.payload : thrown.error;
    return { error: classifyInBody(payload, context, thrown) };
  }
  if (thrown instanceof SyntaxError) {
    return {
      error: new AgentError("MODEL_ERROR", scrub(`${context.baseURL} sent data that is not valid JSON (${thrown.message}); is it an OpenAI-compatible Chat Completions endpoint?`, context), {
        retryable: false,
        cause: thrown,
      }),
    };
  }
  if (isConnectionDrop(thrown)) {
    const cause = describeCause(thrown) ?? "connection closed";
    return {
      error: new AgentError("MODEL_ERROR", scrub(`the connection to ${context.baseURL} dropped mid-response (${cause})`, context), {
        retryable: true,
        cause: thrown,
      }),
    };
  }
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  return {
    error: new AgentError("MODEL_ERROR", scrub(`model request to ${context.baseURL} failed: ${message}`, context), {
      retryable: false,
      cause: thrown,
    }),
  };
}

interface ErrorDetail {
  message: string;
  code?: unknown;
  type?: unknown;
}

interface StatusResult {
  code: "MODEL_ERROR" | "CONTEXT_OVERFLOW";
  retryable: boolean;
  message: string;
  status: number;
}

function toAgentError(result: StatusResult, cause: unknown): AgentError {
  return new AgentError(result.code, result.message, { status: result.status, retryable: result.retryable, cause });
}

function classifyStatus(status: number, detail: ErrorDetail, context: ErrorContext): StatusResult {
  const server = detail.message ? `: ${detail.message}` : "";
  const from = `HTTP ${status} from ${context.baseURL}`;
  let code: StatusResult["code"] = "MODEL_ERROR";
  let retryable = false;
  let message: string;

  if (status !== 429 && status < 500 && isContextOverflow(detail.code, detail.type, detail.message)) {
    code = "CONTEXT_OVERFLOW";
    message = `${from}: the conversation no longer fits the context window of model "${context.model}"${server}`;
  } else if (status === 401) {
    message =
      context.apiKeySource === "none"
        ? `${from}: no API key was sent; set OPENAI_API_KEY (or pass apiKey to openaiModel)${server}`
        : `${from}: the API key was rejected; check OPENAI_API_KEY (or the apiKey option)${server}`;
  } else if (status === 403) {
    message = `${from}: access denied to model "${context.model}"; check that the key in OPENAI_API_KEY has access to it${server}`;
  } else if (status === 404) {
    message =
      `${from}: model "${context.model}" or the endpoint was not found; check the model name (model option or ` +
      `STATECRAFT_MODEL) and baseURL (OPENAI_BASE_URL, usually ending in /v1, e.g. http://localhost:11434/v1)${server}`;
  } else if (status === 429) {
    const quota = detail.code === "insufficient_quota" || detail.type === "insufficient_quota";
    retryable = !quota;
    message = quota
      ? `${from}: the account's quota is used up; check the plan and billing of the key in OPENAI_API_KEY${server}`
      : `${from}: rate limited${server}`;
  } else if (status === 408 || status === 409 || status >= 500) {
    retryable = true;
    message = status >= 500 ? `${from}: server error${server}` : `${from}: request timed out or conflicted on the server${server}`;
  } else if (status === 400 || status === 422) {
    message = `${from}: the server rejected the request${server}`;
  } else {
    message = `${from}${server || ": request failed"}`;
  }

  return { code, retryable, message: scrub(message, context), status };
}

function classifyInBody(payload: unknown, context: ErrorContext, cause: unknown): AgentError {
  const detail = errorDetail(payload, undefined);
  const status = statusOf(payload);
  if (status !== undefined && status >= 400) {
    const result = classifyStatus(status, detail, context);
    result.message = scrub(`${context.baseURL} reported an error after the response started (status ${status})${detail.message ? `: ${detail.message}` : ""}`, context);
    if (result.code === "CONTEXT_OVERFLOW") {
      result.message = scrub(`the conversation no longer fits the context window of model "${context.model}": ${detail.message}`, context);
    }
    return toAgentError(result, cause);
  }
  if (isContextOverflow(detail.code, detail.type, detail.message)) {
    return new AgentError("CONTEXT_OVERFLOW", scrub(`the conversation no longer fits the context window of model "${context.model}": ${detail.message}`, context), {
      retryable: false,
      cause,
    });
  }
  const hint = `${String(detail.type ?? "")} ${String(detail.code ?? "")}`.toLowerCase();
  const retryable = /server|overload|rate|timeout|unavailable|internal/.test(hint);
  return new AgentError(
    "MODEL_ERROR",
    scrub(`${context.baseURL} reported an error after the response started: ${detail.message || "unknown error"}`, context),
    { retryable, cause },
  );
}

/** The status a body-level error claims: `status_code` (Groq), a numeric `code` (OpenRouter), or `status`. */
function statusOf(payload: unknown): number | undefined {
  if (!isWireObject(payload)) return undefined;
  for (const key of ["status_code", "status", "code"]) {
    const value = payload[key];
    const number = typeof value === "number" ? value : typeof value === "string" && /^\d{3}$/.test(value) ? Number(value) : NaN;
    if (Number.isInteger(number) && number >= 100 && number < 600) return number;
  }
  return undefined;
}

/** The server's own words, from the SDK's parsed error or the raw body (vLLM puts `message` at the top level). */
function errorDetail(error: unknown, rawBody: string | undefined): ErrorDetail {
  const fromSdk = detailOf(error);
  if (fromSdk.message) return fromSdk;
  if (rawBody !== undefined && rawBody.trim() !== "") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(rawBody);
    } catch {
      return { message: truncate(rawBody.trim()) };
    }
    // Gemini's compatible endpoint wraps its error in a one-element array.
    if (Array.isArray(parsed) && parsed.length > 0) parsed = parsed[0];
    if (isWireObject(parsed) && parsed.error !== undefined) {
      const inner = detailOf(parsed.error);
      if (inner.message) return inner;
    }
    const top = detailOf(parsed);
    if (top.message) return top;
  }
  return fromSdk;
}

function detailOf(value: unknown): ErrorDetail {
  if (typeof value === "string") return { message: truncate(value) };
  if (!isWireObject(value)) return { message: "" };
  const message = typeof value.message === "string" ? value.message : typeof value.detail === "string" ? value.detail : typeof value.error === "string" ? value.error : "";
  return { message: truncate(message), code: value.code, type: value.type };
}

function truncate(text: string): string {
  return text.length > MAX_SERVER_MESSAGE ? `${text.slice(0, MAX_SERVER_MESSAGE)}…` : text;
}

/** Servers sometimes echo the key back (e.g. "Incorrect API key provided: sk-..."): it never reaches a message. */
function scrub(message: string, context: ErrorContext): string {
  const key = context.apiKey;
  if (context.apiKeySource === "none" || key.length < 4) return message;
  return message.split(key).join("[redacted]");
}

const DROP_CODES = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED", "UND_ERR_SOCKET", "ETIMEDOUT", "UND_ERR_BODY_TIMEOUT", "UND_ERR_CLOSED"]);

/** undici reports a body cut off mid-stream as `TypeError: terminated` caused by a socket error. */
function isConnectionDrop(thrown: unknown): boolean {
  let current: unknown = thrown;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && DROP_CODES.has(code)) return true;
    if (current instanceof TypeError && /terminated|fetch failed|other side closed|socket/i.test(current.message)) return true;
    if (/other side closed|socket hang up|premature close/i.test(current.message)) return true;
    current = current.cause;
  }
  return false;
}

function causeChain(error: unknown): Error[] {
  const chain: Error[] = [];
  for (let current = error, depth = 0; depth < 5 && current instanceof Error; depth++, current = current.cause) chain.push(current);
  return chain;
}

function portOf(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.port || (parsed.protocol === "https:" ? "443" : "80");
  } catch {
    return "?";
  }
}

function describeCause(cause: unknown): string | undefined {
  const parts: string[] = [];
  let current: unknown = cause;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    parts.push(typeof code === "string" && !current.message.includes(code) ? `${current.message} [${code}]` : current.message);
    current = current.cause;
  }
  return parts.length > 0 ? parts.join(": ") : undefined;
}
