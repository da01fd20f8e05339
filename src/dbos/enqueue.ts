import { randomUUID } from "node:crypto";
import { AgentError } from "../errors/agent-error.js";
import type { PermissionAnswer } from "../permissions/types.js";
import { checkSessionId } from "../record/transcript.js";
import { connect } from "./clients.js";
import { databaseError } from "./database.js";
import type { RunSpec } from "./names.js";
import { checkRunOptions, type RunOptions } from "./run-options.js";
import { pendingDigest } from "./sealed.js";
import { QUEUE_KEY_ROW, queueSealer } from "./queue-seal.js";
import { checkRunKey, resolveRunKey } from "./run-key.js";
import { sealJson } from "../record/sealed-secrets.js";
import type pg from "pg";
import { activeTraceContext } from "../otel/trace-context.js";
import { enqueuePiece, specOfRow, withSession, type RunRow } from "./runs-table.js";

export interface EnqueueOptions extends RunOptions {
  database: string;
  /** Continue this session (its runs run one at a time, in order); a new session when absent. */
  sessionId?: string;
  /** false: refuse with SESSION_BUSY instead of queueing behind a run of the session not finished yet. Default true. */
  wait?: boolean;
  /** The workers' queue (default `statecraft_runs`). */
  queue?: string;
  /**
   * Needed only before any worker has started on the database: the workers' run key, whose public key the run's
   * secrets are sealed to (default `$STATECRAFT_RUN_KEY`, else the session key file, as createWorker).
   */
  runKey?: string | Uint8Array;
}

/**
 * The public key a queued run's secrets are sealed to (queue-seal.ts): the one the workers published in
 * statecraft.meta; before any worker started, the caller's run key's (recorded for the workers to match).
 */
async function queueKeyOf(pool: pg.Pool, given: string | Uint8Array | undefined): Promise<string> {
  const published = (await pool.query<{ value: string }>("SELECT value FROM statecraft.meta WHERE key = $1", [QUEUE_KEY_ROW])).rows[0]?.value;
  if (published !== undefined && given === undefined) return published;
  const key = resolveRunKey(given, process.env, "enqueueRun");
  await checkRunKey(pool, key, "this database");
  return key.queueKey;
}

/**
 * Queues an agent run for the workers of `database`, from any process; resolves once it is durably queued. Runs of
 * one session run one at a time, across all workers, in the order they were queued.
 */
export async function enqueueRun(input: string, options: EnqueueOptions): Promise<{ sessionId: string; runId: string }> {
  if (typeof input !== "string") throw new AgentError("INVALID_OPTIONS", `enqueueRun(input, options): input must be a string, got ${typeof input}`);
  if (!options || typeof options !== "object") throw new AgentError("INVALID_OPTIONS", "enqueueRun(input, options): options are required, at least { database }");
  const { database, sessionId: given, wait, queue, runKey, ...rest } = options;
  const runOptions = checkRunOptions(rest as Record<string, unknown>, "enqueueRun");
  const sessionId = given ?? randomUUID();
  try {
    checkSessionId(sessionId);
  } catch (error) {
    throw new AgentError("INVALID_OPTIONS", `enqueueRun: options.${(error as Error).message}`);
  }
  if (wait !== undefined && typeof wait !== "boolean") throw new AgentError("INVALID_OPTIONS", "enqueueRun: options.wait must be true or false");
  const conn = await connect(database, "enqueueRun");
  const runId = randomUUID();
  // Kept at rest with their secrets sealed to the workers' key: the input and options as queued (statecraft.runs, and
  // DBOS's workflow inputs) hold the prompt, a pasted API key with it.
  let sealed: { input: string; options: RunOptions };
  try {
    const sealer = queueSealer(await queueKeyOf(conn.pool, runKey), [sessionId, runId]);
    sealed = { input: sealer.seal(input), options: sealJson(sealer, runOptions) };
  } catch (error) {
    throw databaseError(error, String(database));
  }
  // The caller's trace (when it uses OpenTelemetry): the worker's spans of the run join it.
  const traceContext = activeTraceContext();
  const spec: RunSpec = { sessionId, runId, part: 0, input: sealed.input, options: sealed.options, ...(queue !== undefined ? { queue } : {}), ...(traceContext ? { traceContext } : {}) };
  try {
    await withSession(conn.pool, sessionId, async (client) => {
      if (wait === false) {
        const busy = await client.query<{ run_id: string; status: string }>("SELECT run_id, status FROM statecraft.runs WHERE session_id = $1 AND status <> 'finished' LIMIT 1", [sessionId]);
        if (busy.rows[0]) {
          throw new AgentError("SESSION_BUSY", `session ${sessionId} has a run that has not finished (${busy.rows[0].run_id}, ${busy.rows[0].status}); wait for it, answer it if it is suspended, or enqueue with wait: true to queue behind it`);
        }
      }
      await client.query(
        "INSERT INTO statecraft.runs (run_id, session_id, status, input, options, enqueued_at) VALUES ($1, $2, 'queued', $3, $4, $5)",
        [runId, sessionId, sealed.input, JSON.stringify({ ...sealed.options, ...(queue !== undefined ? { queue } : {}), ...(traceContext ? { traceContext } : {}) }), Date.now()],
      );
      await enqueuePiece(conn.dbos, client, spec);
    });
  } catch (error) {
    throw databaseError(error, String(database));
  }
  return { sessionId, runId };
}

