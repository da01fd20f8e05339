import { connect } from "./clients.js";
import { databaseError } from "./database.js";
import type { LineStream } from "./pg-lines.js";

/** How often the table is read for new lines. */
const DEFAULT_INTERVAL_MS = 250;
/** How long an id below the newest one seen may still turn up (an insert that had its id but had not committed yet). */
const GAP_GRACE_MS = 5_000;
/** The most missing ids watched at once; past it the oldest are given up. */
const MAX_GAPS = 10_000;
const PAGE = 5_000;

export interface FollowOptions {
  database: string;
  stream: Exclude<LineStream, "events">;
  /** Every line of the stream, once, in the order written: first what is there, then what the workers add. */
  onLines(lines: string[]): void;
  /** A read that failed (the database went away, …); following goes on and retries. */
  onError?(error: Error): void;
  intervalMs?: number;
  /** How long a skipped id is read again before it is taken for a gap for good (default 5 s). */
  gapGraceMs?: number;
}

/**
 * Follows one stream of `statecraft.lines` as workers write it, by reading what is past the last id seen.
 *
 * Polled rather than LISTEN/NOTIFY: a notifying insert takes a database-wide lock at commit that serialises every
 * worker's commits, for the sake of a reader that is rarely there, and a reader that loses its connection misses
 * notifications anyway, so it would need this catch-up read regardless. Ids are taken before commit, so a line can
 * become visible after a higher id was read: ids skipped (of every stream, since they share one sequence) are read
 * again until they turn up or `GAP_GRACE_MS` has passed (an insert that conflicted or failed leaves a gap for good).
 * `ready` resolves once what was there at the start has been delivered.
 */
export function followLines(options: FollowOptions): { ready: Promise<void>; stop(): Promise<void> } {
  const interval = options.intervalMs ?? DEFAULT_INTERVAL_MS;
  const grace = options.gapGraceMs ?? GAP_GRACE_MS;
  let newest = 0;
  /** Skipped ids, with when they were first missed. */
  const gaps = new Map<number, number>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let reading: Promise<void> = Promise.resolve();

  const read = async (): Promise<void> => {
    const conn = await connect(options.database, "inspect --database");
    const now = Date.now();
    for (const [id, since] of gaps) if (now - since > grace) gaps.delete(id);
    // Ids skipped earlier, then what is new: two statements rather than one with an OR, which the planner may take
    // for a scan of the whole table while its statistics lag behind the workers' inserts.
    if (gaps.size > 0) {
      const late = await conn.pool.query<{ id: string; line: string | null }>(
        "SELECT id, CASE WHEN stream = $1 THEN line END AS line FROM statecraft.lines WHERE id = ANY($2::bigint[]) ORDER BY id",
        [options.stream, [...gaps.keys()]],
      );
      const lines: string[] = [];
      for (const row of late.rows) {
        gaps.delete(Number(row.id));
        if (row.line !== null) lines.push(row.line);
      }
      if (lines.length > 0) options.onLines(lines);
    }
    for (;;) {
      const rows = await conn.pool.query<{ id: string; line: string | null }>(
        `SELECT id, CASE WHEN stream = $1 THEN line END AS line FROM statecraft.lines WHERE id > $2 ORDER BY id LIMIT ${PAGE}`,
        [options.stream, newest],
      );
      const lines: string[] = [];
      for (const row of rows.rows) {
        const id = Number(row.id);
        for (let skipped = Math.max(newest + 1, id - MAX_GAPS); skipped < id; skipped++) gaps.set(skipped, now);
        newest = id;
        if (row.line !== null) lines.push(row.line);
      }
      while (gaps.size > MAX_GAPS) gaps.delete(gaps.keys().next().value!);
      if (lines.length > 0) options.onLines(lines);
      if (rows.rows.length < PAGE) return;
    }
  };
  const loop = () => {
    if (stopped) return;
    reading = read()
      .catch((error: unknown) => options.onError?.(databaseError(error, options.database)))
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, interval);
      });
  };
  const ready = read().catch((error: unknown) => {
    throw databaseError(error, options.database);
  });
  ready.then(() => {
    if (!stopped) timer = setTimeout(loop, interval);
  }, () => undefined);
  return {
    ready,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await reading.catch(() => undefined);
      await ready.catch(() => undefined);
    },
  };
}
