import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { AgentError } from "../errors/agent-error.js";
import { checkServers, type McpServers } from "../mcp/config.js";
import { UsageError } from "./usage-error.js";
import { shellQuote } from "./denial-notice.js";

/** The project's MCP servers, as Claude Code reads them. */
export const PROJECT_MCP_FILE = ".mcp.json";

export interface McpSelection {
  servers: McpServers;
  /** Said on stderr before the run: a project's servers that were not started, and how to allow them. */
  warnings: string[];
}

/**
 * The MCP servers of a run: those of `--mcp-config FILE` (the user chose it), then those of the project's
 * `.mcp.json` — started only when the folder is trusted, since a cloned repository's servers are programs it would
 * have this machine run. A server named in both comes from `--mcp-config`.
 */
export function selectMcpServers(flagFile: string | undefined, cwd: string, invocationDir: string, trusted: boolean): McpSelection {
  const servers: McpServers = {};
  const warnings: string[] = [];
  const projectFile = join(cwd, PROJECT_MCP_FILE);
  if (existsSync(projectFile)) {
    const project = readMcpFile(projectFile);
    const names = Object.keys(project);
    if (trusted) Object.assign(servers, project);
    else if (names.length > 0) {
      warnings.push(
        `${projectFile} lists MCP servers ${names.join(", ")}: not started, this folder is not trusted (its servers would be ` +
          `programs a cloned repository runs). To start them: statecraft trust ${shellQuote(cwd)}, or --trust-project for this run.`,
      );
    }
  }
  if (flagFile !== undefined) Object.assign(servers, readMcpFile(resolve(invocationDir, flagFile)));
  return { servers, warnings };
}

/** Reads `{ "mcpServers": { … } }`; any mistake is a usage error naming the file and what to fix. */
export function readMcpFile(file: string): McpServers {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new UsageError(`${file}: can't read the MCP configuration: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${file}: not valid JSON: ${(error as Error).message}`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed) || !("mcpServers" in parsed)) {
    throw new UsageError(`${file}: an MCP configuration is an object { "mcpServers": { "<name>": { "command": "…", "args": […] } } }`);
  }
  const servers = (parsed as { mcpServers: unknown }).mcpServers;
  // .mcp.json may say "type": "stdio" / "http"; the shape already tells them apart.
  const cleaned = stripType(servers, file);
  try {
    checkServers(cleaned);
  } catch (error) {
    if (error instanceof AgentError) throw new UsageError(`${file}: ${error.message}`);
    throw error;
  }
  return cleaned;
}

function stripType(servers: unknown, file: string): unknown {
  if (servers === null || typeof servers !== "object" || Array.isArray(servers)) return servers;
  const out: Record<string, unknown> = {};
  for (const [name, config] of Object.entries(servers)) {
    if (config === null || typeof config !== "object" || Array.isArray(config) || !("type" in config)) {
      out[name] = config;
      continue;
    }
    const { type, ...rest } = config as Record<string, unknown>;
    if (type !== "stdio" && type !== "http" && type !== "streamable-http") {
      throw new UsageError(`${file}: MCP server "${name}": "type" ${JSON.stringify(type)} is not supported; use "stdio" (command) or "http" (url)`);
    }
    out[name] = rest;
  }
  return out;
}
