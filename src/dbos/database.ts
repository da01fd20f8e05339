import pg from "pg";
import { AgentError } from "../errors/agent-error.js";

/** The version of statecraft's own tables (schema `statecraft`); a database with a newer one is refused. */
export const SCHEMA_VERSION = 1;

/** Where DBOS keeps its system tables, in the same database. */
export const DBOS_SCHEMA = "dbos";

/** Checks a database option: a postgres:// or postgresql:// URL. */
export function checkDatabaseUrl(database: unknown, where: string): string {
  if (typeof database !== "string" || database === "") {
    throw new AgentError("INVALID_OPTIONS", `${where}: database must be a PostgreSQL URL such as postgres://user@127.0.0.1:5432/db (or set STATECRAFT_DATABASE_URL)`);
  }
  let url: URL;
  try {
    url = new URL(database);
  } catch {
    throw new AgentError("INVALID_OPTIONS", `${where}: database ${JSON.stringify(redactUrl(database))} is not a URL; give postgres://user@host:port/db`);
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    throw new AgentError("INVALID_OPTIONS", `${where}: database ${JSON.stringify(redactUrl(database))} is not a PostgreSQL URL (it starts with ${url.protocol}//); give postgres://user@host:port/db`);
  }
  return database;
}

/** The URL without its password, for messages. */
export function redactUrl(database: string): string {
  try {
    const url = new URL(database);
    if (url.password) url.password = "***";
    return url.toString();
  } catch {
    return database.replace(/:[^:@/]*@/, ":***@");
  }
}

/** A database error as an AgentError that says what to fix. */
export function databaseError(error: unknown, database: string): AgentError {
  if (error instanceof AgentError) return error;
  const e = error as { code?: string; message?: string };
  const where = redactUrl(database);
  const message = e?.message ?? String(error);
  if (e?.code === "ECONNREFUSED" || e?.code === "ENOTFOUND" || e?.code === "EHOSTUNREACH" || e?.code === "ETIMEDOUT" || /connect|timeout/i.test(message) && !e?.code?.match(/^[0-9A-Z]{5}$/)) {
    return new AgentError("DATABASE_UNREACHABLE", `cannot reach PostgreSQL at ${where} (${e?.code ?? message}): start it (scripts/postgres.sh start) or fix the URL given as database / --database / STATECRAFT_DATABASE_URL`, { cause: error });
  }
  if (e?.code === "3D000") return new AgentError("DATABASE_UNREACHABLE", `PostgreSQL at ${where} has no such database (${message}): create it (createdb) or fix the URL`, { cause: error });
  if (e?.code === "28P01" || e?.code === "28000") return new AgentError("DATABASE_UNREACHABLE", `PostgreSQL at ${where} refused the login (${message}): fix the user or password in the URL`, { cause: error });
  return new AgentError("DATABASE_FAILED", `PostgreSQL at ${where}: ${message}`, { cause: error });
}

/** A pool for statecraft's own tables; connection errors of idle clients are logged, never thrown at random. */
export function openPool(database: string, max = 4): pg.Pool {
  const pool = new pg.Pool({ connectionString: database, max, connectionTimeoutMillis: 10_000 });
  pool.on("error", () => undefined);
  return pool;
}

// One advisory lock serialises every migration of the database (DBOS's and ours): two workers migrating a fresh
// database at once crash one of them ("tuple concurrently updated").
const MIGRATION_LOCK = 0x5c_4a_f7;

