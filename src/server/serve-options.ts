import { AgentError } from "../errors/agent-error.js";
import type { Logger } from "../logger.js";
import type { Model } from "../models/model.js";
import type { PermissionOptions } from "../permissions/types.js";
import type { AnyTool } from "../tools/define-tool.js";
import type { RunOptions } from "../dbos/run-options.js";
import { checkRunOptions } from "../dbos/run-options.js";
import { checkAllowOrigins } from "../inspect/origins.js";

/** Options of `serve()`. `model` and `token` are required. */
export interface ServeOptions {
  /** The model every run uses. */
  model: Model;
  /** The agent's tools (the CLI gives the built-in ones). */
  tools?: readonly AnyTool[];
  /** Where the runs work: their tools' folder and `.agent/` (default `process.cwd()`). */
  cwd?: string;
  /**
   * The server's permissions. A request may narrow them (`options.permissions`), never widen them. A question nobody
   * can answer suspends the run until `POST /runs/:runId/answers` (or the chat's approval) answers it.
   */
  permissions?: Omit<PermissionOptions, "onAsk" | "whenUnanswered">;
  /** The server's limits and system prompt (maxTurns, maxToolCalls, timeoutMs, …): a request may lower them. */
  runOptions?: Omit<RunOptions, "permissions">;
  /** The bearer token every request must carry (`Authorization: Bearer <token>`); at least 16 characters. */
  token: string;
  /** The runs' trace file (default `<cwd>/.agent/trace.jsonl`; false: none). With `database` the trace is the database's. */
  traceFile?: string | false;
  /** `"file"` (default): runs kept under `<cwd>/.agent/`; `"memory"`: nothing written, kept while the process lives. */
  store?: "file" | "memory";
  /**
   * PostgreSQL of statecraft/dbos: runs go on its queue and a worker in this process runs them (with `model`, `tools`,
   * `permissions`); other workers of the database may take them too. Needs `@dbos-inc/dbos-sdk` and `pg`.
   */
  database?: string;
  /** Host header values answered besides 127.0.0.1, localhost and [::1] (with `listen` on another interface). */
  hosts?: readonly string[];
  /** Origins of browser pages (other than the server's own) allowed to call it, e.g. `http://localhost:5173`. */
  allowOrigins?: readonly string[];
  /** The largest request body read, in bytes (default 1 048 576, 1 MB). */
  maxBodyBytes?: number;
  logger?: Logger;
}

export const DEFAULT_MAX_BODY_BYTES = 1_048_576;
const OPTION_NAMES = ["model", "tools", "cwd", "permissions", "runOptions", "token", "traceFile", "store", "database", "hosts", "allowOrigins", "maxBodyBytes", "logger"];

/** Refuses options that can't work, naming the option and how to fix it. */
export function checkServeOptions(options: ServeOptions): { origins: string[]; hosts: string[]; maxBodyBytes: number } {
  const fail = (message: string) => new AgentError("INVALID_OPTIONS", `serve(): ${message}`);
  if (!options || typeof options !== "object") throw fail("options are required: { model, token }");
  for (const name of Object.keys(options)) if (!OPTION_NAMES.includes(name)) throw fail(`options.${name} is not an option; the options are ${OPTION_NAMES.join(", ")}`);
  if (typeof options.token !== "string" || options.token.length < 16 || /\s/.test(options.token)) {
    throw fail("options.token must be a string of at least 16 characters without spaces (e.g. randomBytes(32).toString(\"base64url\")): every request must carry it");
  }
  if (!options.model || typeof options.model !== "object") throw fail("options.model is required: the Model every run uses");
  if (options.store !== undefined && options.store !== "file" && options.store !== "memory") throw fail(`options.store must be "file" or "memory", got ${JSON.stringify(options.store)}`);
  if (options.database !== undefined && (typeof options.database !== "string" || options.database === "")) throw fail("options.database must be a PostgreSQL URL, postgres://user@host:port/db");
  if (options.database !== undefined && options.store === "memory") throw fail('options.store "memory" and options.database both say where runs are kept; give one');
  if (options.traceFile !== undefined && options.traceFile !== false && (typeof options.traceFile !== "string" || options.traceFile === "")) throw fail("options.traceFile must be a file path or false");
  if (options.traceFile !== undefined && options.database !== undefined) throw fail("options.traceFile and options.database: runs on the queue write their trace to the database (statecraft trace show --database reads it); drop traceFile");
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 1) throw fail(`options.maxBodyBytes must be a whole number of bytes >= 1, got ${JSON.stringify(options.maxBodyBytes)}`);
  if (options.runOptions !== undefined && (options.runOptions === null || typeof options.runOptions !== "object" || "permissions" in options.runOptions)) {
    throw fail("options.runOptions must be an object of limits (maxTurns, maxToolCalls, timeoutMs, systemPrompt, …); the permissions are options.permissions");
  }
  if (options.runOptions !== undefined) checkRunOptions(options.runOptions as Record<string, unknown>, "serve()");
  const hosts = options.hosts ?? [];
  if (!Array.isArray(hosts) || !hosts.every((h) => typeof h === "string" && h !== "" && !/[\s/]/.test(h))) throw fail('options.hosts must be a list of Host header values such as ["agent.example.com", "10.0.0.5:8787"]');
  return { origins: checkAllowOrigins(options.allowOrigins, "serve(): allowOrigins"), hosts: hosts.map((h) => h.toLowerCase()), maxBodyBytes };
}
