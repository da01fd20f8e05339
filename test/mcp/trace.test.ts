import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mcpTools } from "../../src/mcp/index.js";
import { scriptedModel } from "../../src/models/scripted.js";
import { query } from "../../src/query.js";
import { lastSessionId, loadSession, replay, scriptOf } from "../../src/debug/index.js";
import { collect } from "../support/engine.js";
import { makeTempDir, removeDir } from "../tools/workspace.js";
import { stdioServer } from "./servers.js";

let cwd: string;
beforeEach(() => {
  cwd = makeTempDir("statecraft-mcp-trace-");
});
afterEach(() => removeDir(cwd));

describe("a traced run with MCP tools", () => {
  it("replays from its recorded results with the server gone, and scripts into a regression case", async () => {
    // The server writes in the test's folder: its workspace inside the sandbox.
    const handle = await mcpTools({ memory: stdioServer("server-memory", [], { MEMORY_FILE_PATH: path.join(cwd, "m.jsonl") }) }, { workspace: cwd });
    const steps = [
      { toolCalls: [{ name: "mcp__memory__create_entities", input: { entities: [{ name: "x", entityType: "t", observations: ["o"] }] } }] },
      { toolCalls: [{ name: "mcp__memory__read_graph", input: {} }] },
      { text: "done" },
    ];
    const first = await collect(query("go", { model: scriptedModel(steps), tools: handle.tools, cwd, permissions: { allow: ["mcp__memory__*"] } }));
    expect(first.result.reason).toBe("final_answer");
    await handle.close();

    const file = path.join(cwd, ".agent", "trace.jsonl");
    const session = await loadSession(file, (await lastSessionId(file))!);
    // The memory server answers with structuredContent too: kept in the recorded results' details, and replayed.
    expect(JSON.stringify(session.lines)).toContain('"details":{"structuredContent"');
    const replayed = await replay(session);
    expect(replayed.divergence).toBeUndefined();
    expect(replayed.identical).toBe(true);

    // The script run again against a fresh server reproduces the calls and what they return.
    const script = scriptOf(session);
    const again = await mcpTools({ memory: stdioServer("server-memory", [], { MEMORY_FILE_PATH: path.join(cwd, "m2.jsonl") }) }, { workspace: cwd });
    try {
      const rerun = await collect(query(script.request, { model: scriptedModel(script.steps), tools: again.tools, cwd, traceFile: false, permissions: { allow: ["mcp__memory__*"] } }));
      const results = (r: typeof first) => r.events.flatMap((e) => (e.type === "tool_result" ? [[e.call.name, e.result.content]] : []));
      expect(results(rerun)).toEqual(results(first));
      expect(rerun.result.reason).toBe("final_answer");
    } finally {
      await again.close();
    }
  }, 60_000);
});
