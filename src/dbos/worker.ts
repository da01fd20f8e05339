import { createHash } from "node:crypto";
import { hostname } from "node:os";
import { resolve } from "node:path";
import { statSync } from "node:fs";
import type pg from "pg";
import { AgentError } from "../errors/agent-error.js";
import type { Logger } from "../logger.js";
import type { EngineObserver } from "../observers/observe.js";
import type { Model } from "../models/model.js";
import type { PermissionOptions } from "../permissions/types.js";
import type { AnyTool } from "../tools/define-tool.js";
import { HOOK_NAMES, type AgentHooks } from "../hooks.js";
import { hideFromTools } from "../tools/tool-env.js";
import { resolveSandbox, type SandboxOption } from "../sandbox/index.js";
import { checkRunKey, resolveRunKey, RUN_KEY_ENV } from "./run-key.js";
import { checkDatabaseUrl, databaseError, DBOS_SCHEMA, migrate, openPool, redactUrl } from "./database.js";
import { APP_NAME, APP_VERSION, QUEUE, WORKFLOW } from "./names.js";
import { handBack } from "./recover.js";
import { runPiece, setHost } from "./run-workflow.js";
import type { RunOptions } from "./run-options.js";
import { startHeartbeat, type Heartbeat } from "./heartbeat.js";
import { AbortRequests } from "./abort-requests.js";

/** How often a worker running runs asks the database whether one was aborted (abortRun). */
const ABORT_POLL_MS = 150;

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
  /**
   * Hooks applied to every run the worker executes (`beforeToolCall`, `afterToolCall`, …, as `query()` takes them).
   * Each runs inside a recorded step: once per call, and a replay gets its recorded answer.
   */
  hooks?: AgentHooks;
  /**
   * The key signing what the worker trusts again from the database (a suspended run, a session's conversation).
   * Default `$STATECRAFT_RUN_KEY`, else the user's session key (one machine); every worker of a database must share it.
   */
  runKey?: string | Uint8Array;
  /** A worker not seen for this long (heartbeats in the database) has its runs recovered by the others (default 10 000). */
  deadAfterMs?: number;
  logger?: Logger;
  /**
   * Observers of every run the worker executes, as `query({ observers })` takes them (statecraft/otel's
   * `openTelemetry()`: a queued run's spans join the trace of the client that queued it).
   */
  observers?: readonly EngineObserver[];
  /**
   * The OS sandbox of every process a run's tools start, as query()'s `sandbox` (docs/sandbox.md). Inside it a tool
   * sees neither this process (its own PID namespace: no /proc/<worker>/environ or cmdline) nor `databaseFile`.
   */
  sandbox?: SandboxOption;
  /** A file the database URL was read from (`statecraft worker --database-file`): hidden inside the sandbox. */
  databaseFile?: string;
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
  if ((permissions as PermissionOptions).onAsk !== undefined) throw fail("permissions.onAsk can't be given: nobody can be asked on a worker, so a question suspends the run; answer it from any process with answer({ database, sessionId, runId, answers })");
  const hooks = options.hooks ?? {};
  if (!hooks || typeof hooks !== "object") throw fail(`hooks must be an object of functions (${HOOK_NAMES.join(", ")})`);
  for (const [name, hook] of Object.entries(hooks)) {
    if (!(HOOK_NAMES as readonly string[]).includes(name)) throw fail(`hooks.${name} is not a hook; the hooks are ${HOOK_NAMES.join(", ")} (a question is answered with answer(), not a hook)`);
    if (typeof hook !== "function") throw fail(`hooks.${name} must be a function`);
  }
  const key = resolveRunKey(options.runKey);
  if (options.observers !== undefined && (!Array.isArray(options.observers) || options.observers.some((o) => o === null || typeof o !== "object"))) {
    throw fail("observers must be a list of observers ({ state?, emitted?, finished? })");
  }
  const sandbox = options.sandbox;
  try {
    resolveSandbox(sandbox, "sandbox");
  } catch (error) {
    throw fail((error as Error).message);
  }
  if (options.databaseFile !== undefined && typeof options.databaseFile !== "string") throw fail("databaseFile must be a file's path");

  let pool: pg.Pool | undefined;
  let heartbeat: Heartbeat | undefined;
  let aborts: AbortRequests | undefined;
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
        hideSecrets(database, options.runKey, options.databaseFile);
        await migrate(database);
        const { DBOS, DBOSClient } = await import("@dbos-inc/dbos-sdk");
        pool = openPool(database, concurrency + 4);
        const client = await DBOSClient.create({ systemDatabaseUrl: database, systemDatabaseSchemaName: DBOS_SCHEMA, applicationName: APP_NAME });
        await checkRunKey(pool, key, redactUrl(database));
        aborts = new AbortRequests(pool, ABORT_POLL_MS, options.logger);
        setHost({ id, pool, client, aborts, model, tools: options.tools ?? [], cwd, permissions, key, ...(options.hooks ? { hooks } : {}), ...(options.logger ? { logger: options.logger } : {}), ...(options.observers ? { observers: options.observers } : {}), ...(sandbox !== undefined ? { sandbox } : {}) });
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
        // The queue as this process sees it, not as a row of DBOS's queues table: DBOS 5.x reads a database-backed
        // queue's workerConcurrency from that one row, so the worker started last would set it for all. A
        // process-local queue of the same name claims the same workflows (workflow_status.queue_name) under this
        // worker's own limit; its partitions (one per session, concurrency 1) are still enforced across all workers.
        const { registerInternalQueue } = await import("@dbos-inc/dbos-sdk/eventreceiver");
        const local = registerInternalQueue(queue, { workerConcurrency: concurrency, partitionConcurrency: 1, minPollingIntervalMs: 100 });
        // Registered once per process and name: a worker started again here brings its own limit.
        local.workerConcurrency = concurrency;
        await DBOS.launch();
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
      aborts?.stop();
      // What did not finish is handed back: its workflows go back to the queue for any worker (from their journal).
      await handBack(pool!, id).catch((error: unknown) => options.logger?.error({ err: (error as Error).message }, `statecraft: worker ${id} could not hand back its runs (${redactUrl(database)})`));
      await stopClient?.().catch(() => undefined);
      await pool?.end().catch(() => undefined);
      setHost(undefined);
      inProcess = false;
    },
  };
}

/**
 * What the agent's tools must never see, hidden from the processes they start (src/tools/tool-env.ts): the database's
 * URL and password (with them an agent could rewrite the runs it waits on, or answer its own questions), any other
 * PostgreSQL URL, the run key, and libpq's PG* variables (PGPASSWORD, PGHOST, …) and DBOS's own.
 */
function hideSecrets(database: string, runKey: string | Uint8Array | undefined, databaseFile: string | undefined): void {
  const values = [database];
  try {
    const password = decodeURIComponent(new URL(database).password);
    if (password) values.push(password);
  } catch {
    // checked already
  }
  const key = runKey !== undefined ? Buffer.from(runKey).toString() : process.env[RUN_KEY_ENV];
  if (key) values.push(key);
  hideFromTools({
    names: ["STATECRAFT_DATABASE_URL", RUN_KEY_ENV],
    prefixes: ["PG", "DBOS_"],
    values,
    valuePatterns: [/^\s*postgres(ql)?:\/\//i],
    ...(databaseFile !== undefined ? { files: [resolve(databaseFile)] } : {}),
  });
}
