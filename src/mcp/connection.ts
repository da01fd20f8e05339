import { Client, ProtocolError, StreamableHTTPClientTransport, type Tool, type Transport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { AgentError } from "../errors/agent-error.js";
import { isStdio, type McpServerConfig, type McpStdioServer } from "./config.js";
import { connectAttempts, type ConnectAttempt } from "./negotiation.js";
import { StoredOAuthProvider } from "./oauth.js";
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
  private listedAt = 0;
  private ttlMs: number | undefined;
  private refreshing = false;
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
      const result = await this.callOn(client, tool, args, options);
      this.refreshIfStale(client);
      return result;
    } catch (error) {
      // An HTTP server that went away shows as a failed request (the connection stays "open"): a failure that is no
      // JSON-RPC answer of the server drops this session, so the next call connects again.
      if (!options.signal.aborted && !(error instanceof ProtocolError) && this.client === client && !isStdio(this.config)) {
        this.client = undefined;
        this.transport = undefined;
        this.lostReason = `the request failed: ${(error as Error).message}`;
        void client.close().catch(() => undefined);
      }
      throw error;
    }
  }

  private async callOn(client: Client, tool: string, args: Record<string, unknown>, options: CallOptions): Promise<McpCallResult> {
    return (await client.callTool({ name: tool, arguments: args }, {
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
    const attempts = connectAttempts(this.config);
    for (let i = 0; ; i++) {
      try {
        return await this.openWith(attempts[i]);
      } catch (error) {
        // A refusal of the handshake (a JSON-RPC error answer) is a server of the other generation: the next way is
        // tried. A crash, a timeout or a closed connection is no verdict, so it fails the start.
        if (i + 1 < attempts.length && error instanceof AgentError && error.cause instanceof ProtocolError) continue;
        throw error;
      }
    }
  }

  private async openWith(attempt: ConnectAttempt): Promise<Client> {
    this.stderr = "";
    const transport = await this.makeTransport(attempt);
    const client = new Client(
      { name: "statecraft", version: "0.1.0" },
      {
        capabilities: {},
        versionNegotiation: { mode: attempt.mode },
        // One handler for both generations: the SDK registers it for `notifications/tools/list_changed` on a 2025
        // connection and opens a `subscriptions/listen` stream for it on a 2026-07-28 one.
        listChanged: {
          tools: {
            debounceMs: 0,
            onChanged: (error, tools) => {
              if (this.client !== client) return;
              if (error || !tools) {
                this.options.onProblem(`MCP server "${this.server}": listing its tools after list_changed failed: ${error?.message ?? "no list"}`);
                return;
              }
              this.listedAt = Date.now();
              this.options.onToolsChanged(tools);
            },
          },
        },
      },
    );
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

  /**
   * How a stdio server is started: inside the sandbox, with the scrubbed environment and the server's own `env` from
   * its config on top (stdio-launch.ts, docs/sandbox.md). What the last start set up is released first.
   */
  private async stdioParameters(config: McpStdioServer) {
    await this.releaseLaunch?.().catch(() => undefined);
    const launch = await stdioLaunch(config, { ...this.options.launch, warn: (message) => this.options.onProblem(`MCP server "${this.server}": ${message}`) });
    this.releaseLaunch = launch.release;
    return { command: launch.command, args: launch.args, env: launch.env, cwd: launch.cwd, stderr: "pipe" as const };
  }

  private async makeTransport(attempt: ConnectAttempt): Promise<Transport> {
    const config = this.config;
    if (isStdio(config)) {
      const parameters = await this.stdioParameters(config);
      // A pinned connection probes on its own process, not on a second copy of it (see negotiation.ts).
      const transport = typeof attempt.mode === "object" ? new InPlaceStdioTransport(parameters) : new StdioClientTransport(parameters);
      transport.stderr?.on("data", (chunk: Buffer) => {
        this.stderr = (this.stderr + chunk.toString("utf8")).slice(-STDERR_TAIL);
      });
      return transport;
    }
    const headers = config.headers ?? {};
    // A server given its own Authorization (a static token) is not sent through OAuth; any other may ask for it (401).
    const staticAuth = Object.keys(headers).some((name) => name.toLowerCase() === "authorization");
    return new StreamableHTTPClientTransport(new URL(config.url), {
      requestInit: { headers },
      ...(staticAuth || config.oauth === false ? {} : { authProvider: new StoredOAuthProvider(this.server, config.url) }),
    });
  }

  /** The protocol revision this connection speaks (`2026-07-28`, `2025-11-25`, …), once connected. */
  get protocolVersion(): string | undefined {
    return this.client?.getNegotiatedProtocolVersion();
  }

  /**
   * All the server's tools. The SDK walks the pages (a server repeating a page ends the walk) and keeps the list as
   * long as the server's `ttlMs` says it stays fresh (`cacheScope` private lists are kept per connection).
   */
  private async listTools(client: Client): Promise<Tool[]> {
    const listed = await client.listTools(undefined, { timeout: this.options.connectTimeoutMs });
    this.listedAt = Date.now();
    const ttlMs: unknown = listed.ttlMs;
    this.ttlMs = typeof ttlMs === "number" ? ttlMs : undefined;
    return listed.tools;
  }

  /**
   * A 2026-07-28 server says how long its tool list stays fresh (`ttlMs`, 0 = at once stale). A server that does not
   * push its changes (no `listChanged` capability) has its list fetched again after a call once that time has
   * passed, without holding the call up; the SDK serves it from its cache while it is fresh.
   */
  private refreshIfStale(client: Client): void {
    if (this.ttlMs === undefined || this.refreshing || client.getServerCapabilities()?.tools?.listChanged) return;
    if (Date.now() - this.listedAt < this.ttlMs) return;
    this.refreshing = true;
    void this.listTools(client)
      .then(
        (tools) => this.options.onToolsChanged(tools),
        (error: Error) => this.options.onProblem(`MCP server "${this.server}": listing its tools again (its list had gone stale) failed: ${error.message}`),
      )
      .finally(() => {
        this.refreshing = false;
      });
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

/** The SDK's stdio transport, probing a pinned revision on the server's own process (the SDK spares subclasses the second process). */
class InPlaceStdioTransport extends StdioClientTransport {}