export interface AnswerOptions {
  database: string;
  sessionId: string;
  runId: string;
  answers: Readonly<Record<string, PermissionAnswer>>;
  /** Who or where answered (free text), recorded with the answers in trace and audit. */
  answeredBy?: string;
}

const ANSWERS: readonly string[] = ["allow", "deny", "allow_always"];

/**
 * Answers a suspended run's pending calls from any process; a worker picks the run up again. A pending call left
 * without an answer is asked again, and suspends the run again.
 */
export async function answer(options: AnswerOptions): Promise<void> {
  const fail = (message: string) => new AgentError("INVALID_OPTIONS", `answer: ${message}`);
  if (!options || typeof options !== "object") throw fail("options are required: { database, sessionId, runId, answers }");
  const { sessionId, runId, answers } = options;
  if (typeof sessionId !== "string" || typeof runId !== "string") throw fail("sessionId and runId must be strings (enqueueRun gave them)");
  if (!answers || typeof answers !== "object" || Array.isArray(answers)) throw fail('answers must be { [callId]: "allow" | "deny" | "allow_always" }');
  for (const [id, a] of Object.entries(answers)) if (!ANSWERS.includes(a)) throw fail(`answers[${JSON.stringify(id)}] must be "allow", "deny" or "allow_always", got ${JSON.stringify(a)}`);
  if (options.answeredBy !== undefined && typeof options.answeredBy !== "string") throw fail("answeredBy must be a string");
  const conn = await connect(options.database, "answer");
  const traceContext = activeTraceContext();
  try {
    await withSession(conn.pool, sessionId, async (client) => {
      const row = (await client.query<RunRow>("SELECT * FROM statecraft.runs WHERE run_id = $1 AND session_id = $2 FOR UPDATE", [runId, sessionId])).rows[0];
      if (!row) throw new AgentError("RUN_NOT_FOUND", `session ${sessionId} has no run ${runId} in this database`);
      if (row.status !== "suspended") throw new AgentError("RUN_NOT_FOUND", `run ${runId} of session ${sessionId} is not suspended (it is ${row.status}): only a suspended run is answered`);
      const pending = (row.pending ?? []).map((p) => p.callId);
      for (const id of Object.keys(answers)) {
        if (!pending.includes(id)) throw fail(`${JSON.stringify(id)} is not a pending call of run ${runId} (pending: ${pending.join(", ")})`);
      }
      const part = row.part + 1;
      await client.query("UPDATE statecraft.runs SET status = 'resuming', part = $2 WHERE run_id = $1", [runId, part]);
      await enqueuePiece(conn.dbos, client, {
        ...specOfRow(row, part),
        answers: { ...answers },
        seen: pendingDigest(row.pending ?? []),
        ...(options.answeredBy !== undefined ? { answeredBy: options.answeredBy } : {}),
        ...(traceContext ? { traceContext } : {}),
      });
    });
  } catch (error) {
    throw databaseError(error, String(options.database));
  }
}
