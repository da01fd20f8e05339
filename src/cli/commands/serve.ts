import { InvalidArgumentError, type Command } from "commander";
import { checkAllowOrigin } from "../../inspect/origins.js";
import type { CliCommand, CliContext } from "../context.js";
import { addMcpFlag, addRunFlags, parsePort } from "../run-flags.js";
import type { ServeFlags } from "./serve-action.js";

/**
 * `statecraft serve [--port N] [--host H] [--database URL] [--token-file F]`: agent runs over HTTP (docs/server.md) in
 * --cwd with the built-in tools and the run flags' permissions, until Ctrl-C.
 */
export const serveCommand: CliCommand = {
  name: "serve",
  register(program: Command, context: CliContext) {
    const command = program.command("serve").description("serve agent runs over HTTP (runs with resumable SSE, approvals, the AI SDK UI stream, AG-UI) in --cwd, until Ctrl-C");
    addMcpFlag(addRunFlags(command))
      .option("--port <n>", "port to listen on (default 8787; 0: a free one)", parsePort)
      .option("--host <host>", "address to listen on (default 127.0.0.1); another needs its name answered: --allow-host")
      .option("--database <url>", "run on the statecraft/dbos queue of this PostgreSQL (a worker in this process; others may join)")
      .option("--token-file <file>", "read the bearer token from this file (default: a new token, printed at start)")
      .option("--allow-host <name>", "answer requests whose Host is this name (host or host:port; repeatable)", collect, [] as string[])
      .option("--allow-origin <url>", "let browser pages of this origin call the server, e.g. http://localhost:5173 (repeatable)", collectOrigin, [] as string[])
      .option("--max-body-bytes <n>", "largest request body read (default 1048576)", parseBytes)
      .addHelpText(
        "after",
        [
          "",
          "Routes: POST /runs, GET /runs/:runId/events (SSE, Last-Event-ID), POST /runs/:runId/answers, POST /runs/:runId/abort,",
          "        GET /runs?sessionId=, GET /sessions/:id, POST /api/chat (AI SDK useChat), POST /ag-ui (AG-UI).",
          "Every request needs Authorization: Bearer <token>. A question nobody can answer suspends the run until it is answered.",
          "",
          "Example:",
          '  statecraft serve --port 8787 --permission-mode default --token-file ~/.config/statecraft/server-token',
        ].join("\n"),
      )
      .action(async (flags: ServeFlags, cmd: Command) => {
        const { serveAction } = await import("./serve-action.js");
        context.exitCode = await serveAction({ ...cmd.optsWithGlobals(), ...flags }, context);
      });
  },
};

function collect(value: string, previous: string[]): string[] {
  if (value.trim() === "" || /[\s/]/.test(value)) throw new InvalidArgumentError(`--allow-host takes a host name or host:port, got ${JSON.stringify(value)}.`);
  return [...previous, value];
}

function collectOrigin(value: string, previous: string[]): string[] {
  try {
    return [...previous, checkAllowOrigin(value, "--allow-origin")];
  } catch (error) {
    throw new InvalidArgumentError(`${(error as Error).message}.`);
  }
}

function parseBytes(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError(`--max-body-bytes takes a whole number of bytes, at least 1, got ${JSON.stringify(value)}.`);
  return n;
}
