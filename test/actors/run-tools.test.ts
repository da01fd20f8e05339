import { describe, expect, it } from "vitest";
import { startingAtOnce } from "../../src/actors/run-tools.js";
import { defineTool } from "../../src/tools/define-tool.js";

const tool = (executionMode: "parallel" | "sequential") =>
  defineTool({ name: executionMode, description: executionMode, inputSchema: { type: "object" }, risk: "read", executionMode, execute: () => "ok" });
const parallel = tool("parallel");
const sequential = tool("sequential");
const batch = (...tools: Array<typeof parallel>) => tools.map((t, i) => ({ call: { id: `c${i}`, name: t.name, input: {}, sessionId: "s" }, tool: t }));

describe("startingAtOnce", () => {
  it("is the leading run of parallel calls, or the first call, or none", () => {
    expect(startingAtOnce(batch())).toBe(0);
    expect(startingAtOnce(batch(sequential, parallel))).toBe(1);
    expect(startingAtOnce(batch(sequential, sequential))).toBe(1);
    expect(startingAtOnce(batch(parallel))).toBe(1);
    expect(startingAtOnce(batch(parallel, parallel, sequential, parallel))).toBe(2);
    expect(startingAtOnce(batch(parallel, parallel, parallel))).toBe(3);
  });
});
