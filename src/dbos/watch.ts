import { AgentError } from "../errors/agent-error.js";
import type { AgentEvent } from "../events.js";
import { connect } from "./clients.js";
import { databaseError } from "./database.js";

export interface WatchOptions {
  database: string;
  sessionId: string;
  runId: string;
  /** How often the database is asked for new events (default 100 ms). */
  pollMs?: number;
  /** Stops the stream early (the iterator then ends). */
  signal?: AbortSignal;
}

/**
 * The run's AgentEvents: those stored so far, then live as the workers write them, ending with its `turn_end`. A run
 * that suspended shows its `suspended` event, and the stream goes on when the run resumes (on any worker).
 */
export async function* watch(options: WatchOptions): AsyncGenerator<AgentEvent, void, undefined> {
  if (!options || typeof options !== "object" || typeof options.sessionId !== "string" || typeof options.runId !== "string") {
    throw new AgentError("INVALID_OPTIONS", "watch: options must be { database, sessionId, runId } (enqueueRun gave the ids)");
  }
  const pollMs = options.pollMs ?? 100;
  const conn = await connect(options.database, "watch");
  const known = await conn.pool.query("SELECT 1 FROM statecraft.runs WHERE run_id = $1 AND session_id = $2", [options.runId, options.sessionId]).catch((e: unknown) => {
    throw databaseError(e, options.database);
  });
  if (known.rows.length === 0) throw new AgentError("RUN_NOT_FOUND", `session ${options.sessionId} has no run ${options.runId} in this database`);
  let part = 0;
  let idx = -1;
  let failed: AgentError | undefined;
  for (;;) {
    if (options.signal?.aborted) return;
    const rows = await conn.pool
      .query<{ part: number; idx: number; line: string }>(
        `SELECT part, idx, line FROM statecraft.lines WHERE run_id = $1 AND stream = 'events' AND (part, idx) > ($2, $3) ORDER BY part, idx LIMIT 1000`,
        [options.runId, part, idx],
      )
      .catch((e: unknown) => {
        throw databaseError(e, options.database);
      });
    for (const row of rows.rows) {
      // A later piece starts at index 0: a gap inside a piece is lines not written yet (they come in order).
      if (row.part === part ? row.idx !== idx + 1 : row.idx !== 0) break;
      part = row.part;
      idx = row.idx;
      const event = JSON.parse(row.line) as AgentEvent;
      yield event;
      if (event.type === "turn_end") return;
    }
    if (rows.rows.length === 0) {
      // A run that could not go on (its stored run damaged) ends without a turn_end: its error ends the stream.
      const ended = await conn.pool
        .query<{ status: string; result: { reason?: string; error?: { code: string; message: string } } | null }>("SELECT status, result FROM statecraft.runs WHERE run_id = $1", [options.runId])
        .catch((e: unknown) => {
          throw databaseError(e, options.database);
        });
      const row = ended.rows[0];
      if (failed) throw failed;
      // Once more round the loop first: lines written just before the run was marked are still read.
      if (row?.status === "finished" && row.result?.reason === undefined && row.result?.error) {
        failed = new AgentError(row.result.error.code, row.result.error.message);
        continue;
      }
    }
    if (rows.rows.length < 1000) await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
