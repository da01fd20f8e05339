import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { closeClients } from "../../src/dbos/index.js";
import { followLines } from "../../src/dbos/follow.js";
import { describeWithDatabase, freshDatabase, until } from "./support.js";

const insert = "INSERT INTO statecraft.lines (session_id, run_id, part, stream, idx, line) VALUES ($1, $2, 0, $3, $4, $5)";

describeWithDatabase("followLines: the lines table read by id as workers write it", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  beforeAll(async () => {
    db = await freshDatabase();
  }, 60_000);
  afterAll(async () => {
    await closeClients();
    await db?.drop();
  }, 60_000);

  it("delivers what is there, then new lines of its stream only, and a line whose insert committed after a later one", async () => {
    const setup = new pg.Client({ connectionString: db.url });
    const slow = new pg.Client({ connectionString: db.url });
    const got: string[] = [];
    let following: ReturnType<typeof followLines> | undefined;
    try {
      // The first read makes the tables (as any client's first call does).
      following = followLines({ database: db.url, stream: "trace", intervalMs: 20, gapGraceMs: 600_000, onLines: (lines) => got.push(...lines) });
      await following.ready;
      await setup.connect();
      await slow.connect();
      await setup.query(insert, ["s", "r", "trace", 0, "before"]);
      await until(() => got.length === 1, "the first line");

      // An insert that took its id and has not committed yet, then later lines that did commit.
      await slow.query("BEGIN");
      await slow.query(insert, ["s", "r", "trace", 1, "committed late"]);
      await setup.query(insert, ["s", "r", "transcript", 0, "another stream"]);
      await setup.query(insert, ["s", "r", "trace", 2, "after"]);
      await until(() => got.includes("after"), "the line after the open insert");
      expect(got).toEqual(["before", "after"]);
      await slow.query("COMMIT");
      await until(() => got.length === 3, "the late line");
      expect(got).toEqual(["before", "after", "committed late"]);
    } finally {
      await following?.stop();
      await setup.end();
      await slow.end();
    }
  }, 60_000);
});
