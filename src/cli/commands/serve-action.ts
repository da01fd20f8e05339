import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { AgentError } from "../../errors/agent-error.js";
import type { Model } from "../../models/model.js";
import { setupOutput, type CliContext } from "../context.js";
import type { RunFlags } from "../run-flags.js";
import { UsageError } from "../usage-error.js";
import { closeAgent, prepareAgent } from "./prepare-agent.js";

export interface ServeFlags extends RunFlags {
  port?: number;
  host?: string;
  database?: string;
  tokenFile?: string;
  allowHost?: string[];
  allowOrigin?: string[];
  maxBodyBytes?: number;
  color?: boolean;
}

const DEFAULT_PORT = 8787;

/** `statecraft serve`: serves runs until SIGINT/SIGTERM, then stops (a suspended run stays stored) and exits 0. */
export async function serveAction(flags: ServeFlags, context: CliContext): Promise<number> {
  const { io } = context;
  if (flags.session !== undefined) throw new UsageError("--session is a request's choice with serve: POST /runs { input, sessionId }.");
  const output = setupOutput(io, flags);
  const token = tokenOf(flags);
  const database = flags.database;
  if (database !== undefined && flags.trace !== undefined) throw new UsageError("--trace and --no-trace go without --database: runs on the queue write their trace to the database (statecraft trace show --database reads it).");
  const prepared = await prepareAgent(flags, io, output.logger);
  try {
    const { params } = prepared;
    const model = database && prepared.settings.model.kind === "script" ? await turnScriptModel(prepared.settings.model.file) : prepared.created.model;
    const { serve } = await import("../../server/index.js");
    const host = flags.host ?? "127.0.0.1";
    const port = flags.port ?? DEFAULT_PORT;
    const named = [...(flags.allowHost ?? []), ...(isLoopback(host) || isWildcard(host) ? [] : [host])];
    const server = (() => {
      try {
        return serve({
          model,
          tools: prepared.tools,
          cwd: params.cwd,
          token,
          permissions: { ...(params.permissions.mode !== undefined ? { mode: params.permissions.mode } : {}), allow: params.permissions.allow, ask: params.permissions.ask, deny: params.permissions.deny },
          runOptions: {
            ...(params.maxTurns !== undefined ? { maxTurns: params.maxTurns } : {}),
            ...(params.maxToolCalls !== undefined ? { maxToolCalls: params.maxToolCalls } : {}),
            ...(params.timeoutMs !== undefined ? { timeoutMs: params.timeoutMs } : {}),
            ...(params.systemPrompt !== undefined ? { systemPrompt: params.systemPrompt } : {}),
          },
          ...(database ? { database } : params.traceFile !== undefined ? { traceFile: params.traceFile } : {}),
          hosts: named,
          allowOrigins: flags.allowOrigin ?? [],
          ...(flags.maxBodyBytes !== undefined ? { maxBodyBytes: flags.maxBodyBytes } : {}),
          logger: output.logger,
        });
      } catch (error) {
        if (error instanceof AgentError) throw new UsageError(error.message);
        throw error;
      }
    })();
    const listening = await server.listen(port, host).catch((error: NodeJS.ErrnoException) => {
      throw new UsageError(error.code === "EADDRINUSE" ? `port ${port} on ${host} is in use; pick another with --port (0: a free one)` : `could not listen on ${host}:${port}: ${error.message}`);
    });
    io.stdout.write(`statecraft serve: ${listening.url} (cwd ${params.cwd}${database ? ", runs on the DBOS queue" : ""}); Ctrl-C stops it\n`);
    if (flags.tokenFile === undefined) io.stdout.write(`token: ${token}\n`);
    if (isWildcard(host) && named.length === 0) io.stderr.write("statecraft: listening on every interface, but only Host names 127.0.0.1 and localhost are answered; add --allow-host <name> for the name clients use\n");
    await new Promise<void>((resolve) => {
      process.once("SIGINT", resolve);
      process.once("SIGTERM", resolve);
    });
    await server.close();
    io.stderr.write("statecraft serve: stopped\n");
    return 0;
  } finally {
    await closeAgent(prepared);
  }
}

/** The bearer token: the file's (its first line), or a new one. */
function tokenOf(flags: ServeFlags): string {
  if (flags.tokenFile === undefined) return randomBytes(32).toString("base64url");
  let text: string;
  try {
    text = readFileSync(flags.tokenFile, "utf8");
  } catch (error) {
    throw new UsageError(`--token-file ${flags.tokenFile} can't be read: ${(error as Error).message}`);
  }
  const token = text.split("\n")[0]!.trim();
  if (token.length < 16 || /\s/.test(token)) throw new UsageError(`--token-file ${flags.tokenFile} must hold a token of at least 16 characters without spaces on its first line (e.g. openssl rand -base64 32)`);
  return token;
}

/** With DBOS, a script is played by the turn each request is at (as `statecraft worker` does). */
async function turnScriptModel(file: string): Promise<Model> {
  const { turnScriptFile } = await import("../../dbos/index.js");
  return turnScriptFile(file);
}

const isLoopback = (host: string) => host === "127.0.0.1" || host === "localhost" || host === "::1";
const isWildcard = (host: string) => host === "0.0.0.0" || host === "::";
