/**
 * Every error statecraft raises or reports carries a stable `code`, so callers branch on codes, not messages.
 */
export type AgentErrorCode =
  | "MAX_TURNS"
  | "MAX_TOOL_CALLS"
  | "TIMEOUT"
  | "USER_ABORT"
  | "PERMISSION_DENIED"
  | "TOOL_NOT_FOUND"
  | "TOOL_INPUT_INVALID"
  | "TOOL_FAILED"
  | "TOOL_FATAL"
  | "TOOL_TIMEOUT"
  | "TOOL_CALL_TRUNCATED"
  | "MODEL_ERROR"
  | "MODEL_SCRIPT_EXHAUSTED"
  | "CONTEXT_OVERFLOW"
  | "INVALID_OPTIONS"
  | "INVALID_TOOL"
  | "INVALID_SCRIPT"
  | "SESSION_BUSY"
  | "HOOK_FAILED"
  | "REPEATED_CALL"
  | "MAX_TOKENS"
  /** A tool, or the code running the tool batch, crashed: the run ends `tool_error`. */
  | "TOOL_CRASHED"
  /** A defect of the engine itself: the run ends `model_error`. */
  | "ENGINE_FAILED"
  | "TRACE_WRITE_FAILED"
  | "RUN_BUSY"
  | "RUN_NOT_FOUND"
  | "RUN_DAMAGED"
  /** `sandbox: "required"` and no sandbox here (no bubblewrap, no sandbox-exec): the process was not started. */
  | "SANDBOX_UNAVAILABLE"
  /** The final answer did not match `query()`'s `output` schema after `outputRetries` more tries: the run ends `model_error`. */
  | "OUTPUT_INVALID"
  /** A recorded image or file (`.agent/blobs/<sha256>`) is not where its record says: a replay, resume or session can't read it back. */
  | "BLOB_NOT_FOUND"
  /** A recorded image or file's bytes no longer match the hash it is named by: refused, never sent to a model. */
  | "BLOB_DAMAGED"
  | (string & {});

export interface AgentErrorOptions {
  /** HTTP status of a failed model request, when there was one. */
  status?: number;
  /** Whether repeating the same request may succeed (rate limits, 5xx, dropped connections). */
  retryable?: boolean;
  cause?: unknown;
  /** Extra structured data (the tool call, the offending option…). Never secrets. */
  data?: Record<string, unknown>;
}

export class AgentError extends Error {
  readonly code: AgentErrorCode;
  readonly status?: number;
  readonly retryable: boolean;
  readonly data?: Record<string, unknown>;

  constructor(code: AgentErrorCode, message: string, options: AgentErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AgentError";
    this.code = code;
    this.retryable = options.retryable ?? false;
    if (options.status !== undefined) this.status = options.status;
    if (options.data !== undefined) this.data = options.data;
  }

  /** The `{ code, message }` shape used in events, trace lines and results. */
  toJSON(): ErrorInfo {
    return { code: this.code, message: this.message, ...(this.status !== undefined ? { status: this.status } : {}) };
  }
}

/** A serialisable error: what `turn_end.error`, trace lines and audit lines carry. */
export interface ErrorInfo {
  code: AgentErrorCode;
  message: string;
  status?: number;
}

/** Normalises anything thrown into an AgentError, keeping an existing code. */
export function toAgentError(error: unknown, fallbackCode: AgentErrorCode = "TOOL_FAILED"): AgentError {
  if (error instanceof AgentError) return error;
  if (error instanceof Error) {
    const err = new AgentError(fallbackCode, error.message || error.name, { cause: error });
    return err;
  }
  return new AgentError(fallbackCode, typeof error === "string" ? error : safeString(error));
}

function safeString(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
