import { AgentError } from "../../errors/agent-error.js";
import type { McpToolsHandle } from "../../mcp/index.js";
import type { AnyTool } from "../../tools/define-tool.js";
import { builtinTools } from "../../tools/builtin/index.js";
import type { Style } from "../colors.js";
import { resolveRunSettings, type ModelChoice, type RunSettings } from "../config.js";
import type { CliIO } from "../io.js";
import type { Logger } from "../logger.js";
import { createModel, type CreatedModel } from "../model-factory.js";
import { traceFileOf, type RunParameters } from "../run-agent.js";
import type { RunFlags } from "../run-flags.js";
import { selectMcpServers } from "../mcp-config.js";
import { checkTraceTarget } from "../trace-target.js";
import { UsageError } from "../usage-error.js";
import { isTrustedFolder } from "../user-config.js";

export interface PreparedAgent {
  settings: RunSettings;
  params: RunParameters;
  created: CreatedModel;
  /** The built-in tools and the MCP servers' tools as they are now (a server's list may change between runs). */
  readonly tools: AnyTool[];
  /** The MCP servers started for this command; closed by `closeAgent`. */
  mcp?: McpToolsHandle;
}

/**
 * Everything `run` and `chat` need before the first model call: settings from flags, environment and config file
 * (a missing model fails here, at once), the model, a trace file that can be written, and the built-in tools.
 * `model`, when given, is used instead of the one flags, environment and config would choose (resume's recorded one).
 */
export async function prepareAgent(flags: RunFlags, io: CliIO, logger: Logger, model?: ModelChoice): Promise<PreparedAgent> {
  const settings = resolveRunSettings(flags, io.env, io.cwd, model);
  // What an untrusted project asked for and did not get is said, never dropped silently.
  for (const warning of settings.warnings) io.stderr.write(`statecraft: ${warning}\n`);
  logger.debug(
    {
      cwd: settings.cwd,
      model: settings.model.kind === "script" ? { script: settings.model.file } : { model: settings.model.model, baseURL: settings.model.baseURL, source: settings.model.source },
      configFile: settings.configFile,
    },
    "settings resolved",
  );
  const created = await createModel(settings.model, logger);
  const { model: _model, configFile: _configFile, warnings: _warnings, ...params } = settings;
  const traceFile = traceFileOf(params);
  if (traceFile !== false) checkTraceTarget(traceFile);
  const builtin = builtinTools();
  const mcp = await startMcpServers(flags, settings, io, logger);
  return {
    settings,
    params,
    created,
    get tools() {
      return mcp ? [...builtin, ...mcp.tools] : builtin;
    },
    ...(mcp ? { mcp } : {}),
  };
}

/** Ends what `prepareAgent` started: the MCP servers' connections and processes. */
export async function closeAgent(prepared: PreparedAgent): Promise<void> {
  await prepared.mcp?.close();
}

/**
 * Starts the servers of `--mcp-config` and, in a trusted folder, of the project's `.mcp.json`, and names each with its
 * tool count on stderr (`mcp memory · 9 tools`). A server that does not start is a usage error naming it.
 */
async function startMcpServers(flags: RunFlags, settings: RunSettings, io: CliIO, logger: Logger): Promise<McpToolsHandle | undefined> {
  const cwd = settings.cwd;
  const trusted = flags.trustProject === true || isTrustedFolder(cwd, io.env);
  const { servers, warnings } = selectMcpServers(flags.mcpConfig, cwd, io.cwd, trusted);
  for (const warning of warnings) io.stderr.write(`statecraft: ${warning}\n`);
  if (Object.keys(servers).length === 0) return undefined;
  // The MCP SDK is loaded only when there are servers to start.
  const { mcpTools } = await import("../../mcp/index.js");
  let handle: McpToolsHandle;
  try {
    handle = await mcpTools(servers, {
      onProblem: (message) => logger.warn({ mcp: true }, message),
      workspace: cwd,
      ...(settings.sandbox !== undefined ? { sandbox: settings.sandbox } : {}),
    });
  } catch (error) {
    if (error instanceof AgentError) throw new UsageError(error.message);
    throw error;
  }
  for (const server of handle.servers()) {
    // A server that opted out of the sandbox is said, so the person running it sees what runs unconfined.
    const config = servers[server.name];
    const unsandboxed = "command" in config && config.sandbox === false ? ' · not sandboxed ("sandbox": false)' : "";
    io.stderr.write(`mcp ${server.name} · ${server.tools} tool${server.tools === 1 ? "" : "s"}${unsandboxed}\n`);
  }
  return handle;
}

function sandboxSummary(sandbox: RunSettings["sandbox"]): string {
  const mode = typeof sandbox === "string" ? sandbox : (sandbox?.mode ?? "auto");
  if (mode === "off" || typeof sandbox !== "object") return mode;
  const network = sandbox.network === undefined || sandbox.network === "none" ? "no network" : sandbox.network === "host" ? "host network" : `network ${sandbox.network.allow.join(", ")}`;
  return `${mode} (${network})`;
}

/** The dim line at the top of human output: which model, where, with which permissions. */
export function headerLine(style: Style, prepared: PreparedAgent): string {
  const { settings, created } = prepared;
  const parts = [
    "statecraft",
    `model ${created.description}${
      created.nameFrom === "server" ? " (the server's first model; set STATECRAFT_MODEL to choose)" : created.nameFrom === "default" ? " (the default; set STATECRAFT_MODEL to choose)" : ""
    }`,
    ...(created.provider !== undefined ? [`provider ${created.provider}`] : []),
    `cwd ${settings.cwd}`,
    `permissions ${settings.permissions.mode ?? "default"}`,
    `sandbox ${sandboxSummary(settings.sandbox)}`,
  ];
  if (settings.sessionId !== undefined) parts.push(`session ${settings.sessionId}`);
  return style.dim(parts.join(" · "));
}
