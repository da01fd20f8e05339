import { AgentError } from "../errors/agent-error.js";
import type { AnyTool } from "../tools/define-tool.js";
import type * as ConfigModule from "./config.js";
import type { McpServers, McpToolsOptions } from "./config.js";
import type { McpConnection } from "./connection.js";
import { checkUnique } from "./names.js";
import type { McpToolListing } from "./tool.js";

export type { McpServers, McpServerConfig, McpStdioServer, McpHttpServer, McpToolsOptions, McpProtocol } from "./config.js";
export { mcpToolName, mcpToolRisk } from "./names.js";

/** What `mcpTools()` gives: the servers' tools and the way to stop the servers. */
export interface McpToolsHandle {
  /**
   * All servers' tools, ready for `query({ tools })`. The same array is kept current when a server sends
   * `notifications/tools/list_changed` (a run takes the tools as they are when it starts).
   */
  readonly tools: AnyTool[];
  /** Each server's name and how many tools it offers now. */
  servers(): Array<{ name: string; tools: number }>;
  /**
   * The protocol revision spoken with a server now: `"2026-07-28"` (stateless) or the 2025 revision its `initialize`
   * answered with (`"2025-11-25"`, `"2025-06-18"`, … `"2024-11-05"`); undefined while it is not connected.
   */
  protocol(server: string): string | undefined;
  /** Closes every connection and ends every stdio server's process. Safe to call more than once. */
  close(): Promise<void>;
}

/**
 * Connects to MCP servers (stdio or Streamable HTTP), lists their tools and offers them as statecraft tools named
 * `mcp__<server>__<tool>`. A server that does not start fails the whole call with `MCP_SERVER_FAILED` (naming it,
 * with its stderr tail) after the others are closed again. The SDK is loaded here, on first use, so importing
 * statecraft stays cheap for programs that use no MCP server.
 */
export async function mcpTools(servers: McpServers, options: McpToolsOptions = {}): Promise<McpToolsHandle> {
  // The checks and the tool wrapping load with the SDK: `import "statecraft"` loads none of them.
  const loaded = await Promise.all([import("./config.js"), import("./tool.js")]);
  // Typed by name: TypeScript calls an assertion function only through a name declared with its type.
  const config: typeof ConfigModule = loaded[0];
  const { toStatecraftTool } = loaded[1];
  config.checkServers(servers);
  config.checkOptions(options);
  servers = config.expandHeaders(servers);
  const { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_MAX_RESTARTS, DEFAULT_MCP_TIMEOUT_MS } = config;
  const { McpConnection } = await import("./connection.js");
  const onProblem = options.onProblem ?? ((message: string) => process.emitWarning(message, { code: "STATECRAFT_MCP" }));
  const tools: AnyTool[] = [];
  const byServer = new Map<string, AnyTool[]>();
  const connections: McpConnection[] = [];

  // The newest listing of each server: a list_changed may arrive while the first listing is still under way.
  const listings = new Map<string, McpToolListing[]>();
  let started = false;

  // Rebuilds the shared array in configuration order, so a list change of one server leaves the others' tools in place.
  const publish = () => {
    tools.splice(0, tools.length, ...Object.keys(servers).flatMap((name) => byServer.get(name) ?? []));
  };
  const build = (connection: McpConnection, listed: McpToolListing[]): AnyTool[] => {
    const config = servers[connection.server];
    const settings = { risk: options.risk, timeoutMs: config.timeoutMs ?? options.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS };
    const built: Array<{ tool: AnyTool; origin: string }> = [];
    for (const listing of listed) {
      try {
        built.push({ tool: toStatecraftTool(connection, listing, settings), origin: `"${listing.name}" of server "${connection.server}"` });
      } catch (error) {
        // One bad schema costs that tool, not the server.
        onProblem(`MCP server "${connection.server}": tool "${listing.name}" is unavailable: ${(error as Error).message}`);
      }
    }
    const others = new Map<string, string>();
    for (const [server, list] of byServer) if (server !== connection.server) for (const t of list) others.set(t.name, `a tool of server "${server}"`);
    checkUnique(built.map((b) => ({ name: b.tool.name, origin: b.origin })), others);
    return built.map((b) => b.tool);
  };

  try {
    const opened = await Promise.all(
      Object.keys(servers).map(async (name) => {
        const connection: McpConnection = new McpConnection(name, servers[name], {
          connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
          maxRestarts: options.maxRestarts ?? DEFAULT_MAX_RESTARTS,
          onProblem,
          launch: { ...(options.sandbox !== undefined ? { sandbox: options.sandbox } : {}), ...(options.workspace !== undefined ? { workspace: options.workspace } : {}) },
          onToolsChanged: (listed) => {
            listings.set(name, listed as McpToolListing[]);
            if (!started) return;
            try {
              byServer.set(name, build(connection, listed as McpToolListing[]));
              publish();
            } catch (error) {
              onProblem(`MCP server "${name}": its new tool list was refused, the old one is kept: ${(error as Error).message}`);
            }
          },
        });
        connections.push(connection);
        const first = (await connection.start()) as McpToolListing[];
        if (!listings.has(name)) listings.set(name, first);
        return connection;
      }),
    );
    for (const connection of opened) byServer.set(connection.server, build(connection, listings.get(connection.server) ?? []));
  } catch (error) {
    await Promise.all(connections.map((c) => c.close()));
    throw error instanceof AgentError ? error : new AgentError("MCP_SERVER_FAILED", (error as Error).message, { cause: error });
  }
  started = true;
  publish();

  let closing: Promise<void> | undefined;
  return {
    tools,
    servers: () => Object.keys(servers).map((name) => ({ name, tools: byServer.get(name)?.length ?? 0 })),
    protocol: (server) => connections.find((c) => c.server === server)?.protocolVersion,
    close: () => (closing ??= Promise.all(connections.map((c) => c.close())).then(() => undefined)),
  };
}
