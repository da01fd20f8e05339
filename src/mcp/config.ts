import { AgentError } from "../errors/agent-error.js";
import type { ToolRisk } from "../tools/define-tool.js";
import { resolveSandbox, type SandboxOption } from "../sandbox/index.js";

/** A server started as a child process speaking MCP on its stdin/stdout. */
export interface McpStdioServer {
  command: string;
  args?: string[];
  /** Given to the server over the run's scrubbed environment (docs/sandbox.md): what the server itself needs. */
  env?: Record<string, string>;
  cwd?: string;
  /** `false`: the server runs outside the sandbox (said in the run's header). Default: inside, as every process. */
  sandbox?: false;
  /** Per-call time limit of this server's tools. Default 60 000. */
  timeoutMs?: number;
  /** Which protocol generation to speak; see {@link McpProtocol}. Default "auto". */
  protocol?: McpProtocol;
}

/** A server reached over Streamable HTTP. */
export interface McpHttpServer {
  url: string;
  /** Sent with every request; `${NAME}` in a value is the environment variable NAME (a missing one is an error). */
  headers?: Record<string, string>;
  /**
   * OAuth when the server asks for it (401): the tokens `statecraft mcp login <server>` kept in the user's statecraft
   * folder, refreshed as needed. Default true; false: never. A server given an Authorization header never uses it.
   */
  oauth?: boolean;
  timeoutMs?: number;
  /** Which protocol generation to speak; see {@link McpProtocol}. Default "auto". */
  protocol?: McpProtocol;
}

/**
 * `"auto"`: negotiated per server — the stateless 2026-07-28 revision when the server speaks it, else the newest
 * 2025 revision it answers `initialize` with (2025-11-25 down to 2024-11-05). `"2026-07-28"`: that revision only (a
 * server without it fails to start). `"legacy"`: the 2025 `initialize` handshake only.
 */
export type McpProtocol = "auto" | "2026-07-28" | "legacy";

export type McpServerConfig = McpStdioServer | McpHttpServer;

/** `{ [name]: server }`: the shape of `.mcp.json`'s `mcpServers`. */
export type McpServers = Record<string, McpServerConfig>;

export interface McpToolsOptions {
  /**
   * Risk overrides by tool name, `*` matching any run of characters: `{ "mcp__memory__*": "read" }`. The most
   * specific pattern (the longest) wins; without a match the tool's annotations decide.
   */
  risk?: Record<string, ToolRisk>;
  /** Default per-call time limit of servers that set none. Default 60 000. */
  timeoutMs?: number;
  /** Restarts (stdio) or reconnects (HTTP) of a server that went away before its tools fail for good. Default 3. */
  maxRestarts?: number;
  /** Time to connect and list a server's tools. Default 30 000. */
  connectTimeoutMs?: number;
  /** Where problems that do not fail `mcpTools()` go (a tool whose schema cannot be compiled, a reconnect). */
  onProblem?: (message: string) => void;
  /** The sandbox stdio servers run in, as query()'s `sandbox` (docs/sandbox.md). Default "auto". */
  sandbox?: SandboxOption;
  /** The folder stdio servers may write inside the sandbox. Default: each server's `cwd`, else process.cwd(). */
  workspace?: string;
}

export const DEFAULT_MCP_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_RESTARTS = 3;
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
const SERVER_NAME = /^[a-zA-Z0-9_-]+$/;

export function isStdio(config: McpServerConfig): config is McpStdioServer {
  return "command" in config;
}

