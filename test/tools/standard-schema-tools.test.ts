import { type } from "arktype";
import * as v from "valibot";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { AgentError } from "../../src/errors/agent-error.js";
import { scriptedModel } from "../../src/models/scripted.js";
import type { ToolMessage } from "../../src/models/messages.js";
import { query } from "../../src/query.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { isStandardSchema, type StandardSchemaV1 } from "../../src/tools/standard-schema.js";
import { collect, removeDir, tempDir } from "../support/engine.js";

let cwd: string;
beforeEach(() => {
  cwd = tempDir("statecraft-standard-schema-");
});
afterEach(() => removeDir(cwd));

/** A tool over the given schema that records every input it ran with. */
function recordingTool(inputSchema: StandardSchemaV1<unknown, Record<string, unknown>> | Record<string, unknown>) {
  const received: unknown[] = [];
  const tool = defineTool({
    name: "book",
    description: "Books a table.",
    inputSchema: inputSchema as Record<string, unknown>,
    risk: "read",
    execute: (input) => {
      received.push(input);
      return "booked";
    },
  });
  return { tool, received };
}

/** Runs one call with `first`, then (after the model sees the result) one with `second`, then answers. */
async function twoCalls(inputSchema: Parameters<typeof recordingTool>[0], first: unknown, second: unknown) {
  const { tool, received } = recordingTool(inputSchema);
  const model = scriptedModel([{ toolCalls: [{ name: "book", input: first }] }, { toolCalls: [{ name: "book", input: second }] }, { text: "done" }]);
  const { result } = await collect(query("book it", { model, tools: [tool], cwd, traceFile: false }));
  const toolMessages = model.requests[2].messages.filter((m): m is ToolMessage => m.role === "tool");
  return { result, received, results: toolMessages.map((m) => ({ content: m.content, isError: m.isError })), spec: model.requests[0].tools[0] };
}

const LIBRARIES = {
  zod: z.object({
    guests: z.number().int().min(1),
    name: z.string().transform((s) => s.toUpperCase()),
    when: z.string().default("tonight"),
  }),
  valibot: v.object({
    guests: v.pipe(v.number(), v.integer(), v.minValue(1)),
    name: v.pipe(v.string(), v.transform((s) => s.toUpperCase())),
    when: v.optional(v.string(), "tonight"),
  }),
  arktype: type({
    guests: "number.integer >= 1",
    name: type("string").pipe((s) => s.toUpperCase()),
    when: type("string").default("tonight"),
  }),
} as const;

describe("tools whose inputSchema is a Standard Schema, through query()", () => {
  for (const [library, schema] of Object.entries(LIBRARIES)) {
    it(`${library}: the model gets the library's JSON Schema; invalid input goes back as input.path: message; the tool gets the parsed value`, async () => {
      expect(isStandardSchema(schema)).toBe(true);
      const run = await twoCalls(schema, { guests: 0, name: 7 }, { guests: 2, name: "ada" });
      // The JSON Schema the library made of the input side.
      expect(run.spec.inputSchema).toMatchObject({ type: "object", properties: { guests: { type: "integer" }, name: { type: "string" } } });
      expect(run.spec.inputSchema.required).toEqual(expect.arrayContaining(["guests", "name"]));
      // The first call never ran: each issue named by its path.
      expect(run.results[0].isError).toBe(true);
      expect(run.results[0].content).toMatch(/invalid input for book: .*input\.guests: [^;]+; .*input\.name: /);
      // The second ran with the parsed value: transform applied, default filled.
      expect(run.received).toEqual([{ guests: 2, name: "ADA", when: "tonight" }]);
      expect(run.results[1]).toEqual({ content: "booked", isError: false });
      expect(run.result.reason).toBe("final_answer");
    });
  }

  it("a refinement the JSON Schema cannot say still applies (zod superRefine)", async () => {
    const schema = z.object({ from: z.number(), to: z.number() }).refine((r) => r.from < r.to, { message: "from must be before to", path: ["to"] });
    const run = await twoCalls(schema, { from: 5, to: 1 }, { from: 1, to: 5 });
    expect(run.results[0]).toEqual({ content: expect.stringContaining("input.to: from must be before to"), isError: true });
    expect(run.received).toEqual([{ from: 1, to: 5 }]);
  });

  it("a schema that cannot become JSON Schema is INVALID_TOOL naming the tool and why", () => {
    const attempt = (inputSchema: StandardSchemaV1<unknown, Record<string, unknown>>) => () =>
      defineTool({ name: "when", description: "d", inputSchema, risk: "read", execute: () => "x" });
    expect(attempt(z.object({ at: z.date() }))).toThrow(/tool "when": its zod inputSchema cannot be turned into the JSON Schema the model is sent: .*Date/);
    expect(attempt(v.object({ at: v.date() }))).toThrow(/tool "when": its valibot inputSchema cannot be turned into the JSON Schema the model is sent: .*date/);
    try {
      attempt(z.object({ at: z.date() }))();
    } catch (error) {
      expect((error as AgentError).code).toBe("INVALID_TOOL");
    }
  });

  it("a Standard Schema of something other than an object is refused with the fix", () => {
    expect(() => defineTool({ name: "n", description: "d", inputSchema: z.string() as never, risk: "read", execute: () => "x" })).toThrow(
      /tool "n": inputSchema must describe an object \(type: "object"\), got type "string"; wrap other input in an object/,
    );
  });

  it("any other Standard Schema implementer: validated by its own validate; without a JSON Schema converter it is refused by name", () => {
    const custom: StandardSchemaV1<{ n: number }> = {
      "~standard": {
        version: 1,
        vendor: "handmade",
        validate: (value) => (typeof (value as { n?: unknown }).n === "number" ? { value: value as { n: number } } : { issues: [{ message: "must be a number", path: ["n"] }] }),
      },
    };
    expect(() => defineTool({ name: "h", description: "d", inputSchema: custom, risk: "read", execute: () => "x" })).toThrow(/tool "h": its handmade inputSchema cannot be turned .*\("handmade"\) gives no JSON Schema/);
    const withJson = Object.assign(custom, {
      "~standard": { ...custom["~standard"], jsonSchema: { input: () => ({ type: "object", properties: { n: { type: "number" } }, required: ["n"] }), output: () => ({}) } },
    });
    const tool = defineTool({ name: "h", description: "d", inputSchema: withJson, risk: "read", execute: ({ n }) => String(n + 1) });
    expect(tool.inputSchema).toEqual({ type: "object", properties: { n: { type: "number" } }, required: ["n"] });
    expect(tool.validateInput({ n: "x" })).toEqual({ ok: false, message: "input.n: must be a number" });
    expect(tool.validateInput({ n: 2 })).toEqual({ ok: true, value: { n: 2 } });
  });

  it("an asynchronous check ends the run with INVALID_TOOL saying how to fix it, and the tool never runs", async () => {
    const schema = z.object({ id: z.string() }).refine(async () => true);
    const { tool, received } = recordingTool(schema);
    const model = scriptedModel([{ toolCalls: [{ name: "book", input: { id: "a" } }] }, { text: "done" }]);
    const { result } = await collect(query("go", { model, tools: [tool], cwd, traceFile: false }));
    expect(received).toEqual([]);
    expect(result.reason).toBe("tool_error");
    expect(result.error).toMatchObject({ code: "INVALID_TOOL", message: expect.stringContaining("validates asynchronously") });
  });
});
