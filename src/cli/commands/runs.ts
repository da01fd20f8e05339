import type { Command } from "commander";
import type { CliCommand, CliContext } from "../context.js";

export interface RunsFlags {
  cwd?: string;
  json?: boolean;
  database?: string;
}

export const runsCommand: CliCommand = {
  name: "runs",
  register(program: Command, context: CliContext) {
    program
      .command("runs")
      .description("list the runs of <cwd>/.agent/ that are suspended (waiting for answers) or were interrupted (their process died)")
      .option("-C, --cwd <dir>", "the workspace whose .agent/runs/ is read (default: the current folder)")
      .option("--json", "print one run per line (NDJSON): { sessionId, runId, status, since, pending }")
      .option("--database <url>", "list the queued, running, suspended, waiting and finished runs of this PostgreSQL instead (statecraft worker)")
      .action(async (flags: RunsFlags, cmd: Command) => {
        if (flags.database !== undefined) {
          const { databaseRunsAction } = await import("./scale-out-actions.js");
          context.exitCode = await databaseRunsAction({ ...cmd.optsWithGlobals(), ...flags }, context);
          return;
        }
        const { runsAction } = await import("./runs-action.js");
        context.exitCode = await runsAction({ ...cmd.optsWithGlobals(), ...flags }, context);
      });
  },
};