const TABLES = `
CREATE SCHEMA IF NOT EXISTS statecraft;
CREATE TABLE IF NOT EXISTS statecraft.meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS statecraft.runs (
  run_id text PRIMARY KEY,
  session_id text NOT NULL,
  status text NOT NULL,
  input text NOT NULL,
  options jsonb NOT NULL,
  worker text,
  enqueued_at bigint NOT NULL,
  started_at bigint,
  ended_at bigint,
  part integer NOT NULL DEFAULT 0,
  pending jsonb,
  result jsonb,
  messages jsonb
);
CREATE INDEX IF NOT EXISTS runs_session ON statecraft.runs (session_id, enqueued_at);
CREATE TABLE IF NOT EXISTS statecraft.stored_runs (session_id text PRIMARY KEY, run_id text NOT NULL, record jsonb NOT NULL);
CREATE TABLE IF NOT EXISTS statecraft.lines (
  id bigserial PRIMARY KEY,
  session_id text NOT NULL,
  run_id text NOT NULL,
  part integer NOT NULL,
  stream text NOT NULL,
  idx integer NOT NULL,
  line text NOT NULL,
  UNIQUE (run_id, part, stream, idx)
);
CREATE INDEX IF NOT EXISTS lines_session ON statecraft.lines (session_id, stream, id);
CREATE TABLE IF NOT EXISTS statecraft.workers (id text PRIMARY KEY, seen_at bigint NOT NULL);
CREATE TABLE IF NOT EXISTS statecraft.tool_starts (workflow_id text NOT NULL, call_id text NOT NULL, PRIMARY KEY (workflow_id, call_id));
CREATE TABLE IF NOT EXISTS statecraft.events (
  run_id text NOT NULL,
  part integer NOT NULL,
  idx integer NOT NULL,
  session_id text NOT NULL,
  event jsonb NOT NULL,
  PRIMARY KEY (run_id, part, idx)
);
`;

/**
 * Tables added since version 1 was first made, created by every migration that finds them missing. An older
 * statecraft ignores them: `statecraft.aborts` holds the abort requests of runs (abortRun), which its workers don't read.
 */
const ADDED_TABLES = `
CREATE TABLE IF NOT EXISTS statecraft.aborts (
  run_id text PRIMARY KEY,
  session_id text NOT NULL,
  requested_at bigint NOT NULL,
  requested_by text
);
`;

/**
 * Creates or checks statecraft's tables (and, with `dbos`, DBOS's system tables) under the migration lock. A database
 * whose statecraft tables are newer than this statecraft is refused, naming both versions.
 */
export async function migrate(database: string, options: { dbos: boolean } = { dbos: true }): Promise<void> {
  const client = new pg.Client({ connectionString: database, connectionTimeoutMillis: 10_000 });
  client.on("error", () => undefined);
  try {
    await client.connect();
  } catch (error) {
    throw databaseError(error, database);
  }
  try {
    // Tried, not waited for inside a statement: DBOS's migration builds indexes CONCURRENTLY, which waits for every
    // statement running meanwhile, and a statement blocked on the lock would wait for the migration: a deadlock.
    while (!(await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1) AS ok", [MIGRATION_LOCK])).rows[0].ok) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const found = await client.query<{ value: string }>(
      "SELECT value FROM statecraft.meta WHERE key = 'schema_version'",
    ).catch(() => ({ rows: [] as Array<{ value: string }> }));
    const version = found.rows[0] ? Number(found.rows[0].value) : undefined;
    if (version !== undefined && version > SCHEMA_VERSION) {
      throw new AgentError(
        "DATABASE_SCHEMA_NEWER",
        `the database ${redactUrl(database)} holds statecraft tables of version ${version}, and this statecraft knows version ${SCHEMA_VERSION}: upgrade statecraft on this machine (every worker and client of a database must be as new as its newest), or give another database`,
      );
    }
    if (version === undefined) {
      await client.query(TABLES);
      await client.query("INSERT INTO statecraft.meta (key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO NOTHING", [String(SCHEMA_VERSION)]);
    }
    // Added to version 1 later: made in a database its tables were made in before (it takes no lock when there).
    await client.query(ADDED_TABLES);
    if (options.dbos) {
      const { DBOS } = await import("@dbos-inc/dbos-sdk");
      await DBOS.migrate(database, { schemaName: DBOS_SCHEMA });
    }
  } catch (error) {
    throw databaseError(error, database);
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]).catch(() => undefined);
    await client.end().catch(() => undefined);
  }
}
