import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mcpTools, type McpToolsHandle } from "../../src/mcp/index.js";
import { scriptedModel } from "../../src/models/scripted.js";
import { query } from "../../src/query.js";
import { collect, readJsonl } from "../support/engine.js";
import { makeTempDir, removeDir } from "../tools/workspace.js";
import { stdioServer } from "./servers.js";

let cwd: string;
let handles: McpToolsHandle[] = [];
beforeEach(() => {
  cwd = makeTempDir("statecraft-mcp-");
  handles = [];
});
afterEach(async () => {
  await Promise.all(handles.map((h) => h.close()));
  removeDir(cwd);
});

/** Servers whose workspace (what they may write inside the sandbox) is the test's folder, as the CLI starts them. */
async function open(servers: Parameters<typeof mcpTools>[0], options: Parameters<typeof mcpTools>[1] = {}): Promise<McpToolsHandle> {
  const handle = await mcpTools(servers, { workspace: cwd, ...options });
  handles.push(handle);
  return handle;
}

interface AuditLine {
  tool: string;
  ok: boolean;
  permission: { decision: string; by: string; rule?: string } | null;
}
const audit = () => readJsonl<AuditLine>(path.join(cwd, ".agent", "audit.jsonl"));
const tracedPermissions = () =>
  readJsonl<{ details: { permissions?: Array<Record<string, unknown>> } }>(path.join(cwd, ".agent", "trace.jsonl")).flatMap((l) => l.details.permissions ?? []);
const results = (events: Awaited<ReturnType<typeof collect>>["events"]) =>
  events.flatMap((e) => (e.type === "tool_result" ? [{ name: e.call.name, ...e.result }] : []));

