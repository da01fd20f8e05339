import { Option, type Command } from "commander";
import type { CliCommand, CliContext } from "../context.js";
import { LOG_LEVELS } from "../log-levels.js";
import type { DemoFlags } from "./demo-action.js";

export const demoCommand: CliCommand = {
  name: "demo",
  register(program: Command, context: CliContext) {
    program
      .command("demo")
      .description("see an agent fix a failing test in a sample project: offline, no key, nothing of yours touched")
      .option("--json", "print one AgentEvent per line (NDJSON) on stdout; the commentary goes to stderr")
      .addOption(new Option("--log-level <level>", "operational logs on stderr (default warn, or STATECRAFT_LOG_LEVEL)").choices(LOG_LEVELS))
      .action(async (flags: DemoFlags, cmd: Command) => {
        const { demoAction } = await import("./demo-action.js");
        context.exitCode = await demoAction({ ...cmd.optsWithGlobals(), ...flags }, context);
      });
  },
};
