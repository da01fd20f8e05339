import { createServer } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { answer, closeClients, createWorker, enqueueRun, recoverRuns, watch } from "../../src/dbos/index.js";
import { AgentError, scriptedModel } from "../../src/index.js";
import { describeWithDatabase, freshDatabase, sql } from "./support.js";

/** A port nothing listens on (taken, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const model = scriptedModel([{ text: "hi" }]);

it("refuses a database option that is not a PostgreSQL URL, naming what to give", async () => {
  expect(() => createWorker({ database: "http://localhost:5432/db", model })).toThrow(/not a PostgreSQL URL .*postgres:\/\/user@host:port\/db/);
  expect(() => createWorker({ database: "", model })).toThrow(/database must be a PostgreSQL URL/);
  await expect(enqueueRun("x", { database: "not a url" })).rejects.toThrow(/is not a URL; give postgres:\/\//);
  await expect(enqueueRun("x", { database: "postgres://u:secret@127.0.0.1:1/db", onAsk: () => "allow" } as never)).rejects.toThrow(/options.onAsk can't be queued/);
  await expect(recoverRuns({ database: "postgres://127.0.0.1:1/db", fromWorker: "" })).rejects.toThrow(/fromWorker must be the dead worker's id/);
  await expect(answer({ database: "postgres://127.0.0.1:1/db", sessionId: "s", runId: "r", answers: { c: "maybe" as never } })).rejects.toThrow(/must be "allow", "deny" or "allow_always"/);
});

it("says a database can't be reached, and how to start one, without showing its password", async () => {
  const url = `postgres://someone:hunter2@127.0.0.1:${await closedPort()}/nowhere`;
  const error = (await enqueueRun("x", { database: url }).catch((e: unknown) => e)) as AgentError;
  expect(error).toBeInstanceOf(AgentError);
  expect(error.code).toBe("DATABASE_UNREACHABLE");
  expect(error.message).toMatch(/cannot reach PostgreSQL at postgres:\/\/someone:\*\*\*@127\.0\.0\.1:\d+\/nowhere \(ECONNREFUSED\): start it/);
  expect(error.message).not.toContain("hunter2");
  await expect(recoverRuns({ database: url, fromWorker: "w" })).rejects.toMatchObject({ code: "DATABASE_UNREACHABLE" });
  await expect(createWorker({ database: url, model }).start()).rejects.toMatchObject({ code: "DATABASE_UNREACHABLE" });
}, 60_000);

describeWithDatabase("statecraft/dbos: a database it can't use", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  beforeAll(async () => {
    db = await freshDatabase();
  }, 60_000);
  afterAll(async () => {
    await closeClients();
    await db?.drop();
  });

  it("refuses tables of a newer statecraft, naming both versions and what to do", async () => {
    // A first client makes the tables; then a newer statecraft is said to have written them.
    await enqueueRun("hello", { database: db.url });
    await closeClients();
    await sql(db.url, "UPDATE statecraft.meta SET value = '99' WHERE key = 'schema_version'");
    const error = (await enqueueRun("again", { database: db.url }).catch((e: unknown) => e)) as AgentError;
    expect(error.code).toBe("DATABASE_SCHEMA_NEWER");
    expect(error.message).toMatch(/statecraft tables of version 99, and this statecraft knows version 1: upgrade statecraft/);
    await expect(createWorker({ database: db.url, model }).start()).rejects.toMatchObject({ code: "DATABASE_SCHEMA_NEWER" });
  }, 60_000);

  it("watch of a run the database does not have is RUN_NOT_FOUND", async () => {
    await sql(db.url, "UPDATE statecraft.meta SET value = '1' WHERE key = 'schema_version'");
    await closeClients();
    const stream = watch({ database: db.url, sessionId: "nobody", runId: "none" });
    await expect(stream.next()).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
  }, 60_000);
});
