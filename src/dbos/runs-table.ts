import type { TraceContext } from "../record/run-record.js";
import type pg from "pg";
import type { DBOSClient } from "@dbos-inc/dbos-sdk";
import { APP_VERSION, QUEUE, WORKFLOW, workflowIdOf, type RunSpec, type RunStatus } from "./names.js";

/** Runs in a transaction holding the session's lock: what a session's runs do is decided one at a time. */
export async function withSession<T>(pool: pg.Pool, sessionId: string, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 18))", [sessionId]);
    const out = await work(client);
    await client.query("COMMIT");
    return out;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** Enqueues a piece of a run on the session's partition, in the caller's transaction. */
export async function enqueuePiece(dbos: DBOSClient, client: pg.PoolClient, spec: RunSpec, after?: string): Promise<void> {
  await dbos.enqueueInTransaction(
    client,
    { queueName: spec.queue ?? QUEUE, workflowName: WORKFLOW, workflowID: workflowIdOf(spec, after), queuePartitionKey: spec.sessionId, appVersion: APP_VERSION },
    spec,
  );
}

export interface RunRow {
  run_id: string;
  session_id: string;
  status: RunStatus;
  input: string;
  options: RunSpec["options"];
  worker: string | null;
  enqueued_at: string;
  started_at: string | null;
  ended_at: string | null;
  part: number;
  pending: Array<{ callId: string; name: string; input: unknown; reason: string }> | null;
  result: Record<string, unknown> | null;
}

/** A piece of the run a row describes (the row's options keep the queue it was enqueued on). */
export function specOfRow(row: RunRow, part: number): RunSpec {
  const { queue, traceContext: _enqueuer, ...options } = row.options as RunSpec["options"] & { queue?: string; traceContext?: TraceContext };
  return { sessionId: row.session_id, runId: row.run_id, part, input: row.input, options, ...(queue !== undefined ? { queue } : {}) };
}

/**
 * A run that waited its turn, queued now as it was enqueued: with the enqueuing client's trace context (kept in its
 * row), so its spans join that client's trace as a run queued at once does. (A resumed piece takes the answering
 * client's instead: specOfRow.)
 */
export function specOfWaiting(row: RunRow): RunSpec {
  const { traceContext } = row.options as { traceContext?: TraceContext };
  return { ...specOfRow(row, 0), ...(traceContext ? { traceContext } : {}) };
}

/** Runs of the session that keep a later run waiting: one suspended or resuming, or one queued behind it earlier. */
export async function blockingRun(client: pg.PoolClient, sessionId: string, runId: string, enqueuedAt: string): Promise<string | undefined> {
  const found = await client.query<{ run_id: string }>(
    `SELECT run_id FROM statecraft.runs WHERE session_id = $1 AND run_id <> $2
       AND (status IN ('suspended', 'resuming') OR (status = 'waiting' AND enqueued_at < $3))
     ORDER BY enqueued_at LIMIT 1`,
    [sessionId, runId, enqueuedAt],
  );
  return found.rows[0]?.run_id;
}

/** The session's oldest run waiting its turn, if any: the next to start once the session is free. */
export async function nextWaiting(client: pg.PoolClient, sessionId: string): Promise<RunRow | undefined> {
  const found = await client.query<RunRow>("SELECT * FROM statecraft.runs WHERE session_id = $1 AND status = 'waiting' ORDER BY enqueued_at LIMIT 1", [sessionId]);
  return found.rows[0];
}
