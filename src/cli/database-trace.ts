import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentError } from "../errors/agent-error.js";
import { UsageError } from "./usage-error.js";

/**
 * The database a trace command reads, or undefined for a file: `--database`, else STATECRAFT_DATABASE_URL when no
 * file is given. A file and `--database` together are a usage error.
 */
export function traceDatabase(env: NodeJS.ProcessEnv, file: string | undefined, flags: { database?: string }): string | undefined {
  if (file !== undefined && flags.database !== undefined) throw new UsageError("give a trace file or --database, not both");
  return file === undefined ? (flags.database ?? env.STATECRAFT_DATABASE_URL) : flags.database;
}

/**
 * Where `trace list|show|replay|fork|script` read: the file given; else, with `--database` (or
 * STATECRAFT_DATABASE_URL), the trace lines statecraft/dbos workers wrote to PostgreSQL, copied to a private temporary
 * file the command reads as any trace file (removed after it); else the default file.
 */
export async function withTraceSource<T>(
  env: NodeJS.ProcessEnv,
  file: string | undefined,
  flags: { database?: string },
  /** The file to read otherwise: the one given, resolved, or the default. */
  fallback: () => string,
  read: (file: string) => Promise<T>,
): Promise<T> {
  const database = traceDatabase(env, file, flags);
  if (database === undefined) return read(fallback());
  let lines: string[];
  try {
    const { readLines, closeClients } = await import("../dbos/index.js");
    try {
      lines = await readLines({ database, stream: "trace" });
    } finally {
      await closeClients();
    }
  } catch (error) {
    if (error instanceof AgentError) throw new UsageError(error.message);
    throw error;
  }
  const dir = mkdtempSync(join(tmpdir(), "statecraft-db-trace-"));
  try {
    const copy = join(dir, "trace.jsonl");
    writeFileSync(copy, lines.length > 0 ? `${lines.join("\n")}\n` : "", { mode: 0o600 });
    return await read(copy).catch((error: unknown) => {
      // Messages name the file read: here that is a copy about to be removed, so they name the database instead.
      if (error instanceof AgentError) {
        error.message = error.message
          .replaceAll(`\`statecraft trace list ${copy}\``, "`statecraft trace list --database URL`")
          .replaceAll(copy, "the database's trace lines");
      }
      throw error;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Follows the database's trace lines as workers write them (what `statecraft inspect --database` shows): each batch is
 * appended to a private temporary file (served at `/trace`) and handed to `onLines`. Resolves once the lines already
 * there have been delivered.
 */
export async function followDatabaseTrace(
  database: string,
  onLines: (lines: string[]) => void,
  onError: (error: Error) => void,
): Promise<{ file: string; stop(): Promise<void> }> {
  let dbos: typeof import("../dbos/follow.js");
  let clients: typeof import("../dbos/clients.js");
  try {
    [dbos, clients] = await Promise.all([import("../dbos/follow.js"), import("../dbos/clients.js")]);
  } catch (error) {
    throw new UsageError(`statecraft/dbos needs @dbos-inc/dbos-sdk and pg: npm install @dbos-inc/dbos-sdk@5 pg (${(error as Error).message})`);
  }
  const dir = mkdtempSync(join(tmpdir(), "statecraft-db-trace-"));
  const file = join(dir, "trace.jsonl");
  writeFileSync(file, "", { mode: 0o600 });
  const following = dbos.followLines({
    database,
    stream: "trace",
    onLines(lines) {
      appendFileSync(file, `${lines.join("\n")}\n`);
      onLines(lines);
    },
    onError,
  });
  const stop = async () => {
    await following.stop();
    rmSync(dir, { recursive: true, force: true });
    await clients.closeClients();
  };
  try {
    await following.ready;
  } catch (error) {
    await stop();
    if (error instanceof AgentError) throw new UsageError(error.message);
    throw error;
  }
  return { file, stop };
}
