import { InvalidArgumentError, type Command } from "commander";
import { checkAllowOrigin } from "../../inspect/origins.js";
import type { CliCommand, CliContext } from "../context.js";
import { parsePort } from "../run-flags.js";

/**
 * `statecraft inspect [trace-file] [--port N] [--max-bytes SIZE] [--allow-origin URL]... [--open]`: serves the offline inspector on 127.0.0.1 over a trace (or
 * empty, for a trace dropped on the page or an XState app connecting through @statelyai/inspect) until Ctrl-C.
 */
export const inspectCommand: CliCommand = {
  name: "inspect",
  register(program: Command, context: CliContext) {
    program
      .command("inspect")
      .description("serve the browser inspector on 127.0.0.1 over a trace file (or for live XState apps), until Ctrl-C")
      .argument("[trace-file]", "a trace to show, e.g. .agent/trace.jsonl (or drop one on the page)")
      .option("--port <n>", "port to listen on (default: a free one)", parsePort)
      .option("--max-bytes <size>", "most memory of records kept for pages that connect later, e.g. 512KB, 64MB (default), 1GB", parseByteSize)
      .option("--allow-origin <url>", "let browser apps of this origin send inspection events, e.g. http://localhost:5173 (repeatable)", collectOrigin, [] as string[])
      .option("--open", "open the page in the default browser")
      .option("--database <url>", "follow the trace lines statecraft/dbos workers write to this PostgreSQL, live: a run appears at its first line, marked ended at its done line (default when no file: STATECRAFT_DATABASE_URL)")
      .addHelpText(
        "after",
        [
          "",
          "Any XState v5 app can connect too:",
          '  createWebSocketInspector({ url: "ws://127.0.0.1:PORT" })   (from @statelyai/inspect)',
          "A browser app (a Vite dev server on http://localhost:5173) needs --allow-origin http://localhost:5173.",
        ].join("\n"),
      )
      .action(async (traceFile: string | undefined, flags: { port?: number; maxBytes?: number; allowOrigin?: string[]; open?: boolean; database?: string }) => {
        const { inspectAction } = await import("./inspect-action.js");
        context.exitCode = await inspectAction(traceFile, flags, context);
      });
  },
};

/** `--allow-origin`, repeatable: each checked as it comes. */
function collectOrigin(value: string, previous: string[]): string[] {
  try {
    return [...previous, checkAllowOrigin(value, "--allow-origin")];
  } catch (error) {
    throw new InvalidArgumentError(`${(error as Error).message}.`);
  }
}

const UNITS: Record<string, number> = { "": 1, b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** `--max-bytes`: a whole number of bytes, or of KB, MB or GB (1024-based). */
export function parseByteSize(value: string): number {
  const match = /^\s*(\d+)\s*([kmg]?b?)\s*$/i.exec(value);
  const unit = match ? UNITS[match[2]!.toLowerCase()] : undefined;
  const n = match && unit !== undefined ? Number(match[1]) * unit : NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new InvalidArgumentError(`--max-bytes takes a size such as 512KB, 64MB or 1GB (or a number of bytes, at least 1), got ${JSON.stringify(value)}.`);
  }
  return n;
}
