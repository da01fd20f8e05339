import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, query, resume, scriptedModel } from "../../src/index.js";
import { collect, readJsonl, removeDir, tempDir } from "../support/engine.js";

/** Structured output across resume(): the answer's schema and outputRetries are part of the stored run. */

let cwd: string;
beforeEach(() => {
  cwd = tempDir("statecraft-resume-output-");
});
afterEach(() => removeDir(cwd));

const note = defineTool({
  name: "write_note",
  description: "Writes a note.",
  inputSchema: { type: "object", properties: { note: { type: "string" } }, required: ["note"] },
  risk: "write",
  execute: ({ note }: { note: string }) => `wrote ${note}`,
});
const Movie = z.object({ title: z.string(), year: z.number().int() });

async function suspended(outputRetries?: number) {
  const model = scriptedModel([{ toolCalls: [{ name: "write_note", input: { note: "alien" } }] }]);
  const { result } = await collect(query("Note a film, then name it.", { model, tools: [note], cwd, output: Movie, ...(outputRetries !== undefined ? { outputRetries } : {}), permissions: { whenUnanswered: "suspend" } }));
  if (result.status !== "suspended") throw new Error(`not suspended: ${JSON.stringify(result)}`);
  return result;
}

describe("resume() of a run with output", () => {
  it("checks the resumed run's answer against the recorded JSON Schema (asked again on errors)", async () => {
    const run = await suspended(2);
    const stored = readFileSync(join(cwd, ".agent", "runs", `${run.sessionId}.json`), "utf8");
    expect(stored).toContain(`"outputRetries":2`);
    expect(stored).toContain(`"required":["title","year"]`);
    const model = scriptedModel([{ text: "Noted." }, { text: '{"title":"Alien"}' }, { text: '{"title":"Alien","year":1979}' }]);
    // The first answer is not JSON, the second lacks year: asked again twice, then valid.
    const { result } = await collect(resume(run.sessionId, { model, tools: [note], cwd, answers: { [run.pending[0].callId]: "allow" } }));
    expect(result.reason).toBe("final_answer");
    expect(result.status === "completed" && result.output).toEqual({ title: "Alien", year: 1979 });
    expect(model.requests).toHaveLength(3);
    expect(model.requests[0].output?.schema).toMatchObject({ required: ["title", "year"] });
    const validated = readJsonl<{ state?: string; details?: { attempt?: number; valid?: boolean } }>(join(cwd, ".agent", "trace.jsonl")).filter((l) => l.state === "validate_output");
    expect(validated.map((l) => [l.details?.attempt, l.details?.valid])).toEqual([[1, false], [2, false], [3, true]]);
  });

  it("the recorded outputRetries ends the run OUTPUT_INVALID when the answers stay wrong", async () => {
    const run = await suspended(0);
    const model = scriptedModel([{ text: '{"title":"Alien"}' }]);
    const { result } = await collect(resume(run.sessionId, { model, tools: [note], cwd, answers: { [run.pending[0].callId]: "allow" } }));
    expect(result.reason).toBe("model_error");
    expect(result.error?.code).toBe("OUTPUT_INVALID");
    expect(result.error?.message).toMatch(/year/);
  });

  it("resume() given its own output uses that one", async () => {
    const run = await suspended();
    const model = scriptedModel([{ text: '"Alien"' }]);
    const { result } = await collect(resume(run.sessionId, { model, tools: [note], cwd, output: z.string(), answers: { [run.pending[0].callId]: "allow" } }));
    expect(result.status === "completed" && result.output).toBe("Alien");
  });
});
