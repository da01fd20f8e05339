import { InvalidArgumentError, type Command } from "commander";
import type { CliCommand, CliContext } from "../context.js";
import { addRunFlags, parsePositiveInteger } from "../run-flags.js";

// `statecraft worker | enqueue | answer | abort | watch` (docs/scale-out.md): runs as DBOS workflows on PostgreSQL. Their
// actions load statecraft/dbos only when one of them runs.

const DATABASE_HELP = "the PostgreSQL URL of the runs (default: STATECRAFT_DATABASE_URL)";
const collect = (value: string, previous: string[] = []) => [...previous, value];

function tools(value: string): "builtin" | "none" {
  if (value === "builtin" || value === "none") return value;
  throw new InvalidArgumentError(`--tools takes builtin or none, got ${JSON.stringify(value)}`);
}

export const workerCommand: CliCommand = {
  name: "worker",
  register(program: Command, context: CliContext) {
    const command = program
      .command("worker")
      .description("run queued agent runs of a PostgreSQL database as durable DBOS workflows, until stopped (Ctrl-C, SIGTERM)")
      .option("--database <url>", `${DATABASE_HELP}; a URL given here shows in process listings until the worker has started: prefer --database-file or the variable`)
      .option("--database-file <file>", "read the PostgreSQL URL of the runs from this file (first line), so it is in no command line and no environment; hidden inside the sandbox")
      .option("--concurrency <n>", "at most this many runs active at once on each worker (default 4; a suspended run holds none)", parsePositiveInteger("--concurrency"))
      .option("--tools <set>", "the tools runs get: builtin (read, write, edit, list, glob, grep, bash in --cwd) or none (default)", tools)
      .option("--id <id>", "the worker's stable id, its DBOS executor id (default: host name and folder)");
    addRunFlags(command)
      .addHelpText("after", "\nModel flags as for run (script:FILE too). --allow/--ask/--deny/--permission-mode are the worker's permissions: a run's own rules narrow them.\nA question nobody can answer suspends the run: statecraft answer goes on.\nSuspended runs are signed with $STATECRAFT_RUN_KEY (default: your session key, one machine); every worker of a database must share it.\nThe tools never see the database URL, the run key or PG* variables; inside the sandbox (--sandbox, default auto) they see neither the worker's process nor --database-file.")
      .action(async (flags: Record<string, unknown>, cmd: Command) => {
        const { workerAction } = await import("./scale-out-actions.js");
        context.exitCode = await workerAction({ ...cmd.optsWithGlobals(), ...flags }, context);
      });
  },
};

export const enqueueCommand: CliCommand = {
  name: "enqueue",
  register(program: Command, context: CliContext) {
    program
      .command("enqueue")
      .description("queue an agent run for the workers of a database; prints its session and run ids")
      .argument("<prompt...>", "what the agent should do")
      .option("--database <url>", DATABASE_HELP)
      .option("--session <id>", "continue this session (its runs run one at a time, in order)")
      .option("--no-wait", "refuse (SESSION_BUSY, exit 2) instead of queueing behind a run of the session that has not finished")
      .option("--max-turns <n>", "at most this many model calls", parsePositiveInteger("--max-turns"))
      .option("--max-tool-calls <n>", "at most this many tool executions", parsePositiveInteger("--max-tool-calls"))
      .option("--system-prompt <text>", "system prompt for the model")
      .option("--ask <rule>", "always ask before calls matching a rule (repeatable; narrows the worker's permissions)", collect)
      .option("--deny <rule>", "deny calls matching a rule (repeatable)", collect)
      .option("--json", "print { sessionId, runId } as JSON")
      .action(async (prompt: string[], flags: Record<string, unknown>, cmd: Command) => {
        const { enqueueAction } = await import("./scale-out-actions.js");
        context.exitCode = await enqueueAction(prompt.join(" "), { ...cmd.optsWithGlobals(), ...flags }, context);
      });
  },
};

export const answerCommand: CliCommand = {
  name: "answer",
  register(program: Command, context: CliContext) {
    program
      .command("answer")
      .description("answer the pending calls of a session's suspended run, from any machine; a worker goes on with it")
      .argument("<session>", "the run's session id")
      .option("--database <url>", DATABASE_HELP)
      .option("--run <id>", "the run (default: the session's suspended one)")
      .option("--allow <id>", "allow the pending call with this id (repeatable)", collect)
      .option("--deny <id>", "deny the pending call with this id (repeatable)", collect)
      .option("--allow-all", "allow every pending call")
      .option("--deny-all", "deny every pending call")
      .option("--by <text>", "who or where answered, recorded with the answers")
      .action(async (session: string, flags: Record<string, unknown>, cmd: Command) => {
        const { answerAction } = await import("./scale-out-actions.js");
        context.exitCode = await answerAction(session, { ...cmd.optsWithGlobals(), ...flags }, context);
      });
  },
};

export const abortCommand: CliCommand = {
  name: "abort",
  register(program: Command, context: CliContext) {
    program
      .command("abort")
      .description("stop a session's queued, running or suspended run, from any machine: it ends user_abort")
      .argument("<session>", "the run's session id")
      .option("--database <url>", DATABASE_HELP)
      .option("--run <id>", "the run (default: the session's latest one not finished)")
      .option("--by <text>", "who or where aborted, recorded with the request")
      .action(async (session: string, flags: Record<string, unknown>, cmd: Command) => {
        const { abortAction } = await import("./scale-out-actions.js");
        context.exitCode = await abortAction(session, { ...cmd.optsWithGlobals(), ...flags }, context);
      });
  },
};

export const watchCommand: CliCommand = {
  name: "watch",
  register(program: Command, context: CliContext) {
    program
      .command("watch")
      .description("follow a queued run's events, from the start, live, to its turn_end (across suspension and workers)")
      .argument("<session>", "the run's session id")
      .option("--database <url>", DATABASE_HELP)
      .option("--run <id>", "the run (default: the session's latest)")
      .option("--json", "print one AgentEvent per line (NDJSON) on stdout")
      .addHelpText("after", "\nExit codes: as for run, by the run's stop reason.")
      .action(async (session: string, flags: Record<string, unknown>, cmd: Command) => {
        const { watchAction } = await import("./scale-out-actions.js");
        context.exitCode = await watchAction(session, { ...cmd.optsWithGlobals(), ...flags }, context);
      });
  },
};
