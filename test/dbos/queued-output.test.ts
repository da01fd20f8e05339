import { expect, it } from "vitest";
import { z } from "zod";
import { enqueueRun, readLines, watch } from "../../src/dbos/index.js";
import { describeWithDatabase, plan, useDatabaseAndWorker } from "./support.js";

describeWithDatabase("a queued run with output", () => {
  const t = useDatabaseAndWorker("output-w");

  it("carries the schema (a zod schema queued as its JSON Schema) to the worker, which checks the answer against it", async () => {
    const output = z.object({ title: z.string(), year: z.number() });
    const good = await enqueueRun(plan("out", [], { text: '{"title":"Alien","year":1979}' }), { database: t.db.url, output, outputRetries: 0 });
    let ended: { reason?: string; output?: unknown } = {};
    for await (const event of watch({ database: t.db.url, ...good })) if (event.type === "turn_end") ended = event;
    expect(ended).toMatchObject({ reason: "final_answer", output: { title: "Alien", year: 1979 } });
    const first = JSON.parse((await readLines({ database: t.db.url, sessionId: good.sessionId, stream: "trace" }))[0]) as { details: { options: { output?: unknown; outputRetries?: number } } };
    expect(first.details.options).toMatchObject({ output: { required: ["title", "year"] }, outputRetries: 0 });

    // An answer that does not match, with outputRetries 0: the worker's run ends OUTPUT_INVALID at once.
    const bad = await enqueueRun(plan("bad", [], { text: '{"title":"Alien"}' }), { database: t.db.url, output, outputRetries: 0 });
    let failed: { reason?: string; error?: { code: string; message: string } } = {};
    for await (const event of watch({ database: t.db.url, ...bad })) if (event.type === "turn_end") failed = event;
    expect(failed.reason).toBe("model_error");
    expect(failed.error?.code).toBe("OUTPUT_INVALID");
  }, 120_000);
});
