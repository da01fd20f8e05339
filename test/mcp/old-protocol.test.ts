import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mcpTools } from "../../src/mcp/index.js";
import { scriptedModel } from "../../src/models/scripted.js";
import { query } from "../../src/query.js";
import { collect } from "../support/engine.js";
import { makeTempDir, removeDir } from "../tools/workspace.js";

const SERVER = fileURLToPath(new URL("../fixtures/mcp/old-protocol-server.mjs", import.meta.url));

let cwd: string;
beforeEach(() => {
  cwd = makeTempDir("statecraft-mcp-old-");
});
afterEach(() => removeDir(cwd));

describe("a server of the old protocol 2024-11-05", () => {
  it("is negotiated down to and its tools run, with exec risk for want of annotations", async () => {
    const log = path.join(cwd, "received.jsonl");
    // The server logs in the test's folder: its workspace inside the sandbox.
    const handle = await mcpTools({ old: { command: process.execPath, args: [SERVER, log] } }, { workspace: cwd });
    try {
      const add = handle.tools.find((t) => t.name === "mcp__old__add")!;
      expect(add.risk).toBe("exec");
      const model = scriptedModel([{ toolCalls: [{ name: "mcp__old__add", input: { a: "2", b: 3 } }] }, { text: "5" }]);
      const { events } = await collect(query("add", { model, tools: handle.tools, cwd, permissions: { allow: ["mcp__old__*"] } }));
      expect(events.find((e) => e.type === "tool_result")).toMatchObject({ result: { content: "5", isError: false } });
    } finally {
      await handle.close();
    }
    const received = fs.readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { method?: string; params?: Record<string, unknown> });
    // The client offered the newest version and went on with the server's older one.
    expect(received[0]).toMatchObject({ method: "initialize", params: { protocolVersion: "2025-11-25" } });
    expect(received.map((m) => m.method)).toEqual(["initialize", "notifications/initialized", "tools/list", "tools/call"]);
    expect(received[3]).toMatchObject({ params: { name: "add", arguments: { a: 2, b: 3 } } });
  }, 60_000);

  it("the published memory server 0.6.2 (SDK 1.0.1, protocol 2024-11-05 only) lists and runs its tools; a risk override applies", async () => {
    const require = createRequire(import.meta.url);
    const pkg = path.dirname(require.resolve("server-memory-2024/package.json"));
    // The server's own SDK: 1.0.1, whose newest protocol is 2024-11-05.
    const sdk = JSON.parse(fs.readFileSync(path.join(pkg, "node_modules", "@modelcontextprotocol", "sdk", "package.json"), "utf8")) as { version: string };
    expect(sdk.version).toBe("1.0.1");
    const handle = await mcpTools({ old: { command: process.execPath, args: [path.join(pkg, "dist", "index.js")] } }, { risk: { "mcp__old__read_*": "read", "mcp__old__search_*": "read" } });
    try {
      expect(handle.servers()).toEqual([{ name: "old", tools: 9 }]);
      // No annotations in 2024-11-05: exec, unless overridden.
      expect(handle.tools.find((t) => t.name === "mcp__old__create_entities")?.risk).toBe("exec");
      expect(handle.tools.find((t) => t.name === "mcp__old__read_graph")?.risk).toBe("read");
      // Only reads: this version keeps its graph in a file inside its own package folder.
      const model = scriptedModel([{ toolCalls: [{ name: "mcp__old__read_graph", input: {} }, { name: "mcp__old__search_nodes", input: { query: "nothing" } }] }, { text: "empty" }]);
      const { events, result } = await collect(query("look", { model, tools: handle.tools, cwd }));
      expect(result.reason).toBe("final_answer");
      const results = events.flatMap((e) => (e.type === "tool_result" ? [e.result] : []));
      expect(results).toHaveLength(2);
      for (const r of results) expect(r).toMatchObject({ isError: false, content: expect.stringContaining('"entities"') });
    } finally {
      await handle.close();
    }
  }, 60_000);
});