/** Checks the servers' shape before anything starts; a mistake throws `INVALID_OPTIONS` naming the server and field. */
export function checkServers(servers: unknown): asserts servers is McpServers {
  if (servers === null || typeof servers !== "object" || Array.isArray(servers)) {
    throw invalid(`mcpTools(servers): servers must be an object { [name]: { command, args? } | { url } }, got ${describe(servers)}`);
  }
  for (const [name, config] of Object.entries(servers as Record<string, unknown>)) {
    const where = `MCP server "${name}"`;
    if (!SERVER_NAME.test(name)) throw invalid(`${where}: a server name is letters, digits, "_" or "-" (it becomes part of tool names)`);
    if (config === null || typeof config !== "object" || Array.isArray(config)) {
      throw invalid(`${where}: must be an object { command, args?, env?, cwd? } or { url, headers? }, got ${describe(config)}`);
    }
    const c = config as Record<string, unknown>;
    const hasCommand = "command" in c;
    const hasUrl = "url" in c;
    if (hasCommand === hasUrl) throw invalid(`${where}: give exactly one of "command" (a stdio server) or "url" (a Streamable HTTP server)`);
    if (hasCommand) {
      if (typeof c.command !== "string" || c.command === "") throw invalid(`${where}: "command" must be a non-empty string`);
      if (c.args !== undefined && !(Array.isArray(c.args) && c.args.every((a) => typeof a === "string"))) {
        throw invalid(`${where}: "args" must be an array of strings`);
      }
      checkStringMap(c.env, `${where}: "env"`);
      if (c.cwd !== undefined && typeof c.cwd !== "string") throw invalid(`${where}: "cwd" must be a string`);
      if (c.sandbox !== undefined && c.sandbox !== false) throw invalid(`${where}: "sandbox" can only be false (the server then runs outside the sandbox); leave it out to sandbox the server`);
    } else {
      let url: URL;
      try {
        url = new URL(String(c.url));
      } catch {
        throw invalid(`${where}: "url" must be an absolute http(s) URL, got ${describe(c.url)}`);
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") throw invalid(`${where}: "url" must use http or https, got ${url.protocol}`);
      checkStringMap(c.headers, `${where}: "headers"`);
      if (c.oauth !== undefined && typeof c.oauth !== "boolean") throw invalid(`${where}: "oauth" must be true or false`);
    }
    if (c.protocol !== undefined && c.protocol !== "auto" && c.protocol !== "2026-07-28" && c.protocol !== "legacy") {
      throw invalid(`${where}: "protocol" must be "auto", "2026-07-28" or "legacy", got ${describe(c.protocol)}`);
    }
    if (c.timeoutMs !== undefined && !(typeof c.timeoutMs === "number" && c.timeoutMs > 0)) {
      throw invalid(`${where}: "timeoutMs" must be a positive number of milliseconds`);
    }
  }
}

export function checkOptions(options: unknown): asserts options is McpToolsOptions {
  if (options === null || typeof options !== "object" || Array.isArray(options)) throw invalid("mcpTools(servers, options): options must be an object");
  const o = options as Record<string, unknown>;
  for (const key of ["timeoutMs", "connectTimeoutMs"] as const) {
    if (o[key] !== undefined && !(typeof o[key] === "number" && o[key] > 0)) throw invalid(`mcpTools options: ${key} must be a positive number of milliseconds`);
  }
  if (o.maxRestarts !== undefined && !(Number.isInteger(o.maxRestarts) && (o.maxRestarts as number) >= 0)) {
    throw invalid("mcpTools options: maxRestarts must be a whole number, 0 or more");
  }
  if (o.risk !== undefined) {
    if (o.risk === null || typeof o.risk !== "object" || Array.isArray(o.risk)) throw invalid('mcpTools options: risk must be an object { "mcp__server__*": "read" }');
    for (const [pattern, risk] of Object.entries(o.risk)) {
      if (risk !== "read" && risk !== "write" && risk !== "exec") {
        throw invalid(`mcpTools options: risk["${pattern}"] must be "read", "write" or "exec", got ${describe(risk)}`);
      }
    }
  }
  if (o.onProblem !== undefined && typeof o.onProblem !== "function") throw invalid("mcpTools options: onProblem must be a function (message) => void");
  resolveSandbox(o.sandbox, "mcpTools options: sandbox");
  if (o.workspace !== undefined && typeof o.workspace !== "string") throw invalid("mcpTools options: workspace must be a folder's path");
}

/**
 * The servers with `${NAME}` in their header values replaced by the environment's NAME, the simple way to pass a
 * token (`"Authorization": "Bearer ${GITHUB_TOKEN}"`) without writing it in a file. A variable that is not set is an
 * error naming the server, the header and the variable.
 */
export function expandHeaders(servers: McpServers, env: NodeJS.ProcessEnv = process.env): McpServers {
  const out: McpServers = {};
  for (const [name, config] of Object.entries(servers)) {
    if (isStdio(config) || !config.headers) {
      out[name] = config;
      continue;
    }
    const headers: Record<string, string> = {};
    for (const [header, value] of Object.entries(config.headers)) {
      headers[header] = value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, variable: string) => {
        const found = env[variable];
        if (found === undefined || found === "") {
          throw invalid(`MCP server "${name}": header "${header}" uses \${${variable}}, which is not set in the environment; set ${variable} or write the value`);
        }
        return found;
      });
    }
    out[name] = { ...config, headers };
  }
  return out;
}

function checkStringMap(value: unknown, where: string): void {
  if (value === undefined) return;
  if (value === null || typeof value !== "object" || Array.isArray(value) || !Object.values(value).every((v) => typeof v === "string")) {
    throw invalid(`${where} must be an object of string values`);
  }
}

function invalid(message: string): AgentError {
  return new AgentError("INVALID_OPTIONS", message);
}

function describe(value: unknown): string {
  return Array.isArray(value) ? "an array" : value === null ? "null" : typeof value === "string" ? JSON.stringify(value) : typeof value;
}
