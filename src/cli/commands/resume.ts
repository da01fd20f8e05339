import { Option, type Command } from "commander";
import type { CliCommand, CliContext } from "../context.js";
import { LOG_LEVELS } from "../log-levels.js";

export interface ResumeCommandFlags {
  cwd?: string;
  model?: string;
  baseUrl?: string;
  trustProject?: boolean;
  logLevel?: string;
  allow?: string[];
  deny?: string[];
  allowAll?: boolean;
  denyAll?: boolean;
  json?: boolean;
  color?: boolean;
  sandbox?: "auto" | "required" | "off";
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export const resumeCommand: CliCommand = {
  name: "resume",
  register(program: Command, context: CliContext) {
    program
      .command("resume")
      .description("resume a suspended or interrupted run of <cwd>/.agent/ (statecraft runs lists them), answering its pending calls")
      .argument("<session>", "the run's session id")
      .option("-C, --cwd <dir>", "the workspace the run belongs to (default: the current folder)")
      .option("-m, --model <name>", "model name, or script:<file.json> (default: the one the run recorded, else as for run)")
      .option("--base-url <url>", "the provider's server (default: the one the run recorded, else as for run); it gets the provider's key (OPENAI_API_KEY, ANTHROPIC_API_KEY)")
      .option("--allow <id>", "allow the pending call with this id (repeatable)", collect)
      .option("--deny <id>", "deny the pending call with this id (repeatable)", collect)
      .option("--allow-all", "allow every pending call")
      .option("--deny-all", "deny every pending call")
      .option("--json", "print one AgentEvent per line (NDJSON) on stdout, nothing else")
      .option("--trust-project", "trust statecraft.config.json in --cwd for this run (as for run)")
      .addOption(new Option("--sandbox <mode>", "sandbox of every process the run starts (as for run): auto, required or off").choices(["auto", "required", "off"]))
      .addOption(new Option("--log-level <level>", "operational logs on stderr (default warn, or STATECRAFT_LOG_LEVEL)").choices(LOG_LEVELS))
      .addHelpText("after", "\nCalls without an answer are asked on the terminal, as run does; with no terminal they suspend again (exit 10).\nExit codes: as for run.")
      .action(async (session: string, flags: ResumeCommandFlags, cmd: Command) => {
        const { resumeAction } = await import("./resume-action.js");
        context.exitCode = await resumeAction(session, { ...cmd.optsWithGlobals(), ...flags }, context);
      });
  },
};
