import type { Command } from "commander";
import type { CliCommand, CliContext } from "../context.js";
import { parsePort } from "../run-flags.js";

/**
 * `statecraft inspect [trace-file] [--port N] [--open]`: serves the offline inspector on 127.0.0.1 over a trace (or
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
      .option("--open", "open the page in the default browser")
      .addHelpText(
        "after",
        [
          "",
          "Any XState v5 app can connect too:",
          '  createWebSocketInspector({ url: "ws://127.0.0.1:PORT" })   (from @statelyai/inspect)',
        ].join("\n"),
      )
      .action(async (traceFile: string | undefined, flags: { port?: number; open?: boolean }) => {
        const { inspectAction } = await import("./inspect-action.js");
        context.exitCode = await inspectAction(traceFile, flags, context);
      });
  },
};
