import type pg from "pg";
import { AgentError } from "../errors/agent-error.js";
import { runRecordProblem, type RunStore, type StoredRun } from "../durable/run-store.js";

/**
 * The run store of statecraft/dbos: a suspended run's state in `statecraft.stored_runs`, one row per session. Unlike
 * the file store it is not signed: the database is not part of a workspace an agent can write, so what is in it is
 * trusted as the engine wrote it (its shape is still checked). No lock: a session's runs are one at a time through
 * the queue's partition (docs/scale-out.md).
 */
export function pgRunStore(pool: pg.Pool): RunStore {
  return {
    async save(run) {
      await pool.query(
        `INSERT INTO statecraft.stored_runs (session_id, run_id, record) VALUES ($1, $2, $3)
         ON CONFLICT (session_id) DO UPDATE SET run_id = EXCLUDED.run_id, record = EXCLUDED.record`,
        [run.sessionId, run.runId, JSON.stringify(run)],
      );
    },
    async load(sessionId) {
      const found = await pool.query<{ record: unknown }>("SELECT record FROM statecraft.stored_runs WHERE session_id = $1", [sessionId]);
      if (found.rows.length === 0) return undefined;
      const record = found.rows[0].record;
      const problem = runRecordProblem(record);
      if (problem) throw new AgentError("RUN_DAMAGED", `the stored run of session ${sessionId} in statecraft.stored_runs can't be used: ${problem}`);
      return record as StoredRun;
    },
    async list() {
      const found = await pool.query<{ record: StoredRun }>("SELECT record FROM statecraft.stored_runs ORDER BY session_id");
      return found.rows.map((r) => r.record).filter((r) => runRecordProblem(r) === undefined);
    },
    async delete(sessionId) {
      await pool.query("DELETE FROM statecraft.stored_runs WHERE session_id = $1", [sessionId]);
    },
  };
}
