import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { AgentError } from "../../errors/agent-error.js";
import type { AgentEvent } from "../../events.js";
import type { PermissionAnswer } from "../../permissions/types.js";
import { builtinTools } from "../../tools/builtin/index.js";
import { resolveRunSettings } from "../config.js";
import { setupOutput, type CliContext } from "../context.js";
import { EXIT_CODES, exitCodeFor } from "../exit-codes.js";
import { createModel } from "../model-factory.js";
import { HumanRenderer, JsonRenderer } from "../render.js";
import type { RunFlags } from "../run-flags.js";
import { UsageError } from "../usage-error.js";

type Flags = Record<string, unknown>;

/** statecraft/dbos, loaded only by these commands (DBOS is an optional dependency). */
async function dbos() {
  try {
    return await import("../../dbos/index.js");
  } catch (error) {
    throw new UsageError(`statecraft/dbos needs @dbos-inc/dbos-sdk and pg: npm install @dbos-inc/dbos-sdk@5 pg (${(error as Error).message})`);
  }
}

/** --database, else STATECRAFT_DATABASE_URL. */
export function databaseOf(flags: Flags, env: NodeJS.ProcessEnv): string {
  const url = (flags.database as string | undefined) ?? env.STATECRAFT_DATABASE_URL;
  if (!url) throw new UsageError("give the runs' PostgreSQL: --database postgres://user@host:port/db, or set STATECRAFT_DATABASE_URL");
  return url;
}

/**
 * The worker's database: `--database-file` (its first line), else `--database`, else STATECRAFT_DATABASE_URL. A URL
 * given on the command line is wiped from this process's own (`/proc/<pid>/cmdline`, what `ps` shows) once read.
 */
export function workerDatabaseOf(flags: Flags, env: NodeJS.ProcessEnv, cwd: string): { url: string; file?: string } {
  const given = flags.databaseFile as string | undefined;
  const file = given === undefined ? undefined : resolve(cwd, given);
  if (file === undefined) {
    const url = databaseOf(flags, env);
    if (flags.database !== undefined) process.title = "statecraft worker";
    return { url };
  }
  if (flags.database !== undefined) throw new UsageError("--database and --database-file can't go together: give the URL one way");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new UsageError(`--database-file ${file}: can't read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); write the PostgreSQL URL in it, e.g. postgres://user:password@127.0.0.1:5432/db`);
  }
  const url = text.split(/\r?\n/).find((line) => line.trim() !== "")?.trim();
  if (url === undefined) throw new UsageError(`--database-file ${file} is empty; write the PostgreSQL URL in it, e.g. postgres://user:password@127.0.0.1:5432/db`);
  return { url, file };
}

/** Bad input and an unreachable database are said like usage mistakes (exit 2), never as a crash. */
function said(error: unknown): never {
  if (error instanceof AgentError) throw new UsageError(error.message);
  throw error;
}

