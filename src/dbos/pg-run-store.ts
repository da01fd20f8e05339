import type pg from "pg";
import { AgentError } from "../errors/agent-error.js";
import { bindingProblem, runRecordProblem, type RunStore, type StoredRun } from "../durable/run-store.js";
import type { RunKey } from "./run-key.js";
import { pendingDigest, pendingScope } from "./sealed.js";
import { unsealJson } from "../record/sealed-secrets.js";

/** Which piece of which run this store serves: what a stored run must have been saved for to be resumed by it. */
export interface StorePiece {
  runId: string;
  part: number;
  /** The run's queued input and options as the piece got them (their digest, `specDigest`). */
  spec: string;
  /** A resumption: the digest of the pending calls shown to whoever answered (`RunSpec.seen`). */
  seen?: string;
  /** The worker's workspace: a stored run is resumed only in the workspace (real path) it ran in. */
  workspace?: string;
}

/** What `statecraft.stored_runs.record` holds: the run's JSON text as signed, and what the signature covers. */
interface Envelope {
  run: string;
  runId: string;
  part: number;
  spec: string;
  sig: string;
}

const scopeOf = (sessionId: string, e: Omit<Envelope, "run" | "sig">) => ["statecraft/dbos stored run 1", sessionId, e.runId, e.part, e.spec];

/**
 * The run store of statecraft/dbos: a suspended run's state in `statecraft.stored_runs`, one row per session, signed
 * with the workers' run key. Anyone holding the database's URL can write the row (an agent's `bash` too, if the URL
 * reached it), so the signature covers the run's text, its session, its run, the piece that saved it and the queued
 * input and options it ran with: an edited call input or decision, a row copied from another session or put back
 * from an earlier suspension, or a run whose queued options were changed meanwhile is RUN_DAMAGED, and nothing of it
 * runs. No lock: a session's runs are one at a time through the queue's partition (docs/scale-out.md).
 */
export function pgRunStore(pool: pg.Pool, key: RunKey, piece: StorePiece): RunStore {
  const damaged = (sessionId: string, why: string) =>
    new AgentError(
      "RUN_DAMAGED",
      `the stored run of session ${sessionId} in statecraft.stored_runs can't be resumed: ${why}. Give it up with DELETE FROM statecraft.stored_runs WHERE session_id = '${sessionId}' (its trace stays), and keep the database's URL away from what agents run`,
    );
  /** The row's run, checked: signed by a worker of this database, for this session; undefined when there is none. */
  const read = (sessionId: string, record: unknown): { run: StoredRun; envelope: Envelope } => {
    const e = record as Partial<Envelope> | null;
    if (!e || typeof e !== "object" || typeof e.run !== "string" || typeof e.runId !== "string" || typeof e.part !== "number" || typeof e.spec !== "string") {
      throw damaged(sessionId, "it is not a signed run record { run, runId, part, spec, sig }");
    }
    let envelope = e as Envelope;
    try {
      envelope = { ...envelope, run: key.sealer(["stored run", sessionId]).unseal(envelope.run) };
    } catch (error) {
      throw damaged(sessionId, (error as Error).message);
    }
    if (!key.verify(scopeOf(sessionId, envelope), envelope.run, envelope.sig)) {
      throw damaged(sessionId, "its signature does not match (it was changed outside statecraft, copied from another session, or signed with another run key)");
    }
    let run: unknown;
    try {
      run = JSON.parse(envelope.run);
    } catch (error) {
      throw damaged(sessionId, `it is not JSON (${(error as Error).message})`);
    }
    const problem = runRecordProblem(run);
    if (problem) throw damaged(sessionId, problem);
    const stored = run as StoredRun;
    if (stored.sessionId !== sessionId || stored.runId !== envelope.runId) throw damaged(sessionId, "it is the run of another session or run");
    return { run: stored, envelope };
  };
  return {
    async save(run) {
      const envelope: Omit<Envelope, "sig"> = { run: JSON.stringify(run), runId: run.runId, part: piece.part, spec: piece.spec };
      const sig = key.sign(scopeOf(run.sessionId, envelope), envelope.run);
      await pool.query(
        `INSERT INTO statecraft.stored_runs (session_id, run_id, record) VALUES ($1, $2, $3)
         ON CONFLICT (session_id) DO UPDATE SET run_id = EXCLUDED.run_id, record = EXCLUDED.record`,
        // Signed as it is, kept with its secrets sealed (the database's readers are not all the workers).
        [run.sessionId, run.runId, JSON.stringify({ ...envelope, run: key.sealer(["stored run", run.sessionId]).seal(envelope.run), sig })],
      );
    },
    async load(sessionId) {
      const found = await pool.query<{ record: unknown }>("SELECT record FROM statecraft.stored_runs WHERE session_id = $1", [sessionId]);
      if (found.rows.length === 0) return undefined;
      const { run, envelope } = read(sessionId, found.rows[0].record);
      const unbound = piece.workspace === undefined ? undefined : bindingProblem(run, { sessionId, workspace: piece.workspace });
      if (unbound) throw damaged(sessionId, unbound);
      // A resumption takes only the suspension the piece before it saved, of this run, queued as it is now.
      if (piece.part > 0) {
        if (envelope.runId !== piece.runId) throw damaged(sessionId, `it is run ${envelope.runId}'s, and run ${piece.runId} is being resumed`);
        if (envelope.part !== piece.part - 1 || run.status !== "suspended") throw damaged(sessionId, `it is not the suspension run ${piece.runId} was answered at (it was saved by piece ${envelope.part}, as ${run.status}; piece ${piece.part - 1}'s suspension is expected)`);
        if (envelope.spec !== piece.spec) throw damaged(sessionId, `the run's queued input or options in statecraft.runs were changed since it started`);
        // statecraft.runs.pending is what `statecraft runs` showed the person who answered: not the calls the run
        // waits on, they approved something else.
        // The row keeps their secrets sealed: what answer() digested is the sealed row, which must open to the calls.
        const shown = (await pool.query<{ pending: unknown }>("SELECT pending FROM statecraft.runs WHERE run_id = $1", [piece.runId])).rows[0]?.pending;
        const changed = "the pending calls answer() found in statecraft.runs are not the ones the run waits on (they were changed there); nothing was approved";
        if (!Array.isArray(shown) || piece.seen !== pendingDigest(shown)) throw damaged(sessionId, changed);
        let opened: unknown;
        try {
          opened = unsealJson(key.sealer(pendingScope(sessionId, piece.runId)), shown);
        } catch (error) {
          throw damaged(sessionId, `${changed}: ${(error as Error).message}`);
        }
        if (pendingDigest(opened as typeof run.pending) !== pendingDigest(run.pending)) throw damaged(sessionId, changed);
      }
      return run;
    },
    async list() {
      const found = await pool.query<{ session_id: string; record: unknown }>("SELECT session_id, record FROM statecraft.stored_runs ORDER BY session_id");
      const runs: StoredRun[] = [];
      for (const row of found.rows) {
        try {
          runs.push(read(row.session_id, row.record).run);
        } catch {
          // not a run this store can vouch for
        }
      }
      return runs;
    },
    async delete(sessionId) {
      await pool.query("DELETE FROM statecraft.stored_runs WHERE session_id = $1", [sessionId]);
    },
  };
}
