import type pg from "pg";

/**
 * The allow rules `allow_always` answers added to a session, in any of its runs, on any worker: its transcript's
 * `allow_rule` lines in `statecraft.lines`, as a file transcript keeps them for the session's later runs. They are
 * trusted as the rest of the database is (what is in it was written by workers and clients that can reach it, not
 * by an agent's tools); like any allow rule they come after the worker's and the run's deny and ask rules.
 */
export async function sessionRules(client: pg.ClientBase | pg.Pool, sessionId: string): Promise<string[]> {
  const rows = await client.query<{ line: string }>(
    `SELECT line FROM statecraft.lines WHERE session_id = $1 AND stream = 'transcript' AND line LIKE '%"allow_rule"%' ORDER BY id`,
    [sessionId],
  );
  const rules: string[] = [];
  for (const { line } of rows.rows) {
    try {
      const entry = JSON.parse(line) as { type?: unknown; rule?: unknown };
      if (entry.type === "allow_rule" && typeof entry.rule === "string" && !rules.includes(entry.rule)) rules.push(entry.rule);
    } catch {
      // not a transcript entry: nothing to remember
    }
  }
  return rules;
}
