import type pg from "pg";
import type { Logger } from "../logger.js";
import { redactUrl } from "./database.js";
import { handBack } from "./recover.js";

export interface Heartbeat {
  stop(): Promise<void>;
}

/**
 * The worker says it is alive (a row in `statecraft.workers`, every deadAfterMs / 5) and looks for workers that
 * stopped saying so: the runs of one not seen for deadAfterMs are handed back to the queue (recover.ts), once, by
 * whichever worker gets the row's lock first. A worker whose event loop is blocked longer than deadAfterMs would be
 * taken for dead: keep deadAfterMs well above the longest synchronous stretch of a tool.
 */
export function startHeartbeat(pool: pg.Pool, database: string, id: string, deadAfterMs: number, logger?: Logger): Heartbeat {
  const every = Math.max(200, Math.floor(deadAfterMs / 5));
  let busy: Promise<void> = Promise.resolve();
  const beat = async () => {
    await pool.query(
      `INSERT INTO statecraft.workers (id, seen_at) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET seen_at = EXCLUDED.seen_at`,
      [id, Date.now()],
    );
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      const dead = await client.query<{ id: string }>(
        "SELECT id FROM statecraft.workers WHERE seen_at < $1 AND id <> $2 FOR UPDATE SKIP LOCKED",
        [Date.now() - deadAfterMs, id],
      );
      for (const row of dead.rows) {
        const handed = await handBack(pool, row.id);
        await client.query("DELETE FROM statecraft.workers WHERE id = $1", [row.id]);
        if (handed.length > 0) logger?.warn({ worker: id, dead: row.id, runs: handed.length }, `statecraft: worker ${row.id} is gone; its runs are back on the queue`);
      }
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  };
  const tick = () => {
    busy = busy.then(beat).catch((error: unknown) => {
      logger?.warn({ worker: id, err: (error as Error).message }, `statecraft: heartbeat to ${redactUrl(database)} failed`);
    });
  };
  tick();
  const timer = setInterval(tick, every);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await busy;
      await pool.query("DELETE FROM statecraft.workers WHERE id = $1", [id]).catch(() => undefined);
    },
  };
}
