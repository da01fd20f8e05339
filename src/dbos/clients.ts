import pg from "pg";
import type { DBOSClient } from "@dbos-inc/dbos-sdk";
import { checkDatabaseUrl, databaseError, DBOS_SCHEMA, migrate } from "./database.js";
import { APP_NAME } from "./names.js";

interface Connection {
  pool: pg.Pool;
  dbos: DBOSClient;
}

const connections = new Map<string, Promise<Connection>>();

/**
 * The connection a process's enqueueRun / answer / watch calls share, per database: made (and the database migrated)
 * on first use. Idle, it lets the process exit.
 */
export function connect(database: unknown, where: string): Promise<Connection> {
  const url = checkDatabaseUrl(database, where);
  let found = connections.get(url);
  if (!found) {
    found = open(url);
    connections.set(url, found);
    found.catch(() => connections.delete(url));
  }
  return found;
}

async function open(database: string): Promise<Connection> {
  await migrate(database);
  const pool = new pg.Pool({ connectionString: database, max: 4, allowExitOnIdle: true, idleTimeoutMillis: 1000, connectionTimeoutMillis: 10_000 });
  pool.on("error", () => undefined);
  try {
    const { DBOSClient } = await import("@dbos-inc/dbos-sdk");
    const dbos = await DBOSClient.create({ systemDatabaseUrl: database, systemDatabasePool: pool, systemDatabaseSchemaName: DBOS_SCHEMA, applicationName: APP_NAME });
    return { pool, dbos };
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw databaseError(error, database);
  }
}

/** Closes this process's client connections (enqueueRun, answer, watch); later calls open them again. */
export async function closeClients(): Promise<void> {
  const all = [...connections.values()];
  connections.clear();
  for (const c of all) {
    const conn = await c.catch(() => undefined);
    if (!conn) continue;
    await conn.dbos.destroy().catch(() => undefined);
    await conn.pool.end().catch(() => undefined);
  }
}
