import { resolve } from "node:path";
import { AgentError } from "../../errors/agent-error.js";
import { fileRunStore, runOwner } from "../../durable/file-run-store.js";
import type { CliContext } from "../context.js";
import { EXIT_CODES } from "../exit-codes.js";
import type { RunsFlags } from "./runs.js";

/** `statecraft runs`: the suspended and interrupted runs of a workspace, with what they wait for. */
export async function runsAction(flags: RunsFlags, context: CliContext): Promise<number> {
  const { io } = context;
  const cwd = resolve(io.cwd, flags.cwd ?? ".");
  let runs;
  try {
    runs = await fileRunStore(cwd).list();
  } catch (error) {
    if (error instanceof AgentError) {
      io.stderr.write(`statecraft: ${error.message}\n`);
      return EXIT_CODES.usage;
    }
    throw error;
  }
  const rows = runs
    .map((run) => {
      // A checkpoint whose owner is alive is a run going on, not one to resume.
      const status = run.status === "suspended" ? "suspended" : runOwner(cwd, run.sessionId) === undefined ? "interrupted" : "running";
      const pending = run.status === "suspended" ? run.pending : run.batch.filter((r) => r.status === "pending").map((r) => ({ callId: r.call.id, name: r.call.name, input: r.call.input, reason: "asked when the process died" }));
      return { sessionId: run.sessionId, runId: run.runId, status, since: run.since, pending };
    })
    .filter((row) => row.status !== "running");
  if (flags.json) {
    for (const row of rows) io.stdout.write(`${JSON.stringify(row)}\n`);
    return 0;
  }
  if (rows.length === 0) {
    io.stdout.write(`no suspended or interrupted runs in ${cwd}/.agent/runs\n`);
    return 0;
  }
  for (const row of rows) {
    io.stdout.write(`${row.sessionId}  ${row.status} since ${row.since}  run ${row.runId}\n`);
    for (const call of row.pending) io.stdout.write(`    ${call.callId}  ${call.name} ${JSON.stringify(call.input)}\n`);
    io.stdout.write(`    statecraft resume ${row.sessionId}${row.pending[0] ? ` --allow ${row.pending[0].callId}` : ""}\n`);
  }
  return 0;
}
