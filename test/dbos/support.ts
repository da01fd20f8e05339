import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe } from "vitest";
import pg from "pg";
import { closeClients } from "../../src/dbos/index.js";
import { removeDir, tempDir } from "../support/engine.js";

/**
 * The PostgreSQL the statecraft/dbos tests run on: STATECRAFT_TEST_DATABASE_URL (`eval "$(scripts/postgres.sh
 * start)"` makes one). Unset, the tests are skipped: test/setup/optional-parts.ts has said so once for the run, or failed
 * it in CI.
 */
export const serverUrl = process.env.STATECRAFT_TEST_DATABASE_URL;

export function describeWithDatabase(name: string, body: () => void): void {
  (serverUrl ? describe : describe.skip)(name, body);
}

/** A fresh database of the test server, dropped by `drop()`: each test file gets its own. */
export async function freshDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `sc_${randomUUID().replace(/-/g, "").slice(0, 16)}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl!);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: serverUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export async function sql<T extends pg.QueryResultRow = Record<string, unknown>>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(text, values)).rows;
  } finally {
    await c.end();
  }
}

const fixture = join(import.meta.dirname, "fixtures", "worker.mjs");

export interface SpawnedWorker {
  id: string;
  child: ChildProcess;
  output(): string;
  /** SIGTERM: the worker stops and hands back what it held; resolves when the process exited. */
  stop(): Promise<void>;
  kill(): Promise<void>;
}

/** A place for a test's workers: their workspace and the counter files they write. */
export function workspace(): { cwd: string; counters: string; log(file: string): string[]; cleanup(): void } {
  const root = tempDir("statecraft-dbos-");
  const cwd = join(root, "work");
  const counters = join(root, "counters");
  mkdirSync(cwd);
  mkdirSync(counters);
  return {
    cwd,
    counters,
    log: (file) => (existsSync(join(counters, file)) ? readFileSync(join(counters, file), "utf8").split("\n").filter(Boolean) : []),
    cleanup: () => removeDir(root),
  };
}

/** Starts a worker process (test/dbos/fixtures/worker.mjs) and resolves once it takes work. */
export async function spawnWorker(
  config: { database: string; id: string; cwd: string; counters: string; concurrency?: number; deadAfterMs?: number; allow?: string[]; hooks?: boolean; sandbox?: unknown },
  env: NodeJS.ProcessEnv = process.env,
): Promise<SpawnedWorker> {
  const child = spawn(process.execPath, [fixture, JSON.stringify(config)], { stdio: ["ignore", "pipe", "pipe"], env });
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const ready = join(config.counters, `${config.id}.ready`);
  const started = Date.now();
  while (!existsSync(ready)) {
    if (child.exitCode !== null) throw new Error(`worker ${config.id} exited (${child.exitCode}) before taking work:\n${out}`);
    if (Date.now() - started > 60_000) throw new Error(`worker ${config.id} did not take work within 60 s:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    id: config.id,
    child,
    output: () => out,
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
    async kill() {
      if (child.exitCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

/** Waits until `check` holds (generous timeout: the machine is shared). */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A plan the fixture's model follows: one tool call per turn, then the final text. */
export function plan(tag: string, calls: Array<[string, Record<string, unknown>?]>, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ tag, calls: calls.map(([name, input]) => [name, { tag, ...(input ?? {}) }]), text: `${tag} done`, ...extra });
}

/**
 * A describe block's fresh database and one spawned worker (id `id`) on a workspace of its own, made before its tests
 * and removed after them; read `db`, `ws` and `worker` inside the tests.
 */
export function useDatabaseAndWorker(id: string): { readonly db: Awaited<ReturnType<typeof freshDatabase>>; readonly ws: ReturnType<typeof workspace>; readonly worker: SpawnedWorker } {
  const set: { db?: Awaited<ReturnType<typeof freshDatabase>>; ws?: ReturnType<typeof workspace>; worker?: SpawnedWorker } = {};
  beforeAll(async () => {
    set.db = await freshDatabase();
    set.ws = workspace();
    set.worker = await spawnWorker({ database: set.db.url, id, cwd: set.ws.cwd, counters: set.ws.counters });
  }, 120_000);
  afterAll(async () => {
    await set.worker?.kill();
    await closeClients();
    await set.db?.drop();
    set.ws?.cleanup();
  }, 60_000);
  return {
    get db() {
      return set.db!;
    },
    get ws() {
      return set.ws!;
    },
    get worker() {
      return set.worker!;
    },
  };
}
