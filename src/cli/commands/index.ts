import type { CliCommand } from "../context.js";
import { chatCommand } from "./chat.js";
import { demoCommand } from "./demo.js";
import { inspectCommand } from "./inspect.js";
import { mcpCommand } from "./mcp.js";
import { runCommand } from "./run.js";
import { resumeCommand } from "./resume.js";
import { runsCommand } from "./runs.js";
import { traceCommand } from "./trace.js";
import { trustCommand } from "./trust.js";
import { abortCommand, answerCommand, enqueueCommand, watchCommand, workerCommand } from "./scale-out.js";
import { serveCommand } from "./serve.js";

/**
 * The subcommands of `statecraft`, in the order `--help` lists them. A new command is a file in this folder that
 * exports a `CliCommand`, added here
 */
export const COMMANDS: readonly CliCommand[] = [
  runCommand,
  runsCommand,
  resumeCommand,
  chatCommand,
  demoCommand,
  traceCommand,
  inspectCommand,
  trustCommand,
  workerCommand,
  enqueueCommand,
  answerCommand,
  abortCommand,
  watchCommand,
  mcpCommand,
  serveCommand,
];
