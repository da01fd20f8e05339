import { AgentError } from "../errors/agent-error.js";
import { createWorker, enqueueRun, answer, abortRun, watch, listRuns, readLines, closeClients, type Worker } from "../dbos/index.js";
import type { Logger } from "../logger.js";
import type { Message } from "../models/messages.js";
import type { Model } from "../models/model.js";
import type { PermissionOptions } from "../permissions/types.js";
import { transcriptFromLines } from "../record/transcript.js";
import type { AnyTool } from "../tools/define-tool.js";
import { HttpProblem } from "./http-guard.js";
import { errorInfoOf } from "./pump.js";
import { RunLog } from "./run-log.js";
import type { Runner } from "./runner.js";

export interface DbosRunnerOptions {
  database: string;
  model: Model;
  tools: readonly AnyTool[];
  cwd: string;
  permissions: Omit<PermissionOptions, "onAsk" | "whenUnanswered">;
  logger?: Logger;
}

/**
 * Runs on the statecraft/dbos queue: a run is enqueued, a worker (this process's, or any other of the database) runs
 * it, and its events are followed from the database into the run's log. A question suspends the run in the database;
 * an answer is `answer()`, and a worker goes on with it. Runs of the database this server did not start are found and
 * followed too (after a restart, from another server).
 */
export async function dbosRunner(options: DbosRunnerOptions): Promise<Runner> {
  const { database } = options;
  const worker: Worker = createWorker({ database, model: options.model, tools: options.tools, cwd: options.cwd, permissions: options.permissions, ...(options.logger ? { logger: options.logger } : {}) });
  await worker.start();
  const logs = new Map<string, RunLog>();
  const stop = new AbortController();
  const said = (error: unknown): never => {
    throw error;
  };

  /** Follows the run's events from the database into a new log (once per run). */
  const followed = (sessionId: string, runId: string, input: string): RunLog => {
    const known = logs.get(runId);
    if (known) return known;
    const log = new RunLog(runId, sessionId, input);
    logs.set(runId, log);
    void (async () => {
      try {
        for await (const event of watch({ database, sessionId, runId, signal: stop.signal, pollMs: 50 })) log.push(event);
      } catch (error) {
        log.fail(errorInfoOf(error));
      }
    })();
    return log;
  };

  return {
    async start(request) {
      const ids = await enqueueRun(request.input, {
        database,
        sessionId: request.sessionId,
        wait: false,
        ...request.options,
        permissions: { ...(request.permissions.mode ? { mode: request.permissions.mode } : {}), allow: [...(request.permissions.allow ?? [])], ask: [...(request.permissions.ask ?? [])], deny: [...(request.permissions.deny ?? [])] },
      }).catch(said);
      return followed(ids.sessionId, ids.runId, request.input);
    },
    async find(runId) {
      const known = logs.get(runId);
      if (known) return known;
      const row = (await listRuns({ database })).find((r) => r.runId === runId);
      return row ? followed(row.sessionId, row.runId, row.input) : undefined;
    },
    async answer(log, answers, answeredBy) {
      const row = (await listRuns({ database, status: ["suspended"] })).find((r) => r.runId === log.runId);
      if (!row) throw new HttpProblem(409, "RUN_NOT_SUSPENDED", `run ${log.runId} is not waiting at a permission question (it is ${log.status}); only a suspended run takes answers`);
      const pending = (row.pending ?? []).map((c) => c.callId);
      const unknown = Object.keys(answers).filter((id) => !pending.includes(id));
      if (unknown.length > 0) throw new HttpProblem(400, "INVALID_REQUEST", `answers: ${unknown.map((id) => JSON.stringify(id)).join(", ")} not pending calls of run ${log.runId} (pending: ${pending.join(", ")})`);
      await answer({ database, sessionId: log.sessionId, runId: log.runId, answers, answeredBy });
      // Its log goes on once the resumed part's first event is read from the database.
      for await (const _ of log.read(log.lastId, AbortSignal.timeout(30_000))) break;
    },
    async abort(log) {
      // Asked of the database: whichever worker runs it (or none yet, for a queued run) ends it user_abort, and its
      // log reads the run's turn_end as any follower does.
      await abortRun({ database, sessionId: log.sessionId, runId: log.runId, abortedBy: "statecraft serve (POST /runs/:runId/abort)" }).catch((error: unknown) => {
        if (error instanceof AgentError && error.code === "RUN_ENDED") throw new HttpProblem(409, "RUN_ENDED", error.message);
        throw error;
      });
    },
    async runsOf(sessionId) {
      const rows = (await listRuns({ database })).filter((r) => r.sessionId === sessionId);
      return rows.map((r) => followed(r.sessionId, r.runId, r.input));
    },
    async messages(sessionId): Promise<Message[] | undefined> {
      const lines = await readLines({ database, sessionId, stream: "transcript" });
      if (lines.length === 0) return (await listRuns({ database })).some((r) => r.sessionId === sessionId) ? [] : undefined;
      return transcriptFromLines(lines).messages as Message[];
    },
    async close() {
      stop.abort();
      await worker.stop();
      await closeClients();
    },
  };
}
