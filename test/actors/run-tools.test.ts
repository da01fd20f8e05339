import { describe, expect, it } from "vitest";
import { runTools, startingAtOnce } from "../../src/actors/run-tools.js";
import type { AgentEvent } from "../../src/events.js";
import { defineTool, type RunInfo } from "../../src/tools/define-tool.js";

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

describe("runTools", () => {
  it("gives each tool the calling run's info, every field of the batch's, with a relay that passes subagent events up", async () => {
    const seen: RunInfo[] = [];
    const probe = defineTool({
      name: "probe",
      description: "records what it is given",
      inputSchema: { type: "object" },
      risk: "read",
      execute: (_input, ctx) => {
        seen.push(ctx.run);
        ctx.run.relay({ type: "subagent_event", depth: 1, event: { type: "text_delta", text: "hi" } } as AgentEvent);
        ctx.run.relay({ type: "text_delta", text: "not a subagent's" } as AgentEvent);
        return "ok";
      },
    });
    const hostSubagent = () => undefined;
    const run = {
      sessionId: "s1",
      depth: 1,
      maxDelegationDepth: 3,
      deadline: 1_700_000_000_000,
      remainingTurns: 7,
      remainingToolCalls: 9,
      traceFile: "/tmp/t.jsonl",
      permissions: { mode: "default" as const },
      model: { name: "m", stream: async function* () {} },
      hostSubagent,
    } satisfies Omit<RunInfo, "relay">;
    const reported: Array<{ type: string }> = [];
    const calls = [0, 1].map((i) => ({ call: { id: `c${i}`, name: "probe", input: {}, sessionId: "s1" }, tool: probe }));
    await runTools({ calls, cwd: "/tmp", run }, new AbortController().signal, (event) => reported.push(event));
    expect(seen).toHaveLength(2);
    for (const info of seen) {
      const { relay, ...rest } = info;
      expect(rest).toEqual(run);
      expect(typeof relay).toBe("function");
    }
    // Only subagent events go up: one per call (both parallel calls run before either result is reported).
    expect(reported.map((e) => e.type)).toEqual(["subagent.event", "subagent.event", "tool.finished", "tool.finished"]);
  });
});
