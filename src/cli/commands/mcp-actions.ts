import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { AgentError } from "../../errors/agent-error.js";
import type { QueryOptions } from "../../options.js";
import type { CliContext } from "../context.js";
import { setupOutput } from "../context.js";
import { listenForInterrupts } from "../interrupts.js";
import type { RunFlags } from "../run-flags.js";
import { UsageError } from "../usage-error.js";
import { closeAgent, prepareAgent, type PreparedAgent } from "./prepare-agent.js";

export interface McpServeFlags extends RunFlags {
  http?: number;
  tokenFile?: string;
  allowOrigin?: string[];
  toolName?: string;
  toolDescription?: string;
  color?: boolean;
}

export interface McpLoginFlags {
  cwd?: string;
  mcpConfig?: string;
  port?: number;
}

/** `statecraft mcp serve`: the agent of --cwd as an MCP server until the host goes away (stdio) or Ctrl-C (HTTP). */
export async function mcpServeAction(flags: McpServeFlags, context: CliContext): Promise<number> {
  const { io } = context;
  if (flags.http === undefined && (flags.tokenFile !== undefined || flags.allowOrigin !== undefined)) {
    throw new UsageError("--token-file and --allow-origin go with --http (stdio needs no token: only the host that started the server talks to it).");
  }
  const output = setupOutput(io, flags);
  const prepared = await prepareAgent(flags, io, output.logger);
  try {
    const { mcpServer } = await import("../../mcp-server/index.js");
    let server: Awaited<ReturnType<typeof mcpServer>>;
    try {
      server = await mcpServer({
        agent: agentOptions(prepared, output.logger),
        ...(flags.toolName !== undefined ? { toolName: flags.toolName } : {}),
        ...(flags.toolDescription !== undefined ? { toolDescription: flags.toolDescription } : {}),
      });
    } catch (error) {
      if (error instanceof AgentError && error.code === "INVALID_OPTIONS") throw new UsageError(error.message);
      throw error;
    }
    if (flags.http === undefined) {
      const stdin = io.stdin as NodeJS.ReadableStream;
      const ended = new Promise<void>((done) => {
        stdin.once("end", done);
        stdin.once("close", done);
      });
      await server.serveStdio({ stdin: io.stdin as never, stdout: io.stdout as never });
      // The host closing our stdin is the end of the session (the MCP stdio binding); a signal ends it too.
      const stop = listenForInterrupts(() => void server.close());
      await Promise.race([ended, new Promise<void>((done) => process.once("SIGTERM", done))]);
      stop();
      await server.close();
      return 0;
    }
    const token = flags.tokenFile !== undefined ? tokenFromFile(resolve(io.cwd, flags.tokenFile)) : undefined;
    let endpoint;
    try {
      endpoint = await server.listen({ port: flags.http, ...(token ? { token } : {}), ...(flags.allowOrigin ? { allowOrigins: flags.allowOrigin } : {}) });
    } catch (error) {
      if (error instanceof AgentError) throw new UsageError(error.message);
      throw new UsageError(`can't serve on 127.0.0.1:${flags.http}: ${(error as Error).message}`);
    }
    io.stdout.write(`MCP server: ${endpoint.url}\n`);
    io.stdout.write(flags.tokenFile !== undefined ? `bearer token: in ${resolve(io.cwd, flags.tokenFile)}\n` : `bearer token: ${endpoint.token}\n`);
    await new Promise<void>((done) => {
      const stop = listenForInterrupts(() => {
        stop();
        done();
      });
    });
    await server.close();
    return 0;
  } finally {
    await closeAgent(prepared);
  }
}

/** The run options of every call: the flags' settings, as `statecraft run` would use them. */
function agentOptions(prepared: PreparedAgent, logger: QueryOptions["logger"]): Omit<QueryOptions, "signal" | "sessionId" | "inspect"> {
  const { params } = prepared;
  return {
    model: prepared.created.model,
    tools: prepared.tools,
    cwd: params.cwd,
    permissions: { ...(params.permissions.mode !== undefined ? { mode: params.permissions.mode } : {}), allow: params.permissions.allow, ask: params.permissions.ask, deny: params.permissions.deny },
    ...(logger ? { logger } : {}),
    ...(params.maxTurns !== undefined ? { maxTurns: params.maxTurns } : {}),
    ...(params.maxToolCalls !== undefined ? { maxToolCalls: params.maxToolCalls } : {}),
    ...(params.timeoutMs !== undefined ? { timeoutMs: params.timeoutMs } : {}),
    ...(params.systemPrompt !== undefined ? { systemPrompt: params.systemPrompt } : {}),
    ...(params.traceFile !== undefined ? { traceFile: params.traceFile } : {}),
  };
}

/** The token of --token-file; a missing file is made (0600) with a new token, so a host's configuration can read it. */
function tokenFromFile(file: string): string {
  if (!existsSync(file)) {
    writeFileSync(file, `${randomBytes(24).toString("base64url")}\n`, { mode: 0o600, flag: "wx" });
    chmodSync(file, 0o600);
  }
  const token = readFileSync(file, "utf8").trim();
  if (token.length < 16 || /\s/.test(token)) throw new UsageError(`${file}: the token must be one line of at least 16 characters without spaces`);
  return token;
}

/** `statecraft mcp login <server>`. */
export async function mcpLoginAction(server: string, flags: McpLoginFlags, context: CliContext): Promise<number> {
  const { loginToServer } = await import("../mcp-login.js");
  return loginToServer(server, flags, context.io);
}
