import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import type { McpServer } from "@modelcontextprotocol/server";
import { AgentError } from "../errors/agent-error.js";
import { agentFolder } from "../record/agent-folder.js";
import { AgentRun } from "./agent-run.js";
import { checkHttpOptions, checkServerOptions, DEFAULT_ASK_TIMEOUT_MS, DEFAULT_TOOL_DESCRIPTION, DEFAULT_TOOL_NAME, type McpHttpOptions, type McpServerOptions } from "./options.js";
import type { RunHost, ServerSdk } from "./run-tool.js";

export type { McpServerOptions, McpHttpOptions } from "./options.js";

/** A running HTTP endpoint. */
export interface McpHttpEndpoint {
  /** Where hosts connect: `http://127.0.0.1:<port>/mcp`. */
  url: string;
  /** The bearer token each request must carry. */
  token: string;
  close(): Promise<void>;
}

/** The agent as an MCP server: serve it on stdio, over HTTP, or both. */
export interface StatecraftMcpServer {
  /** Serves one host on stdin/stdout (or the streams given), speaking whichever generation the host opens with. */
  serveStdio(streams?: { stdin?: Readable; stdout?: Writable }): Promise<{ close(): Promise<void> }>;
  /** Serves Streamable HTTP on 127.0.0.1 (both generations), behind a bearer token, an Origin check and a body limit. */
  listen(options?: McpHttpOptions): Promise<McpHttpEndpoint>;
  /** Stops every endpoint and aborts the runs still going (they end `user_abort`). */
  close(): Promise<void>;
}

/**
 * Exposes a statecraft agent as an MCP server with one tool, `run_agent` ({ prompt, sessionId? }), and each session's
 * trace and summary as resources. Each call is one run of the agent; a permission question goes to the host as an
 * elicitation when it can answer one, else the agent's own permission mode and rules decide (an unanswerable question
 * is denied). Loads `@modelcontextprotocol/server` (an optional peer dependency) when called.
 */
export async function mcpServer(options: McpServerOptions): Promise<StatecraftMcpServer> {
  checkServerOptions(options);
  const sdk = await loadSdk();
  const [{ registerRunTool }, { registerSessionResources }] = await Promise.all([import("./run-tool.js"), import("./session-resources.js")]);
  const agent = options.agent;
  const cwd = agent.cwd ?? process.cwd();
  const traceFile = agent.store === "memory" || agent.traceFile === false ? false : (agent.traceFile ?? join(agentFolder(cwd), "trace.jsonl"));
  const info = options.serverInfo ?? { name: "statecraft", version: "0.1.0" };
  const tool = { name: options.toolName ?? DEFAULT_TOOL_NAME, description: options.toolDescription ?? DEFAULT_TOOL_DESCRIPTION };
  const askTimeoutMs = options.askTimeoutMs ?? DEFAULT_ASK_TIMEOUT_MS;
  // One process serves every round of a call, so a key of its own signs the state the host echoes back.
  const codec = sdk.createRequestStateCodec<{ run: string }>({ key: randomBytes(32), ttlSeconds: Math.ceil(askTimeoutMs / 1000) + 60 });

  const runs = new Map<string, AgentRun>();
  const timers = new Map<string, NodeJS.Timeout>();
  const host: RunHost = {
    start(input, askHost) {
      const run: AgentRun = new AgentRun(input.prompt, { ...agent, ...(input.sessionId ? { sessionId: input.sessionId } : {}) }, askHost, () => {
        runs.delete(run.key);
        clearTimeout(timers.get(run.key));
        timers.delete(run.key);
      });
      runs.set(run.key, run);
      return run;
    },
    find: (key) => runs.get(key),
    waiting(run) {
      // A host that never answers does not keep the run (and its tools' processes) forever.
      timers.set(run.key, setTimeout(() => run.abort(), askTimeoutMs).unref());
    },
    answered(run) {
      clearTimeout(timers.get(run.key));
      timers.delete(run.key);
    },
  };

  const factory = (): McpServer => {
    const server = new sdk.McpServer(info, { capabilities: { tools: {}, resources: {} }, requestState: { verify: codec.verify } });
    registerRunTool(sdk, server, host, tool, (payload) => codec.mint(payload));
    registerSessionResources(sdk, server, traceFile);
    return server;
  };

  const closers = new Set<() => Promise<void>>();
  return {
    async serveStdio(streams = {}) {
      const { serveStdio, StdioServerTransport } = await import("@modelcontextprotocol/server/stdio");
      const handle = serveStdio(factory, { transport: new StdioServerTransport(streams.stdin, streams.stdout) });
      const close = () => handle.close();
      closers.add(close);
      return { close: () => (closers.delete(close), close()) };
    },
    async listen(httpOptions = {}) {
      checkHttpOptions(httpOptions);
      const { listenHttp } = await import("./http.js");
      const endpoint = await listenHttp(sdk, factory, httpOptions);
      closers.add(endpoint.close);
      return { ...endpoint, close: () => (closers.delete(endpoint.close), endpoint.close()) };
    },
    async close() {
      for (const run of runs.values()) run.abort();
      await Promise.all([...closers].map((close) => close()));
      closers.clear();
    },
  };
}

async function loadSdk(): Promise<ServerSdk> {
  try {
    return await import("@modelcontextprotocol/server");
  } catch (error) {
    throw new AgentError(
      "INVALID_OPTIONS",
      `mcpServer() needs the MCP server SDK: npm install @modelcontextprotocol/server@2 @modelcontextprotocol/node@2 (${(error as Error).message})`,
      { cause: error },
    );
  }
}
