import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mcpTools, type McpToolsHandle } from "../../src/mcp/index.js";
import { scriptedModel } from "../../src/models/scripted.js";
import { query } from "../../src/query.js";
import { collect } from "../support/engine.js";
import { makeTempDir, removeDir } from "../tools/workspace.js";
import { startTestServer } from "./http-server.js";
import { startModernServer } from "./modern-http-server.js";
import { stdioServer, toolContext } from "./servers.js";

// The client (SDK v2, @modelcontextprotocol/client 2.4.0) against servers of the 2026-07-28 revision written with
// SDK v2 (@modelcontextprotocol/server 2.4.0), one that refuses the 2025 handshake, and the reference servers and a
// 1.x server that speak only 2025-11-25.

const MODERN = fileURLToPath(new URL("../fixtures/mcp/modern-server.mjs", import.meta.url));

let cwd: string;
let handle: McpToolsHandle | undefined;
const cleanups: Array<() => Promise<void>> = [];
beforeEach(() => {
  cwd = makeTempDir("statecraft-mcp-modern-");
});
afterEach(async () => {
  await handle?.close();
  handle = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
  removeDir(cwd);
});

async function waitFor(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// The servers get the test's folder as their workspace (what they may write inside the sandbox), as the CLI starts them.
describe("stdio servers of both generations", () => {
  it("a v2 server that serves both is reached with the 2025 handshake first; pinned, it speaks 2026-07-28", async () => {
    const log = join(cwd, "seen.log");
    handle = await mcpTools({ both: { command: process.execPath, args: [MODERN, "both", log] } }, { workspace: cwd });
    expect(handle.protocol("both")).toBe("2025-11-25");
    const echo = handle.tools.find((t) => t.name === "mcp__both__echo")!;
    expect(echo.risk).toBe("read");
    expect(await echo.execute({ text: "hi" }, toolContext())).toEqual({ content: "echo: hi", details: { structuredContent: { length: 2 } } });
    await handle.close();
    handle = await mcpTools({ pinned: { command: process.execPath, args: [MODERN, "both", log], protocol: "2026-07-28" } }, { workspace: cwd });
    expect(handle.protocol("pinned")).toBe("2026-07-28");
    expect(await handle.tools[0].execute({ text: "yo" }, toolContext())).toMatchObject({ content: "echo: yo" });
    expect(readFileSync(log, "utf8").trim().split("\n")).toEqual(["tools/call echo legacy", "tools/call echo modern"]);
  }, 60_000);

  it("a server that refuses the 2025 handshake is spoken to in 2026-07-28, and its tools run in a query()", async () => {
    const log = join(cwd, "seen.log");
    handle = await mcpTools({ modern: { command: process.execPath, args: [MODERN, "modern-only", log] } }, { workspace: cwd });
    expect(handle.protocol("modern")).toBe("2026-07-28");
    const model = scriptedModel([{ toolCalls: [{ name: "mcp__modern__echo", input: { text: "from a run" } }] }, { text: "ok" }]);
    const { events, result } = await collect(query("go", { model, tools: handle.tools, cwd }));
    expect(result.reason).toBe("final_answer");
    expect(events.find((e) => e.type === "tool_result")).toMatchObject({ result: { content: "echo: from a run", details: { structuredContent: { length: 10 } } } });
    expect(readFileSync(log, "utf8").trim().split("\n")).toEqual(["tools/call echo modern"]);
  }, 60_000);

  it("a reference server of the previous generation refuses a pinned 2026-07-28 and the start fails naming it", async () => {
    await expect(mcpTools({ memory: { ...stdioServer("server-memory"), protocol: "2026-07-28" } }, { connectTimeoutMs: 10_000 })).rejects.toThrow(/MCP server "memory" did not start/);
    handle = await mcpTools({ memory: stdioServer("server-memory") });
    expect(handle.protocol("memory")).toBe("2025-11-25");
  }, 60_000);
});

describe("Streamable HTTP servers of both generations", () => {
  it("a v2 server serving both is negotiated to 2026-07-28 (server/discover); protocol legacy keeps it on 2025-11-25", async () => {
    const server = await startModernServer();
    cleanups.push(() => server.close());
    handle = await mcpTools({ web: { url: server.url } });
    expect(handle.protocol("web")).toBe("2026-07-28");
    const shout = handle.tools.find((t) => t.name === "mcp__web__shout")!;
    expect(await shout.execute({ text: "hi" }, toolContext())).toEqual({ content: "HI", details: { structuredContent: { length: 2, era: "modern" } } });
    // McpServer advertises tools.listChanged: the client listens for changes (subscriptions/listen) instead of
    // fetching its list again, though the list's hint (ttlMs 0, the SDK's default) says it is stale at once.
    expect(server.seen.filter((m) => !m.startsWith("subscriptions/listen"))).toEqual(["server/discover 2026-07-28", "tools/list 2026-07-28", "tools/call 2026-07-28"]);
    expect(server.seen).toContain("subscriptions/listen 2026-07-28");
    await handle.close();
    handle = await mcpTools({ web: { url: server.url, protocol: "legacy" } });
    expect(handle.protocol("web")).toBe("2025-11-25");
    expect(await handle.tools[0].execute({ text: "old" }, toolContext())).toMatchObject({ details: { structuredContent: { era: "legacy" } } });
  }, 60_000);

  it("a 2026-07-28-only server is reached; a 1.x server (2025 only) falls back to initialize; pinning 2026-07-28 to it fails", async () => {
    const modern = await startModernServer({ legacy: "reject" });
    const old = await startTestServer();
    cleanups.push(() => modern.close(), () => old.close());
    handle = await mcpTools({ modern: { url: modern.url }, old: { url: old.url } });
    expect([handle.protocol("modern"), handle.protocol("old")]).toEqual(["2026-07-28", "2025-11-25"]);
    const model = scriptedModel([{ toolCalls: [{ name: "mcp__modern__shout", input: { text: "a" } }, { name: "mcp__old__shout", input: { text: "b" } }] }, { text: "ok" }]);
    const { events } = await collect(query("go", { model, tools: handle.tools, cwd }));
    // Two read-only calls run side by side: their results come as each ends.
    expect(events.flatMap((e) => (e.type === "tool_result" ? [e.result.content] : [])).sort()).toEqual(["A", "B"]);
    await expect(mcpTools({ old: { url: old.url, protocol: "2026-07-28" } }, { connectTimeoutMs: 10_000 })).rejects.toThrow(/MCP server "old" did not start \(url /);
  }, 60_000);

  it("a tool list with a ttlMs is not fetched again while fresh; one stale at once is fetched again after a call (servers that push no changes)", async () => {
    const fresh = await startModernServer({ toolsCache: { ttlMs: 60_000, cacheScope: "public" }, listChanged: false });
    cleanups.push(() => fresh.close());
    handle = await mcpTools({ fresh: { url: fresh.url } });
    for (let i = 0; i < 3; i++) await handle.tools[0].execute({ text: "x" }, toolContext());
    expect(fresh.seen.filter((m) => m.startsWith("tools/list"))).toHaveLength(1);
    await handle.close();

    const stale = await startModernServer({ toolsCache: { ttlMs: 0 }, listChanged: false });
    cleanups.push(() => stale.close());
    handle = await mcpTools({ stale: { url: stale.url } });
    expect(handle.servers()).toEqual([{ name: "stale", tools: 1 }]);
    expect(stale.seen.filter((m) => m.startsWith("tools/list"))).toHaveLength(1);
    stale.addTool(true);
    await handle.tools[0].execute({ text: "x" }, toolContext());
    await waitFor(() => handle!.tools.some((t) => t.name === "mcp__stale__later"), "the stale list to be fetched again");
    expect(stale.seen.filter((m) => m.startsWith("tools/list"))).toHaveLength(2);
  }, 60_000);

  it("list_changed reaches the client over subscriptions/listen on 2026-07-28", async () => {
    const server = await startModernServer({ listChanged: true });
    cleanups.push(() => server.close());
    handle = await mcpTools({ live: { url: server.url } });
    const tools = handle.tools;
    await waitFor(() => server.seen.some((m) => m.startsWith("subscriptions/listen")), "the subscription");
    server.addTool();
    await waitFor(() => tools.some((t) => t.name === "mcp__live__later"), "the new tool");
    expect(await tools.find((t) => t.name === "mcp__live__later")!.execute({}, toolContext())).toBe("later ran");
  }, 60_000);
});
