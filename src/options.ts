import type { AnyTool } from "./tools/define-tool.js";
import type { Model } from "./models/model.js";
import type { PermissionOptions } from "./permissions/types.js";
import type { Logger } from "./logger.js";

/** Options of `query()`. Only `model` is required. */
export interface QueryOptions {
  /** The model: `scriptedModel(...)`, `openaiModel(...)`, or any `Model`. */
  model: Model;
  tools?: readonly AnyTool[];
  /** At most this many model calls per run (default 8). */
  maxTurns?: number;
  /** At most this many tool executions per run (default 12). */
  maxToolCalls?: number;
  /** Time limit of the whole run in milliseconds (default 120 000). Preempts a hanging model or tool call. */
  timeoutMs?: number;
  /** Aborting it ends the run `user_abort` from any state. */
  signal?: AbortSignal;
  /** Working directory: where tools run and `.agent/` lives. Default `process.cwd()`. */
  cwd?: string;
  systemPrompt?: string;
  /** Continue an earlier session's conversation from its transcript; a new id when absent. */
  sessionId?: string;
  /** Trace file (JSONL). Default `<cwd>/.agent/trace.jsonl`; `false` writes no trace. */
  traceFile?: string | false;
  permissions?: PermissionOptions;
  /** Operational logs (e.g. a trace write failure). Default: pino on stderr at STATECRAFT_LOG_LEVEL (default "warn"). */
  logger?: Logger;
}

export const DEFAULT_MAX_TURNS = 8;
export const DEFAULT_MAX_TOOL_CALLS = 12;
export const DEFAULT_TIMEOUT_MS = 120_000;
