import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { McpError, ToolListChangedNotificationSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { AgentError } from "../errors/agent-error.js";
import { isStdio, type McpServerConfig } from "./config.js";
import type { McpCallResult } from "./results.js";
import { stdioLaunch, type StdioLaunchOptions } from "./stdio-launch.js";

/** The SDK's words for an HTTP stream that broke and was not (or could not be) resumed. */
const STREAM_BROKEN = /^(SSE stream disconnected|Maximum reconnection attempts|Failed to reconnect)/;

/** How much of a stdio server's stderr is kept to explain a failure. */
const STDERR_TAIL = 2_000;

export interface ConnectionOptions {
  connectTimeoutMs: number;
  maxRestarts: number;
  onProblem: (message: string) => void;
  /** Called with the server's whole tool list after `notifications/tools/list_changed`. */
  onToolsChanged: (tools: Tool[]) => void;
  /** How a stdio server is started: sandboxed, its environment scrubbed (stdio-launch.ts). */
  launch?: Omit<StdioLaunchOptions, "warn">;
}

export interface CallOptions {
  signal: AbortSignal;
  timeoutMs: number;
  onProgress?: (update: { progress: number; total?: number; message?: string }) => void;
}

/**
 * One MCP server: its client, its transport and, for a stdio server, its child process. A server that goes away
 * (crash, closed connection) is connected again on the next call — at most `maxRestarts` times, then its calls fail
 * with a clear error. This file is the only one that loads the SDK; `mcpTools()` imports it on first use.
 */
export class McpConnection {
  private client: Client | undefined;
  private transport: Transport | undefined;
  private connecting: Promise<Client> | undefined;
  private stderr = "";
  private restarts = 0;
  private closedByUs = false;
  private lostReason: string | undefined;
  /** Ends what the sandbox set up for the stdio server's current process (its proxy, placeholders). */
  private releaseLaunch: (() => Promise<unknown>) | undefined;

  constructor(
    readonly server: string,
    private readonly config: McpServerConfig,
    private readonly options: ConnectionOptions,
  ) {}

  /** Connects and lists the server's tools (all pages). Fails with `MCP_SERVER_FAILED` naming the server and its stderr tail. */
  async start(): Promise<Tool[]> {
    const client = await this.connect();
    return this.listTools(client);
  }

  /** Calls a tool; the signal cancels the request (`notifications/cancelled`). */
  async call(tool: string, args: Record<string, unknown>, options: CallOptions): Promise<McpCallResult> {
    const client = await this.ready();
    try {
      return await this.callOn(client, tool, args, options);
    } catch (error) {
      // An HTTP server that went away shows as a failed request (the connection stays "open"): a failure that is no
      // JSON-RPC answer of the server drops this session, so the next call connects again.
      if (!options.signal.aborted && !(error instanceof McpError) && this.client === client && !isStdio(this.config)) {
        this.client = undefined;
        this.transport = undefined;
        this.lostReason = `the request failed: ${(error as Error).message}`;
        void client.close().catch(() => undefined);
      }
      throw error;
    }
  }

  private async callOn(client: Client, tool: string, args: Record<string, unknown>, options: CallOptions): Promise<McpCallResult> {
    return (await client.callTool({ name: tool, arguments: args }, undefined, {
      signal: options.signal,
      // The engine's own timer (the tool's timeoutMs) ends the call; the SDK's is a backstop a little later.
      timeout: options.timeoutMs + 1_000,
      ...(options.onProgress
        ? { onprogress: (p: { progress: number; total?: number; message?: string }) => options.onProgress?.({ progress: p.progress, total: p.total, message: p.message }) }
        : {}),
    })) as McpCallResult;
  }

  /** Why the connection was lost since the last call (the next call reconnects), or undefined. */
  get lost(): string | undefined {
    return this.lostReason;
  }

  /** Whether a lost server is started (stdio) or connected (HTTP) again on the next call. */
  get canRestart(): boolean {
    return this.restarts < this.options.maxRestarts;
  }

  async close(): Promise<void> {
    this.closedByUs = true;
    const client = this.client;
    const transport = this.transport;
    this.client = undefined;
    this.transport = undefined;
    if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => undefined);
    await (client ? client.close() : transport?.close())?.catch(() => undefined);
    await this.releaseLaunch?.().catch(() => undefined);
  }

  /** The live client, reconnecting a server that went away when restarts remain. */
  private async ready(): Promise<Client> {
    if (this.client) return this.client;
    if (this.closedByUs) throw new AgentError("TOOL_FAILED", `MCP server "${this.server}" was closed`);
    if (this.connecting) return this.connecting;
    if (this.restarts >= this.options.maxRestarts) {
      throw new AgentError(
        "MCP_SERVER_FAILED",
        `MCP server "${this.server}" went away and was restarted ${this.restarts} times already (maxRestarts ${this.options.maxRestarts}); ` +
          `its tools stay unavailable until mcpTools() is called again. Last: ${this.lostReason ?? "unknown"}${this.stderrNote()}`,
      );
    }
    this.restarts++;
    this.options.onProblem(`MCP server "${this.server}" ${isStdio(this.config) ? "restarted" : "reconnected"} (${this.restarts} of at most ${this.options.maxRestarts}) after: ${this.lostReason ?? "connection lost"}`);
    const client = await this.connect();
    this.lostReason = undefined;
    // A restarted server may offer other tools than before: listed again, without holding up this call.
    void this.listTools(client).then(
      (tools) => this.options.onToolsChanged(tools),
      (error: Error) => this.options.onProblem(`MCP server "${this.server}": listing its tools after the restart failed: ${error.message}`),
    );
    return client;
  }

  private connect(): Promise<Client> {
    const connecting = this.open().finally(() => {
      if (this.connecting === connecting) this.connecting = undefined;
    });
    this.connecting = connecting;
    return connecting;
  }

  private async open(): Promise<Client> {
    this.stderr = "";
    const transport = await this.makeTransport();
    const client = new Client({ name: "statecraft", version: "0.1.0" }, { capabilities: {} });
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      if (this.client !== client) return;
      try {
        this.options.onToolsChanged(await this.listTools(client));
      } catch (error) {
        this.options.onProblem(`MCP server "${this.server}": listing its tools after list_changed failed: ${(error as Error).message}`);
      }
    });
    client.onclose = () => {
      if (this.client !== client) return;
      this.client = undefined;
      this.transport = undefined;
      if (!this.closedByUs) this.lostReason ??= `the connection closed${this.exitNote(transport)}`;
    };
    client.onerror = (error) => {
      // The SDK leaves a request pending when the HTTP stream carrying its answer breaks and cannot be resumed:
      // closing the client ends every pending request (with "Connection closed"), and the next call connects again.
      if (this.client !== client || isStdio(this.config) || !STREAM_BROKEN.test(error.message)) return;
      this.lostReason = `the server's stream broke (${error.message})`;
      void client.close().catch(() => undefined);
    };
    try {
      await client.connect(transport, { timeout: this.options.connectTimeoutMs });
    } catch (error) {
      await client.close().catch(() => undefined);
      // Let the process's last words arrive before quoting them.
      await new Promise((resolve) => setTimeout(resolve, 50));
      throw new AgentError(
        "MCP_SERVER_FAILED",
        `MCP server "${this.server}" did not start (${this.describeTarget()}): ${(error as Error).message}${this.stderrNote()}`,
        { cause: error },
      );
    }
    this.client = client;
    this.transport = transport;
    return client;
  }

  private async makeTransport(): Promise<Transport> {
    const config = this.config;
    if (isStdio(config)) {
      // The server's own env from its config over the scrubbed environment, inside the sandbox (docs/sandbox.md).
      await this.releaseLaunch?.().catch(() => undefined);
      const launch = await stdioLaunch(config, { ...this.options.launch, warn: (message) => this.options.onProblem(`MCP server "${this.server}": ${message}`) });
      this.releaseLaunch = launch.release;
      const transport = new StdioClientTransport({ command: launch.command, args: launch.args, env: launch.env, cwd: launch.cwd, stderr: "pipe" });
      transport.stderr?.on("data", (chunk: Buffer) => {
        this.stderr = (this.stderr + chunk.toString("utf8")).slice(-STDERR_TAIL);
      });
      return transport;
    }
    return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers ?? {} } });
  }

  private async listTools(client: Client): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    // Follows pagination; a server repeating a cursor would loop, so a cursor seen before ends the listing.
    const seen = new Set<string>();
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: this.options.connectTimeoutMs });
      tools.push(...page.tools);
      cursor = page.nextCursor;
      if (cursor !== undefined && seen.has(cursor)) break;
      if (cursor !== undefined) seen.add(cursor);
    } while (cursor !== undefined);
    return tools;
  }

  private describeTarget(): string {
    const c = this.config;
    return isStdio(c) ? `command ${[c.command, ...(c.args ?? [])].join(" ")}` : `url ${c.url}`;
  }

  private stderrNote(): string {
    const tail = this.stderr.trim();
    return tail === "" ? "" : `. Its stderr ended with:\n${tail}`;
  }

  private exitNote(transport: Transport): string {
    return transport instanceof StdioClientTransport ? " (the server process ended)" : "";
  }
}