describe("MCP stdio servers in a run", () => {
  it("the memory server's tools run in query() under an allow rule, are audited and traced, and its state survives a restart", async () => {
    const memoryFile = path.join(cwd, "memory.jsonl");
    const memory = () => stdioServer("server-memory", [], { MEMORY_FILE_PATH: memoryFile });
    const handle = await open({ memory: memory() });
    expect(handle.servers()).toEqual([{ name: "memory", tools: 9 }]);
    const names = handle.tools.map((t) => t.name);
    expect(names).toContain("mcp__memory__read_graph");
    expect(handle.tools.find((t) => t.name === "mcp__memory__read_graph")?.risk).toBe("read");
    expect(handle.tools.find((t) => t.name === "mcp__memory__create_entities")?.risk).toBe("write");

    const entity = { name: "statecraft", entityType: "project", observations: ["its loop is a state machine"] };
    const model = scriptedModel([
      { toolCalls: [{ name: "mcp__memory__create_entities", input: { entities: [entity] } }] },
      { toolCalls: [{ name: "mcp__memory__read_graph", input: {} }] },
      { text: "remembered" },
    ]);
    const { events, result } = await collect(query("remember", { model, tools: handle.tools, cwd, permissions: { allow: ["mcp__memory__create_*"] } }));
    expect(result.error).toBeUndefined();
    expect(result.reason).toBe("final_answer");
    const [created, graph] = results(events);
    expect(created).toMatchObject({ name: "mcp__memory__create_entities", isError: false });
    expect(graph.content).toContain("its loop is a state machine");
    expect(fs.readFileSync(memoryFile, "utf8")).toContain("statecraft");
    expect(audit().map((l) => [l.tool, l.ok, l.permission?.by, l.permission?.rule])).toEqual([
      ["mcp__memory__create_entities", true, "rule", "mcp__memory__create_*"],
      ["mcp__memory__read_graph", true, "mode", undefined],
    ]);
    expect(tracedPermissions().map((p) => [p.name, p.decision, p.by])).toEqual([
      ["mcp__memory__create_entities", "allow", "rule"],
      ["mcp__memory__read_graph", "allow", "mode"],
    ]);

    // A fresh server process on the same file sees what the first one stored.
    await handle.close();
    const again = await open({ memory: memory() });
    const read = again.tools.find((t) => t.name === "mcp__memory__open_nodes")!;
    const out = await read.execute({ names: ["statecraft"] }, { signal: new AbortController().signal, cwd, sessionId: "s", toolCallId: "c" });
    expect(JSON.stringify(out)).toContain("its loop is a state machine");
  });

  it("a deny rule on an MCP tool keeps it from running; a write tool with no rule is asked", async () => {
    const memoryFile = path.join(cwd, "memory.jsonl");
    const handle = await open({ memory: stdioServer("server-memory", [], { MEMORY_FILE_PATH: memoryFile }) });
    const asked: string[] = [];
    const model = scriptedModel([
      { toolCalls: [{ name: "mcp__memory__create_entities", input: { entities: [{ name: "kept", entityType: "t", observations: [] }] } }] },
      { toolCalls: [{ name: "mcp__memory__delete_entities", input: { entityNames: ["kept"] } }] },
      { text: "done" },
    ]);
    const { events } = await collect(
      query("go", {
        model,
        tools: handle.tools,
        cwd,
        permissions: { deny: ["mcp__memory__delete_*"], onAsk: (r) => (asked.push(r.call.name), "allow") },
      }),
    );
    expect(asked).toEqual(["mcp__memory__create_entities"]);
    const [, denied] = results(events);
    expect(denied).toMatchObject({ name: "mcp__memory__delete_entities", isError: true });
    expect(denied.content).toMatch(/denied/i);
    expect(fs.readFileSync(memoryFile, "utf8")).toContain("kept");
    expect(audit().map((l) => [l.tool, l.permission?.decision, l.permission?.by])).toEqual([
      ["mcp__memory__create_entities", "allow", "human"],
      ["mcp__memory__delete_entities", "deny", "rule"],
    ]);
  });

  it("the filesystem server writes for real under a path rule, and its own refusal of a path outside its root reaches the model as an error", async () => {
    fs.mkdirSync(path.join(cwd, "src"));
    const outside = makeTempDir("statecraft-mcp-outside-");
    fs.writeFileSync(path.join(outside, "secret.txt"), "top secret");
    try {
      const handle = await open({ fs: { ...stdioServer("server-filesystem", [cwd]), cwd } });
      const write = handle.tools.find((t) => t.name === "mcp__fs__write_file")!;
      expect(write.risk).toBe("exec");
      expect(write.permissionSubjectKind).toBe("path");
      const asked: string[] = [];
      const model = scriptedModel([
        // One call per response: a denied call keeps the rest of its response from running.
        { toolCalls: [{ name: "mcp__fs__write_file", input: { path: path.join(cwd, "src", "a.txt"), content: "from mcp" } }] },
        { toolCalls: [{ name: "mcp__fs__read_text_file", input: { path: path.join(outside, "secret.txt") } }] },
        // A person's deny ends the run: this call comes last.
        { toolCalls: [{ name: "mcp__fs__write_file", input: { path: path.join(cwd, "notes.txt"), content: "not allowed" } }] },
        { text: "done" },
      ]);
      const { events } = await collect(
        query("go", { model, tools: handle.tools, cwd, permissions: { allow: ["mcp__fs__write_file(src/**)", "mcp__fs__read_text_file"], onAsk: (r) => (asked.push(String(r.call.input.path)), "deny") } }),
      );
      const [allowed, outsideRead, refused] = results(events);
      expect(allowed.isError).toBe(false);
      expect(fs.readFileSync(path.join(cwd, "src", "a.txt"), "utf8")).toBe("from mcp");
      expect(asked).toEqual([path.join(cwd, "notes.txt")]);
      expect(refused.isError).toBe(true);
      expect(fs.existsSync(path.join(cwd, "notes.txt"))).toBe(false);
      expect(outsideRead.isError).toBe(true);
      expect(outsideRead.content).toMatch(/Access denied - path outside allowed directories/);
      expect(outsideRead.content).not.toContain("top secret");
    } finally {
      removeDir(outside);
    }
  });

  it("a server that fails to start fails mcpTools() naming it with its stderr tail, and closes the servers that did start", async () => {
    const failing = { command: process.execPath, args: ["-e", "console.error('config missing: set API_KEY'); process.exit(3)"] };
    const attempt = mcpTools({ memory: stdioServer("server-memory", [], { MEMORY_FILE_PATH: path.join(cwd, "m.jsonl") }), broken: failing });
    await expect(attempt).rejects.toMatchObject({ code: "MCP_SERVER_FAILED" });
    await expect(attempt).rejects.toThrow(/MCP server "broken" did not start[\s\S]*config missing: set API_KEY/);
    const missing = mcpTools({ nothere: { command: path.join(cwd, "no-such-binary") } });
    await expect(missing).rejects.toThrow(/MCP server "nothere" did not start \(command .*no-such-binary\)/);
  });

  it("eight read-only calls of one response run in parallel and all get their results", async () => {
    const handle = await open({ every: stdioServer("server-everything") });
    const echo = handle.tools.find((t) => t.name === "mcp__every__echo")!;
    expect(echo.executionMode).toBe("parallel");
    const calls = Array.from({ length: 8 }, (_, i) => ({ name: "mcp__every__echo", input: { message: `m${i}` } }));
    const model = scriptedModel([{ toolCalls: calls }, { text: "done" }]);
    const { events } = await collect(query("go", { model, tools: handle.tools, cwd }));
    const out = results(events);
    expect(out).toHaveLength(8);
    expect(out.map((r) => r.content).sort()).toEqual(calls.map((c) => `Echo: ${c.input.message}`).sort());
    // All eight were started before the first finished: one batch, run together.
    const firstResult = events.findIndex((e) => e.type === "tool_result");
    expect(events.slice(0, firstResult).filter((e) => e.type === "tool_start")).toHaveLength(8);
  });
});