/** `statecraft worker`: a worker until SIGINT/SIGTERM, which stops it (its runs are handed back) and exits 0. */
export async function workerAction(flags: Flags, context: CliContext): Promise<number> {
  const { io } = context;
  const { url: database, file: databaseFile } = workerDatabaseOf(flags, io.env, io.cwd);
  const output = setupOutput(io, flags as { logLevel?: string; color?: boolean });
  const settings = resolveRunSettings(flags as RunFlags, io.env, io.cwd);
  for (const warning of settings.warnings) io.stderr.write(`statecraft: ${warning}\n`);
  const { createWorker, turnScriptFile } = await dbos();
  // A script is played by the turn each request is at: a run picked up halfway gets its own next step.
  const model = settings.model.kind === "script" ? turnScriptFile(settings.model.file) : (await createModel(settings.model, output.logger)).model;
  const worker = (() => {
    try {
      return createWorker({
        database,
        model,
        tools: flags.tools === "builtin" ? builtinTools() : [],
        cwd: settings.cwd,
        permissions: settings.permissions,
        ...(typeof flags.concurrency === "number" ? { concurrency: flags.concurrency } : {}),
        ...(typeof flags.id === "string" ? { id: flags.id } : {}),
        logger: output.logger,
        ...(settings.sandbox !== undefined ? { sandbox: settings.sandbox } : {}),
        ...(databaseFile !== undefined ? { databaseFile } : {}),
      });
    } catch (error) {
      said(error);
    }
  })();
  await worker.start().catch(said);
  io.stderr.write(`statecraft: worker ${worker.id} takes runs (cwd ${settings.cwd}); Ctrl-C stops it\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await worker.stop();
  io.stderr.write(`statecraft: worker ${worker.id} stopped; what it held is back on the queue\n`);
  return 0;
}

export async function enqueueAction(prompt: string, flags: Flags, context: CliContext): Promise<number> {
  const { io } = context;
  const database = databaseOf(flags, io.env);
  const { enqueueRun, closeClients } = await dbos();
  const rules = { ...(flags.ask ? { ask: flags.ask as string[] } : {}), ...(flags.deny ? { deny: flags.deny as string[] } : {}) };
  try {
    const ids = await enqueueRun(prompt, {
      database,
      ...(typeof flags.session === "string" ? { sessionId: flags.session } : {}),
      ...(flags.wait === false ? { wait: false } : {}),
      ...(typeof flags.maxTurns === "number" ? { maxTurns: flags.maxTurns } : {}),
      ...(typeof flags.maxToolCalls === "number" ? { maxToolCalls: flags.maxToolCalls } : {}),
      ...(typeof flags.systemPrompt === "string" ? { systemPrompt: flags.systemPrompt } : {}),
      ...(Object.keys(rules).length > 0 ? { permissions: rules } : {}),
    });
    io.stdout.write(flags.json ? `${JSON.stringify(ids)}\n` : `queued: session ${ids.sessionId} run ${ids.runId}\n  statecraft watch ${ids.sessionId}\n`);
    return 0;
  } catch (error) {
    said(error);
  } finally {
    await closeClients();
  }
}

export async function answerAction(session: string, flags: Flags, context: CliContext): Promise<number> {
  const { io } = context;
  const database = databaseOf(flags, io.env);
  if (flags.allowAll && flags.denyAll) throw new UsageError("--allow-all and --deny-all can't go together.");
  const { answer, listRuns, closeClients } = await dbos();
  try {
    const suspended = (await listRuns({ database, status: ["suspended"] })).filter((r) => r.sessionId === session && (flags.run === undefined || r.runId === flags.run));
    if (suspended.length === 0) throw new UsageError(`session ${session} has no suspended run in the database (statecraft runs --database lists the runs)`);
    const run = suspended[suspended.length - 1];
    const pending = (run.pending ?? []).map((c) => c.callId);
    const answers: Record<string, PermissionAnswer> = {};
    for (const id of pending) {
      if (flags.allowAll) answers[id] = "allow";
      if (flags.denyAll) answers[id] = "deny";
    }
    for (const [list, verdict] of [[flags.allow, "allow"], [flags.deny, "deny"]] as const) {
      for (const id of (list as string[] | undefined) ?? []) {
        if (!pending.includes(id)) throw new UsageError(`${id} is not a pending call of session ${session} (pending: ${pending.join(", ") || "none"}).`);
        answers[id] = verdict;
      }
    }
    await answer({ database, sessionId: session, runId: run.runId, answers, answeredBy: typeof flags.by === "string" ? flags.by : `statecraft answer (pid ${process.pid})` });
    io.stdout.write(`answered ${Object.keys(answers).length} of ${pending.length} pending calls of run ${run.runId}; a worker goes on with it\n`);
    return 0;
  } catch (error) {
    said(error);
  } finally {
    await closeClients();
  }
}

/** `statecraft abort`: the session's run (its latest not finished, or --run) ends user_abort. */
export async function abortAction(session: string, flags: Flags, context: CliContext): Promise<number> {
  const { io } = context;
  const database = databaseOf(flags, io.env);
  const { abortRun, listRuns, closeClients } = await dbos();
  try {
    const runs = (await listRuns({ database })).filter((r) => r.sessionId === session && (flags.run === undefined ? r.status !== "finished" : r.runId === flags.run));
    const run = runs[runs.length - 1];
    if (!run) throw new UsageError(flags.run === undefined ? `session ${session} has no run that has not finished in the database (statecraft runs --database lists the runs)` : `session ${session} has no run ${String(flags.run)} in the database`);
    const { status } = await abortRun({ database, sessionId: session, runId: run.runId, abortedBy: typeof flags.by === "string" ? flags.by : `statecraft abort (pid ${process.pid})` });
    io.stdout.write(status === "finished" ? `aborted run ${run.runId}: it had not started, and never will (user_abort)\n` : `aborting run ${run.runId}: its worker stops it (user_abort); statecraft watch ${session} follows it to its end\n`);
    return 0;
  } catch (error) {
    said(error);
  } finally {
    await closeClients();
  }
}

export async function watchAction(session: string, flags: Flags, context: CliContext): Promise<number> {
  const { io } = context;
  const database = databaseOf(flags, io.env);
  const output = setupOutput(io, flags as { logLevel?: string; color?: boolean });
  const { watch, listRuns, closeClients } = await dbos();
  const renderer = flags.json ? new JsonRenderer(io.stdout) : new HumanRenderer(io.stdout, { style: output.out, spinner: false, thinking: false });
  try {
    const runs = (await listRuns({ database })).filter((r) => r.sessionId === session && (flags.run === undefined || r.runId === flags.run));
    if (runs.length === 0) throw new UsageError(`session ${session} has no run in the database (statecraft runs --database lists them)`);
    const run = runs[runs.length - 1];
    let end: Extract<AgentEvent, { type: "turn_end" }> | undefined;
    for await (const event of watch({ database, sessionId: session, runId: run.runId })) {
      renderer.event(event);
      if (event.type === "suspended" && !flags.json) io.stderr.write(`statecraft: waiting for an answer (statecraft answer ${session} --allow ${event.pending[0]?.callId ?? "ID"})\n`);
      if (event.type === "turn_end") end = event;
    }
    renderer.close();
    return end ? exitCodeFor(end.reason) : EXIT_CODES.crash;
  } catch (error) {
    said(error);
  } finally {
    await closeClients();
  }
}

/** `statecraft runs --database`: the database's runs, queued to finished. */
export async function databaseRunsAction(flags: Flags, context: CliContext): Promise<number> {
  const { io } = context;
  const database = databaseOf(flags, io.env);
  const { listRuns, closeClients } = await dbos();
  try {
    const runs = await listRuns({ database });
    if (flags.json) {
      for (const run of runs) io.stdout.write(`${JSON.stringify(run)}\n`);
      return 0;
    }
    if (runs.length === 0) io.stdout.write("no runs in the database\n");
    for (const run of runs) {
      const when = run.endedAt ?? run.startedAt ?? run.enqueuedAt;
      io.stdout.write(`${run.sessionId}  ${run.status}${run.reason ? ` (${run.reason})` : run.error ? ` (${run.error.code})` : ""} since ${when}  run ${run.runId}${run.worker ? ` on ${run.worker}` : ""}\n`);
      for (const call of run.pending ?? []) io.stdout.write(`    ${call.callId}  ${call.name} ${JSON.stringify(call.input)}\n`);
      if (run.error && !run.reason) io.stdout.write(`    ${run.error.message}\n`);
      if (run.status === "suspended" && run.pending?.[0]) io.stdout.write(`    statecraft answer ${run.sessionId} --allow ${run.pending[0].callId}\n`);
    }
    return 0;
  } catch (error) {
    said(error);
  } finally {
    await closeClients();
  }
}
