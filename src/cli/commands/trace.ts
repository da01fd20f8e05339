import type { Command } from "commander";
import type { CliCommand, CliContext } from "../context.js";

/**
 * `statecraft trace list|show|replay|fork|script`, defined with the trace reader (src/cli/commands/trace-actions.ts). That module
 * brings the engine and the tools along, so it is loaded only when the command line names `trace`.
 */
export const traceCommand: CliCommand = {
  name: "trace",
  async register(program: Command, context: CliContext, named: boolean) {
    if (!named) {
      program.command("trace").description("read, show, replay and fork recorded runs, or turn one into a scripted model");
      return;
    }
    const { registerTraceCommands } = await import("./trace-actions.js");
    registerTraceCommands(program, context);
  },
};
