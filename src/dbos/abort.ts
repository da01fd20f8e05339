import type pg from "pg";
import type { DBOSClient } from "@dbos-inc/dbos-sdk";
import { AgentError } from "../errors/agent-error.js";
import { emptyUsage, type TurnEndEvent } from "../events.js";
import { activeTraceContext } from "../otel/trace-context.js";
import type { TraceContext } from "../record/run-record.js";
import { connect } from "./clients.js";
import { databaseError } from "./database.js";
import { workflowIdOf, type RunStatus } from "./names.js";
import { pendingDigest } from "./sealed.js";
import { enqueuePiece, nextWaiting, specOfRow, specOfWaiting, withSession, type RunRow } from "./runs-table.js";

export interface AbortRunOptions {
  database: string;
  sessionId: string;
  runId: string;
  /** Who or where asked for the abort (free text), kept with the request in `statecraft.aborts`. */
  abortedBy?: string;
}

/** Where the run stands once the abort is asked for: `finished` (it ended now) or the worker's still to end it. */
export interface AbortedRun {
  status: RunStatus;
}

/** The message of a run ended before a worker began it. */
const NEVER_STARTED = "the run was aborted by the caller before it started";

/**
 * Ends a run `user_abort` from any process with the database. A queued (or waiting) run ends at once and never
 * starts; a running run's worker sees the request within moments and aborts it as `run.abort()` does (its model call
 * and tools stopped through the run's signal, its trace, transcript and `turn_end` written); a suspended run is
 * resumed without answers and stopped at once, as a local one is. A finished run is refused with `RUN_ENDED`.
 */
export async function abortRun(options: AbortRunOptions): Promise<AbortedRun> {
  const fail = (message: string) => new AgentError("INVALID_OPTIONS", `abortRun: ${message}`);
  if (!options || typeof options !== "object") throw fail("options are required: { database, sessionId, runId }");
  const { sessionId, runId } = options;
  if (typeof sessionId !== "string" || typeof runId !== "string") throw fail("sessionId and runId must be strings (enqueueRun gave them)");
  if (options.abortedBy !== undefined && typeof options.abortedBy !== "string") throw fail("abortedBy must be a string");
  const conn = await connect(options.database, "abortRun");
  const traceContext = activeTraceContext();
  try {
    return await withSession(conn.pool, sessionId, async (client) => {
      const row = (await client.query<RunRow>("SELECT * FROM statecraft.runs WHERE run_id = $1 AND session_id = $2 FOR UPDATE", [runId, sessionId])).rows[0];
      if (!row) throw new AgentError("RUN_NOT_FOUND", `session ${sessionId} has no run ${runId} in this database`);
      if (row.status === "finished") {
        const how = typeof row.result?.reason === "string" ? row.result.reason : ((row.result?.error as { code?: string } | undefined)?.code ?? "finished");
        throw new AgentError("RUN_ENDED", `run ${runId} of session ${sessionId} has ended (${how}); there is nothing to abort`);
      }
      // A run whose last event is its turn_end has ended, though its worker may not have marked its row yet.
      const ended = row.status === "running" || row.status === "resuming" ? await endedAs(client, row) : undefined;
      if (ended !== undefined) throw new AgentError("RUN_ENDED", `run ${runId} of session ${sessionId} has ended (${ended}); there is nothing to abort`);
      await client.query("INSERT INTO statecraft.aborts (run_id, session_id, requested_at, requested_by) VALUES ($1, $2, $3, $4) ON CONFLICT (run_id) DO NOTHING", [
        runId,
        sessionId,
        Date.now(),
        options.abortedBy ?? null,
      ]);
      if (row.status === "queued" || row.status === "waiting") {
        await endUnstarted(conn.dbos, client, row);
        return { status: "finished" };
      }
      if (row.status === "suspended") {
        await resumeToAbort(conn.dbos, client, row, pendingOf(row), { ...(options.abortedBy !== undefined ? { abortedBy: options.abortedBy } : {}), ...(traceContext ? { traceContext } : {}) });
        return { status: "resuming" };
      }
      // running or resuming: its worker polls for the request (abort-requests.ts); one that suspends meanwhile is
      // resumed to be stopped by that worker as it marks the run suspended (run-workflow.ts's end).
      return { status: row.status };
    });
  } catch (error) {
    throw databaseError(error, String(options.database));
  }
}

