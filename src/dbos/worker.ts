import { createHash } from "node:crypto";
import { hostname } from "node:os";
import { resolve } from "node:path";
import { statSync } from "node:fs";
import type pg from "pg";
import { AgentError } from "../errors/agent-error.js";
import type { Logger } from "../logger.js";
import type { Model } from "../models/model.js";
import type { PermissionOptions } from "../permissions/types.js";
import type { AnyTool } from "../tools/define-tool.js";
import { checkDatabaseUrl, databaseError, DBOS_SCHEMA, migrate, openPool, redactUrl } from "./database.js";
import { APP_NAME, APP_VERSION, QUEUE, WORKFLOW } from "./names.js";
import { handBack } from "./recover.js";
import { runPiece, setHost } from "./run-workflow.js";
import type { RunOptions } from "./run-options.js";
import { startHeartbeat, type Heartbeat } from "./heartbeat.js";

export interface WorkerOptions {
  /** The PostgreSQL URL every worker and client of these runs shares. */
  database: string;
  tools?: readonly AnyTool[];
  /** The model, or a function of the run's options giving one. */
  model: Model | ((options: RunOptions & { sessionId: string; runId: string }) => Model);
  /** The worker's stable identity, its DBOS executor id (default: derived from the host name and `cwd`). */
  id?: string;
  /** At most this many runs active at once on each worker (default 4; a suspended run holds none). */
  concurrency?: number;
  /** The queue's name (default `statecraft_runs`); enqueueRun's `queue` must name the same. */
  queue?: string;
  /** Where tools run (default: process.cwd()). */
  cwd?: string;
  /** The worker's permissions; a run's rules may narrow them, never widen them. A question suspends the run. */
  permissions?: Omit<PermissionOptions, "onAsk" | "whenUnanswered">;
  /** A worker not seen for this long (heartbeats in the database) has its runs recovered by the others (default 10 000). */
  deadAfterMs?: number;
  logger?: Logger;
}

export interface Worker {
  readonly id: string;
  /** Resolves once the worker takes work (database migrated, DBOS launched, queue registered). */
  start(): Promise<void>;
  /** Resolves once its runs have finished (within `graceMs`, default 0) or been handed back to the queue. */
  stop(options?: { graceMs?: number }): Promise<void>;
}

let inProcess = false;
let registered = false;

/** Default worker id: the host name and a hash of the folder, so a worker restarted in place recovers its own runs. */
export function defaultWorkerId(cwd: string): string {
  return `${hostname()}-${createHash("sha256").update(resolve(cwd)).digest("hex").slice(0, 8)}`;
}

/**
 * A worker that runs queued agent runs as DBOS workflows (docs/scale-out.md). One per process: DBOS is one per
 * process. Several workers, on any machines, share one database.
 */
export function createWorker(options: WorkerOptions): Worker {
  const fail = (message: string) => new AgentError("INVALID_OPTIONS", `createWorker: ${message}`);
  if (!options || typeof options !== "object") throw fail("options are required: { database, model, tools }");
  const database = checkDatabaseUrl(options.database, "createWorker");
  const model = options.model;
  if (!model || (typeof model !== "function" && typeof (model as Model).stream !== "function")) throw fail("model must be a Model or a function of the run's options returning one");
  const cwd = resolve(options.cwd ?? process.cwd());
  try {
    if (!statSync(cwd).isDirectory()) throw new Error();
  } catch {
    throw fail(`cwd ${JSON.stringify(cwd)} is not an existing folder`);
  }
  const concurrency = options.concurrency ?? 4;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw fail(`concurrency must be a whole number ≥ 1, got ${JSON.stringify(options.concurrency)}`);
  const id = options.id ?? defaultWorkerId(cwd);
  if (typeof id !== "string" || !/^[A-Za-z0-9._:@-]{1,100}$/.test(id)) throw fail(`id must be 1-100 letters, digits or . _ : @ -, got ${JSON.stringify(id)}`);
  const queue = options.queue ?? QUEUE;
  if (typeof queue !== "string" || !/^[A-Za-z0-9_.-]{1,64}$/.test(queue)) throw fail(`queue must be a name of letters, digits, _ . -, got ${JSON.stringify(queue)}`);
  const deadAfterMs = options.deadAfterMs ?? 10_000;
  for (const tool of options.tools ?? []) if (!tool || typeof tool.validateInput !== "function") throw fail("every tool must be made with defineTool()");
  const permissions = options.permissions ?? {};
  if ((permissions as PermissionOptions).onAsk !== undefined) throw fail("permissions.onAsk can't be given: a question suspends the run, and answer() answers it from any process");

  let pool: pg.Pool | undefined;
  let heartbeat: Heartbeat | undefined;
  let state: "new" | "started" | "stopped" = "new";
  let stopClient: (() => Promise<void>) | undefined;
  return {
    id,
    async start() {
      if (state !== "new") throw new AgentError("INVALID_OPTIONS", `worker ${id} was already started`);
      if (inProcess) throw new AgentError("INVALID_OPTIONS", "createWorker: one worker per process (DBOS is one per process); start another process for another worker");
      inProcess = true;
      state = "started";
      try {
        await migrate(database);
        const { DBOS, DBOSClient } = await import("@dbos-inc/dbos-sdk");
        pool = openPool(database, concurrency + 4);
        const client = await DBOSClient.create({ systemDatabaseUrl: database, systemDatabaseSchemaName: DBOS_SCHEMA, applicationName: APP_NAME });
        setHost({ id, pool, client, model, tools: options.tools ?? [], cwd, permissions, ...(options.logger ? { logger: options.logger } : {}) });
        if (!registered) {
          DBOS.registerWorkflow(runPiece, { name: WORKFLOW });
          registered = true;
        }
        DBOS.setConfig({
          name: APP_NAME,
          systemDatabaseUrl: database,
          systemDatabaseSchemaName: DBOS_SCHEMA,
          applicationVersion: APP_VERSION,
          executorID: id,
          runMigrations: false,
          listenQueues: [queue],
          logLevel: process.env.STATECRAFT_DBOS_LOG_LEVEL ?? "error",
        });
        await DBOS.launch();
        // In DBOS 5.x a queue lives in the database and is registered after launch. Partitioned by session, one run
        // of a session at a time across all workers.
        await DBOS.registerQueue(queue, { workerConcurrency: concurrency, partitionConcurrency: 1, onConflict: "always_update", minPollingIntervalMs: 100 });
        heartbeat = startHeartbeat(pool, database, id, deadAfterMs, options.logger);
        stopClient = () => client.destroy();
      } catch (error) {
        state = "stopped";
        inProcess = false;
        await pool?.end().catch(() => undefined);
        throw databaseError(error, database);
      }
    },
    async stop(stopOptions = {}) {
      if (state !== "started") return;
      state = "stopped";
      const { DBOS } = await import("@dbos-inc/dbos-sdk");
      await heartbeat?.stop();
      await DBOS.shutdown({ workflowCompletionTimeoutMS: stopOptions.graceMs ?? 0 });
      // What did not finish is handed back: its workflows go back to the queue for any worker (from their journal).
      await handBack(pool!, id).catch((error: unknown) => options.logger?.error({ err: (error as Error).message }, `statecraft: worker ${id} could not hand back its runs (${redactUrl(database)})`));
      await stopClient?.().catch(() => undefined);
      await pool?.end().catch(() => undefined);
      setHost(undefined);
      inProcess = false;
    },
  };
}
