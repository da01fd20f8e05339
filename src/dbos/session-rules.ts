import type pg from "pg";
import type { LineSink } from "../record/jsonl-writer.js";
import type { RunKey } from "./run-key.js";

/** The stream of `statecraft.lines` that keeps a session's remembered allow rules, each signed with the run key. */
export const RULE_STREAM = "rule";

const ruleScope = (sessionId: string) => ["statecraft/dbos session rule 1", sessionId];

/**
 * The transcript sink of a worker's run, which also writes each rule an `allow_always` answer added to the session's
 * `rule` stream, signed with the run key. The transcript's own `allow_rule` line is not what a later run trusts: it
 * sits in a table anyone holding the database's URL can write, and its signature is the worker machine's own.
 */
export function sealingRules(transcript: LineSink, rules: LineSink, key: RunKey, sessionId: string): LineSink {
  return {
    writeLine(line) {
      transcript.writeLine(line);
      if (!line.includes('"allow_rule"')) return;
      const entry = JSON.parse(line) as { type?: unknown; rule?: unknown };
      if (entry.type === "allow_rule" && typeof entry.rule === "string") rules.writeLine(JSON.stringify({ rule: entry.rule, sig: key.sign(ruleScope(sessionId), entry.rule) }));
    },
    flush: () => {
      transcript.flush();
      rules.flush();
    },
    close: () => {
      transcript.close();
      rules.close();
    },
  };
}

/**
 * The allow rules `allow_always` answers added to a session, in any of its runs, on any worker: the signed lines of
 * its `rule` stream. A line whose signature does not match (written outside statecraft, copied from another
 * session, or signed with another run key) is left out and said in the log; like any allow rule, those kept come
 * after the worker's and the run's deny and ask rules.
 */
export async function sessionRules(client: pg.ClientBase | pg.Pool, key: RunKey, sessionId: string, logger: { warn(obj: object, msg: string): void }): Promise<string[]> {
  const rows = await client.query<{ id: string; line: string }>(`SELECT id, line FROM statecraft.lines WHERE session_id = $1 AND stream = $2 ORDER BY id`, [sessionId, RULE_STREAM]);
  const rules: string[] = [];
  for (const { id, line } of rows.rows) {
    let entry: { rule?: unknown; sig?: unknown } | undefined;
    try {
      entry = JSON.parse(line) as { rule?: unknown; sig?: unknown };
    } catch {
      entry = undefined;
    }
    if (!entry || typeof entry.rule !== "string" || !key.verify(ruleScope(sessionId), entry.rule, entry.sig)) {
      logger.warn({ sessionId, line: id }, `statecraft: remembered rule line ${id} of session ${sessionId} in statecraft.lines is ignored: its signature does not match (it was written outside statecraft, copied from another session, or signed with another run key)`);
      continue;
    }
    if (!rules.includes(entry.rule)) rules.push(entry.rule);
  }
  return rules;
}