const pendingOf = (row: RunRow) => row.pending ?? [];

/** The stop reason of the run's last event when that is its turn_end (the run has ended), else undefined. */
async function endedAs(client: pg.PoolClient, row: RunRow): Promise<string | undefined> {
  const last = (await client.query<{ line: string }>("SELECT line FROM statecraft.lines WHERE run_id = $1 AND part = $2 AND stream = 'events' ORDER BY idx DESC LIMIT 1", [row.run_id, row.part])).rows[0];
  if (!last) return undefined;
  let event: { type?: string; reason?: string };
  try {
    event = JSON.parse(last.line) as typeof event;
  } catch {
    return undefined;
  }
  return event?.type === "turn_end" ? (event.reason ?? "ended") : undefined;
}

/**
 * A suspended run whose abort was asked for, as a local suspended run is aborted: resumed without answers (its next
 * piece queued), and stopped before it asks again by the worker that takes the piece, which finds the request
 * (run-workflow.ts) and ends it user_abort, its stored state gone.
 */
export async function resumeToAbort(
  dbos: DBOSClient,
  client: pg.PoolClient,
  row: RunRow,
  pending: ReadonlyArray<{ callId: string; name: string; input?: unknown }>,
  by: { abortedBy?: string; traceContext?: TraceContext } = {},
): Promise<void> {
  const part = row.part + 1;
  // `pending` stays, as answer() leaves it: the resumed piece checks the row's (sealed) calls against its digest.
  await client.query("UPDATE statecraft.runs SET status = 'resuming', part = $2 WHERE run_id = $1", [row.run_id, part]);
  await enqueuePiece(dbos, client, {
    ...specOfRow(row, part),
    answers: {},
    seen: pendingDigest(pending),
    ...(by.abortedBy !== undefined ? { answeredBy: by.abortedBy } : {}),
    ...(by.traceContext ? { traceContext: by.traceContext } : {}),
  });
}

/**
 * A run no worker has begun ends here: finished `user_abort`, with its one event (the `turn_end` followers wait for).
 * Its queued workflow, when a worker takes it, finds it finished and does nothing; the session's next waiting run is
 * queued as it would be when the run ended.
 */
async function endUnstarted(dbos: DBOSClient, client: pg.PoolClient, row: RunRow): Promise<void> {
  const error = { code: "USER_ABORT", message: NEVER_STARTED };
  const end: TurnEndEvent = { type: "turn_end", reason: "user_abort", sessionId: row.session_id, turns: 0, toolCalls: 0, usage: emptyUsage(), error };
  const summary = { reason: "user_abort", text: "", turns: 0, toolCalls: 0, usage: emptyUsage(), error };
  await client.query("UPDATE statecraft.runs SET status = 'finished', ended_at = $2, pending = NULL, result = $3 WHERE run_id = $1", [row.run_id, Date.now(), JSON.stringify(summary)]);
  const next = await client.query<{ idx: number }>("SELECT COALESCE(MAX(idx) + 1, 0) AS idx FROM statecraft.lines WHERE run_id = $1 AND part = $2 AND stream = 'events'", [row.run_id, row.part]);
  await client.query("INSERT INTO statecraft.lines (session_id, run_id, part, stream, idx, line) VALUES ($1, $2, $3, 'events', $4, $5)", [
    row.session_id,
    row.run_id,
    row.part,
    next.rows[0]!.idx,
    JSON.stringify(end),
  ]);
  if (row.status !== "queued") return;
  const waiting = await nextWaiting(client, row.session_id);
  if (!waiting) return;
  await client.query("UPDATE statecraft.runs SET status = 'queued' WHERE run_id = $1", [waiting.run_id]);
  await enqueuePiece(dbos, client, specOfWaiting(waiting), workflowIdOf({ runId: row.run_id, part: row.part }));
}
