import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { replay } from "../../src/debug/replay.js";
import { machineChart } from "../../src/inspect/chart.js";
import { engineMachine } from "../../src/machine/engine.js";
import { loadSession } from "../../src/debug/session.js";
import { scriptedModel } from "../../src/models/scripted.js";
import { query } from "../../src/query.js";
import { collect, outline, readJsonl, removeDir, tempDir } from "../support/engine.js";

let cwd: string;
beforeEach(() => {
  cwd = tempDir("statecraft-output-");
});
afterEach(() => removeDir(cwd));

const Movie = z.object({ title: z.string(), year: z.number().int().min(1888), tags: z.array(z.string()).default([]) });
type Line = { kind: string; state?: string; details?: Record<string, unknown> };
const traced = () => readJsonl<Line>(join(cwd, ".agent", "trace.jsonl"));

/** The states entered and the run's end, the way the caller sees them. */
const states = (events: Parameters<typeof outline>[0]) => outline(events).filter((e) => e.startsWith("state:") || e.startsWith("turn_end"));

describe("query({ output }): the final answer checked in validate_output", () => {
  it("valid at once: done with result.output (parsed by the schema), the trace records it, replay is identical", async () => {
    const model = scriptedModel([{ text: '{"title":"Alien","year":1979}' }]);
    const { events, result } = await collect(query("a film", { model, cwd, output: Movie }));
    expect(states(events)).toEqual(["state:build_context", "state:call_model", "state:stream_text", "state:validate_output", "turn_end:final_answer"]);
    expect(result.status === "completed" && result.output).toEqual({ title: "Alien", year: 1979, tags: [] });
    expect(events.at(-1)).toMatchObject({ type: "turn_end", output: { title: "Alien", year: 1979, tags: [] } });
    // What the model was asked for.
    expect(model.requests[0].output).toMatchObject({ name: "final_answer", schema: { type: "object", required: expect.arrayContaining(["title", "year"]) } });
    const lines = traced();
    expect(lines.find((l) => l.state === "validate_output")?.details).toEqual({ attempt: 1, valid: true, output: { title: "Alien", year: 1979, tags: [] }, response: expect.objectContaining({ text: '{"title":"Alien","year":1979}' }) });
    expect(lines.at(-1)?.details).toMatchObject({ reason: "final_answer", output: { title: "Alien", year: 1979, tags: [] } });
    expect(lines[0].details).toMatchObject({ options: { output: { type: "object" }, outputRetries: 2 } });
    const replayed = await replay(await loadSession(join(cwd, ".agent", "trace.jsonl"), result.sessionId));
    expect(replayed.divergence).toBeUndefined();
    expect(replayed.identical).toBe(true);
  });

  it("valid at the second and at the third attempt: the errors go back to the model as input.path: message, each attempt a model call", async () => {
    for (const attempts of [2, 3]) {
      const answers = ['{"title":"Alien"}', '{"title":"Alien","year":"soon"}', '{"title":"Alien","year":1979}'].slice(3 - attempts);
      const model = scriptedModel(answers.map((text) => ({ text })));
      const { events, result } = await collect(query("a film", { model, cwd, output: Movie }));
      const once = ["state:call_model", "state:stream_text", "state:validate_output"];
      expect(states(events)).toEqual(["state:build_context", ...once, ...Array.from({ length: attempts - 1 }, () => ["state:build_context", ...once]).flat(), "turn_end:final_answer"]);
      expect(result.status === "completed" && result.output).toEqual({ title: "Alien", year: 1979, tags: [] });
      expect(result.turns).toBe(attempts);
      const retry = model.requests[1].messages.at(-1)!;
      expect(retry.role).toBe("user");
      expect(retry.content).toMatch(/^Your final answer does not match the required JSON Schema: output\.year: .+Answer again with only the corrected JSON value\.$/);
      const checks = traced().filter((l) => l.state === "validate_output").slice(-attempts);
      expect(checks.map((l) => [l.details!.attempt, l.details!.valid])).toEqual(Array.from({ length: attempts }, (_, i) => [i + 1, i === attempts - 1]));
      expect(checks[0].details!.errors).toMatch(/^output\.year: /);
      const replayed = await replay(await loadSession(join(cwd, ".agent", "trace.jsonl"), result.sessionId));
      expect(replayed.divergence).toBeUndefined();
    }
  });

  it("still invalid after outputRetries: model_error with OUTPUT_INVALID and the last errors; no output", async () => {
    const model = scriptedModel([{ text: "Alien (1979)" }, { text: '{"title":1}' }, { text: '{"title":"Alien","year":10}' }]);
    const { events, result } = await collect(query("a film", { model, cwd, output: Movie }));
    expect(states(events).filter((s) => s === "state:validate_output")).toHaveLength(3);
    expect(result.reason).toBe("model_error");
    expect(result.error).toEqual({ code: "OUTPUT_INVALID", message: expect.stringMatching(/^the final answer did not match the output schema after 3 attempts: output\.year: /) });
    expect(result.status === "completed" && result.output).toBeUndefined();
    expect(model.requests[1].messages.at(-1)!.content).toMatch(/the answer is not JSON/);
  });

  it("retries count against maxTurns; outputRetries: 0 allows one answer", async () => {
    const model = scriptedModel([{ text: "{}" }, { text: "{}" }]);
    const { result } = await collect(query("a film", { model, cwd, output: Movie, maxTurns: 1 }));
    expect(result.error).toMatchObject({ code: "OUTPUT_INVALID", message: expect.stringContaining("maxTurns = 1 left no model call") });
    expect(model.calls).toBe(1);
    const once = scriptedModel([{ text: "{}" }]);
    const { result: zero } = await collect(query("a film", { model: once, cwd, output: Movie, outputRetries: 0 }));
    expect(zero.error?.code).toBe("OUTPUT_INVALID");
  });

  it("JSON Schema outputs: an array and a primitive; a fenced answer still counts as JSON", async () => {
    const list = scriptedModel([{ text: '```json\n["a","b"]\n```' }]);
    const { result } = await collect(query("tags", { model: list, cwd, output: { type: "array", items: { type: "string" } } as const }));
    expect(result.status === "completed" && result.output).toEqual(["a", "b"]);
    const number = scriptedModel([{ text: "forty-two" }, { text: "42" }]);
    const { result: n } = await collect(query("n", { model: number, cwd, output: { type: "integer" } as const }));
    expect(n.status === "completed" && n.output).toBe(42);
  });

  it("tools still run before the final answer; only the final answer is checked", async () => {
    const model = scriptedModel([{ toolCalls: [{ name: "list_dir", input: { path: "." } }] }, { text: '{"title":"Alien","year":1979}' }]);
    const { builtinTools } = await import("../../src/tools/builtin/index.js");
    const { events, result } = await collect(query("a film", { model, cwd, output: Movie, tools: builtinTools() }));
    expect(states(events).filter((s) => s === "state:validate_output")).toHaveLength(1);
    expect(result.status === "completed" && result.output).toMatchObject({ title: "Alien" });
  });

  it("the chart shows validate_output between the model's answer and done", () => {
    const arrows = machineChart(engineMachine).edges.map((e) => `${e.from}>${e.to}${e.label ? ` ${e.label}` : ""}`);
    expect(arrows).toContain("model>validate_output done [outputRequested]");
    expect(arrows).toEqual(expect.arrayContaining([expect.stringMatching(/^validate_output>done \[outputValid\]/), expect.stringMatching(/^validate_output>build_context /)]));
  });

  it("a bad output option is INVALID_OPTIONS naming it", () => {
    const model = scriptedModel([{ text: "x" }]);
    expect(() => query("x", { model, cwd, output: "a string" as never })).toThrow(/options\.output: must be a Standard Schema/);
    expect(() => query("x", { model, cwd, output: z.object({ at: z.date() }) })).toThrow(/options\.output: its zod schema cannot be turned into the JSON Schema/);
    expect(() => query("x", { model, cwd, output: Movie, outputRetries: -1 })).toThrow(/options\.outputRetries must be a whole number ≥ 0, got -1/);
  });
});
