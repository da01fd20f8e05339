import { AgentError } from "../errors/agent-error.js";
import type { QueryOptions } from "../options.js";

/** The tool's name and description when none is given. */
export const DEFAULT_TOOL_NAME = "run_agent";
export const DEFAULT_TOOL_DESCRIPTION =
  "Runs a statecraft agent on a prompt, in its own folder with its own tools and permission rules, and answers with the " +
  "agent's final text. Pass the sessionId of an earlier answer to go on with that conversation.";
/** How long a permission question waits for the host's answer before the run is given up (user_abort). */
export const DEFAULT_ASK_TIMEOUT_MS = 600_000;
/** The largest request body the HTTP server reads. */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

/** Options of `mcpServer()`. */
export interface McpServerOptions {
  /**
   * How each run is made: `query()`'s options (model, tools, cwd, permissions, limits…). `signal` and `sessionId`
   * are the server's to set per call; `permissions.onAsk` is the host's elicitation when it supports one.
   */
  agent: Omit<QueryOptions, "signal" | "sessionId" | "inspect">;
  /** The tool's name. Default `run_agent`. */
  toolName?: string;
  /** The tool's description, which the host's model reads to decide when to call it. */
  toolDescription?: string;
  /** The name and version the server gives hosts. Default `statecraft` and the package's version. */
  serverInfo?: { name: string; version: string };
  /** How long a question sent to the host waits for its answer before the run ends `user_abort`. Default 600 000. */
  askTimeoutMs?: number;
}

/** Options of `server.listen()`. */
export interface McpHttpOptions {
  /** The port on 127.0.0.1; 0 (default) takes a free one. */
  port?: number;
  /** The bearer token every request must carry (`Authorization: Bearer …`); default: a new random one. */
  token?: string;
  /** Browser origins allowed besides the server's own (a request with another `Origin` is refused, 403). */
  allowOrigins?: string[];
  /** The largest request body read (413 above it). Default 4 MiB. */
  maxBodyBytes?: number;
}

const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** Checks `mcpServer()`'s options; a mistake throws `INVALID_OPTIONS` naming the option and how to fix it. */
export function checkServerOptions(options: unknown): asserts options is McpServerOptions {
  if (options === null || typeof options !== "object") throw invalid("mcpServer(options): options must be an object { agent: { model, tools?, cwd?, permissions? } }");
  const o = options as Record<string, unknown>;
  if (o.agent === null || typeof o.agent !== "object") throw invalid("mcpServer options: agent must be query()'s options for each run, at least { model }");
  const agent = o.agent as Record<string, unknown>;
  for (const key of ["signal", "sessionId", "inspect"]) {
    if (agent[key] !== undefined) throw invalid(`mcpServer options: agent.${key} is set by the server for each call; leave it out`);
  }
  if (o.toolName !== undefined && !(typeof o.toolName === "string" && TOOL_NAME.test(o.toolName))) {
    throw invalid(`mcpServer options: toolName must be 1 to 64 letters, digits, "_", "-" or ".", got ${JSON.stringify(o.toolName)}`);
  }
  if (o.toolDescription !== undefined && (typeof o.toolDescription !== "string" || o.toolDescription.trim() === "")) {
    throw invalid("mcpServer options: toolDescription must be a non-empty string");
  }
  const info = o.serverInfo as Record<string, unknown> | undefined;
  if (info !== undefined && (info === null || typeof info !== "object" || typeof info.name !== "string" || typeof info.version !== "string")) {
    throw invalid("mcpServer options: serverInfo must be { name, version }, two strings");
  }
  if (o.askTimeoutMs !== undefined && !(typeof o.askTimeoutMs === "number" && o.askTimeoutMs > 0)) {
    throw invalid("mcpServer options: askTimeoutMs must be a positive number of milliseconds");
  }
}

/** Checks `listen()`'s options. */
export function checkHttpOptions(options: unknown): asserts options is McpHttpOptions {
  if (options === null || typeof options !== "object") throw invalid("listen(options): options must be an object { port?, token?, allowOrigins?, maxBodyBytes? }");
  const o = options as Record<string, unknown>;
  if (o.port !== undefined && !(Number.isInteger(o.port) && (o.port as number) >= 0 && (o.port as number) <= 65_535)) {
    throw invalid(`listen options: port must be a whole number from 0 to 65535, got ${JSON.stringify(o.port)}`);
  }
  if (o.token !== undefined && !(typeof o.token === "string" && o.token.length >= 16 && /^[\x21-\x7e]+$/.test(o.token))) {
    throw invalid("listen options: token must be at least 16 printable characters without spaces (it is sent as a bearer token)");
  }
  if (o.maxBodyBytes !== undefined && !(Number.isInteger(o.maxBodyBytes) && (o.maxBodyBytes as number) > 0)) {
    throw invalid("listen options: maxBodyBytes must be a positive whole number of bytes");
  }
}

function invalid(message: string): AgentError {
  return new AgentError("INVALID_OPTIONS", message);
}
