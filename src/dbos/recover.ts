import type pg from "pg";
import { AgentError } from "../errors/agent-error.js";
import { checkDatabaseUrl, databaseError, DBOS_SCHEMA, openPool } from "./database.js";
import { APP_NAME, APP_VERSION } from "./names.js";

/**
 * Puts the runs a worker held back on their queue, for any worker: its PENDING workflows become ENQUEUED again, as
 * DBOS's own recovery does for a restarted executor (a self-hosted DBOS executor only recovers workflows carrying its
 * own id). Their journal stays: the worker that takes one replays its completed steps from the database.
 */
export async function handBack(pool: pg.Pool, workerId: string): Promise<string[]> {
  const result = await pool.query<{ workflow_uuid: string }>(
    `UPDATE "${DBOS_SCHEMA}".workflow_status
        SET status = 'ENQUEUED', started_at_epoch_ms = NULL, owner_xid = NULL,
            updated_at = (EXTRACT(EPOCH FROM now()) * 1000)::bigint
      WHERE status = 'PENDING' AND executor_id = $1 AND application_version = $2
        AND (application_name = $3 OR application_name IS NULL) AND queue_name IS NOT NULL
      RETURNING workflow_uuid`,
    [workerId, APP_VERSION, APP_NAME],
  );
  return result.rows.map((r) => r.workflow_uuid);
}

/**
 * Recovers the runs of a worker that is gone for good, from any process: they go back on the queue and the live
 * workers take them, each going on from its last completed step. Returns the workflow ids handed back. Workers do
 * this by themselves for a worker whose heartbeat stopped (`deadAfterMs`); this is for doing it at once.
 */
export async function recoverRuns(options: { database: string; fromWorker: string }): Promise<string[]> {
  const database = checkDatabaseUrl(options?.database, "recoverRuns");
  if (typeof options.fromWorker !== "string" || options.fromWorker === "") throw new AgentError("INVALID_OPTIONS", "recoverRuns: fromWorker must be the dead worker's id (its worker.id, or statecraft worker --id)");
  const pool = openPool(database, 1);
  try {
    return await handBack(pool, options.fromWorker);
  } catch (error) {
    throw databaseError(error, database);
  } finally {
    await pool.end().catch(() => undefined);
  }
}
