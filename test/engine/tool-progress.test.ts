import { describe, expect, it } from "vitest";
import type { ToolContext } from "../../src/tools/define-tool.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { scriptedModel } from "../../src/models/scripted.js";
import { query } from "../../src/query.js";
import { collect } from "../support/engine.js";

describe("tool_progress", () => {
  it("a tool's context.progress becomes tool_progress events between its start and its result; late ones are dropped", async () => {
    let late: ToolContext["progress"];
    const tool = defineTool({
      name: "steps",
      description: "reports progress",
      inputSchema: { type: "object" },
      risk: "read",
      async execute(_input, context) {
        context.progress?.({ progress: 1, total: 2 });
        await new Promise((resolve) => setTimeout(resolve, 5));
        context.progress?.({ progress: 2, total: 2, message: "done" });
        late = context.progress;
        return "ok";
      },
    });
    const model = scriptedModel([{ toolCalls: [{ name: "steps", input: {} }] }, { text: "fin" }]);
    const { events } = await collect(query("go", { model, tools: [tool], traceFile: false }));
    expect(() => late?.({ progress: 3, total: 2 })).not.toThrow();
    const kinds = events.filter((e) => e.type.startsWith("tool_")).map((e) => e.type);
    expect(kinds).toEqual(["tool_start", "tool_progress", "tool_progress", "tool_result"]);
    const progress = events.filter((e) => e.type === "tool_progress");
    expect(progress).toEqual([
      { type: "tool_progress", call: expect.objectContaining({ name: "steps" }), progress: 1, total: 2 },
      { type: "tool_progress", call: expect.objectContaining({ name: "steps" }), progress: 2, total: 2, message: "done" },
    ]);
  });
});
