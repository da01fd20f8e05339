import { AgentError } from "../errors/agent-error.js";
import type { TraceLine } from "../record/format.js";
import type { TraceSession } from "../debug/session.js";
import { connect } from "./clients.js";
import { databaseError } from "./database.js";
import type { RunStatus } from "./names.js";
import type { RunRow } from "./runs-table.js";
import type { LineStream } from "./pg-lines.js";
import { existingSessionKey } from "../record/session-key.js";
import { unsealJson } from "../record/sealed-secrets.js";
import { RUN_KEY_ENV, resolveRunKey, type RunKey } from "./run-key.js";
import { pendingScope } from "./sealed.js";
import type pg from "pg";

export interface ListedRun {
  sessionId: string;
  runId: string;
  status: RunStatus;
  input: string;
  worker?: string;
  enqueuedAt: string;
  startedAt?: string;
  endedAt?: string;
  pending?: Array<{ callId: string; name: string; input: unknown; reason: string }>;
  reason?: string;
  /** What ended a run that could not go on (its stored run `RUN_DAMAGED`), or the error of one that stopped on it. */
  error?: { code: string; message: string };
}

const isError = (e: unknown): e is { code: string; message: string } =>
  typeof e === "object" && e !== null && typeof (e as { code?: unknown }).code === "string" && typeof (e as { message?: unknown }).message === "string";
const iso = (ms: string | null) => (ms === null ? undefined : new Date(Number(ms)).toISOString());

/**
 * The workers' run key when this process holds it (given, `$STATECRAFT_RUN_KEY`, or an existing session key file)
 * and it is the database's: the rows' sealed secrets are then shown as they are, so whoever answers sees exactly
 * what would run. Otherwise they stay `[SEALED:…]`.
 */
async function readingKey(pool: pg.Pool, given: string | Uint8Array | undefined): Promise<RunKey | undefined> {
  if (given === undefined && !process.env[RUN_KEY_ENV] && existingSessionKey() === undefined) return undefined;
  const key = resolveRunKey(given, process.env, "listRuns");
  const id = (await pool.query<{ value: string }>("SELECT value FROM statecraft.meta WHERE key = 'run_key_id'")).rows[0]?.value;
  return id === key.id ? key : undefined;
}

function opened<T>(open: () => T, sealed: T): T {
  try {
    return open();
  } catch {
    return sealed; // not sealed by this database's workers: shown as stored
  }
}

/** The runs of a database, oldest first: queued, running, suspended, waiting and finished. */
export async function listRuns(options: { database: string; status?: RunStatus[]; runKey?: string | Uint8Array }): Promise<ListedRun[]> {
  const conn = await connect(options.database, "listRuns");
  try {
    const key = await readingKey(conn.pool, options.runKey);
    const rows = await conn.pool.query<RunRow>(
      `SELECT * FROM statecraft.runs ${options.status ? "WHERE status = ANY($1)" : ""} ORDER BY enqueued_at, run_id`,
      options.status ? [options.status] : [],
    );
    return rows.rows.map((r) => ({
      sessionId: r.session_id,
      runId: r.run_id,
      status: r.status,
      input: key ? opened(() => key.queueSealer([r.session_id, r.run_id]).unseal(r.input), r.input) : r.input,
      ...(r.worker ? { worker: r.worker } : {}),
      enqueuedAt: iso(r.enqueued_at)!,
      ...(r.started_at ? { startedAt: iso(r.started_at) } : {}),
      ...(r.ended_at ? { endedAt: iso(r.ended_at) } : {}),
      ...(r.status === "suspended" && r.pending ? { pending: key ? opened(() => unsealJson(key.sealer(pendingScope(r.session_id, r.run_id)), r.pending!), r.pending) : r.pending } : {}),
      ...(typeof r.result?.reason === "string" ? { reason: r.result.reason } : {}),
      ...(isError(r.result?.error) ? { error: { code: r.result.error.code, message: r.result.error.message } } : {}),
    }));
  } catch (error) {
    throw databaseError(error, options.database);
  }
}

/**
 * A session's lines of one kind as they would be in its file (the trace's lines in seq order, the transcript's and
 * the audit's in the order written), across all its runs and the workers that ran them.
 */
export async function readLines(options: { database: string; sessionId?: string; stream: Exclude<LineStream, "events"> }): Promise<string[]> {
  const conn = await connect(options.database, "readLines");
  try {
    const rows = await conn.pool.query<{ line: string }>(
      `SELECT line FROM statecraft.lines WHERE stream = $1 ${options.sessionId !== undefined ? "AND session_id = $2" : ""} ORDER BY session_id, id`,
      options.sessionId !== undefined ? [options.stream, options.sessionId] : [options.stream],
    );
    return rows.rows.map((r) => r.line);
  } catch (error) {
    throw databaseError(error, options.database);
  }
}

/**
 * A session's trace from the database, as `loadSession` reads one from a file: what `replay`, `fork`, `scriptOf` and
 * the timeline take. Lines are in seq order across all the session's runs, whichever workers ran them.
 */
export async function loadSessionFromDatabase(options: { database: string; sessionId: string }): Promise<TraceSession> {
  const lines = (await readLines({ database: options.database, sessionId: options.sessionId, stream: "trace" })).map((l) => JSON.parse(l) as TraceLine);
  if (lines.length === 0) throw new AgentError("TRACE_SESSION_NOT_FOUND", `no session ${options.sessionId} in the database's statecraft.lines; listRuns({ database }) shows its runs`);
  lines.sort((a, b) => a.seq - b.seq);
  const first = lines[0] as TraceLine & { parentSession?: string };
  return { sessionId: options.sessionId, lines, ...(first.parentSession !== undefined ? { parentSession: first.parentSession } : {}) };
}
