import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events.js";
import { mcpTools, type McpToolsHandle } from "../../src/mcp/index.js";
import { scriptedModel } from "../../src/models/scripted.js";
import { query } from "../../src/query.js";
import { collect } from "../support/engine.js";
import { makeTempDir, removeDir } from "../tools/workspace.js";
import { startTestServer } from "./http-server.js";
import { serverEntry, toolContext } from "./servers.js";

let cwd: string;
let handle: McpToolsHandle | undefined;
const cleanups: Array<() => Promise<void> | void> = [];
beforeEach(() => {
  cwd = makeTempDir("statecraft-mcp-http-");
});
afterEach(async () => {
  await handle?.close();
  handle = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
  removeDir(cwd);
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** The everything server in its Streamable HTTP mode, as a real child process; resolves once it listens. */
async function startEverythingHttp(): Promise<string> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [serverEntry("server-everything"), "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGKILL");
      }),
  );
  await new Promise<void>((resolve, reject) => {
    let err = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      err += chunk.toString();
      if (err.includes("listening on port")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`everything server exited ${code}: ${err}`)));
  });
  return `http://127.0.0.1:${port}/mcp`;
}

describe("MCP over Streamable HTTP", () => {
  it("the everything server's tools run in a query() over HTTP", async () => {
    const url = await startEverythingHttp();
    handle = await mcpTools({ every: { url } });
    expect(handle.tools.map((t) => t.name)).toEqual(expect.arrayContaining(["mcp__every__echo", "mcp__every__get-sum"]));
    const model = scriptedModel([
      { toolCalls: [{ name: "mcp__every__get-sum", input: { a: 2, b: "40" } }, { name: "mcp__every__echo", input: { message: "over http" } }] },
      { text: "done" },
    ]);
    const { events } = await collect(query("go", { model, tools: handle.tools, cwd }));
    // Parallel calls report in the order they finish, so each result is found by its call's name.
    const contents = new Map(events.flatMap((e) => (e.type === "tool_result" ? [[e.call.name, e.result.content] as const] : [])));
    expect(contents.size).toBe(2);
    // "40" reaches the server as 40: the engine's validator coerced it before the call.
    expect(contents.get("mcp__every__get-sum")).toMatch(/42/);
    expect(contents.get("mcp__every__echo")).toBe("Echo: over http");
  }, 60_000);

  it("follows pagination, sends the configured headers, and leaves out only the tool whose schema does not compile", async () => {
    const server = await startTestServer();
    cleanups.push(() => server.close());
    const problems: string[] = [];
    handle = await mcpTools({ test: { url: server.url, headers: { Authorization: "Bearer t0ken" } } }, { onProblem: (m) => problems.push(m) });
    expect(server.seen.listPages).toEqual([undefined, "page-2"]);
    expect(handle.tools.map((t) => t.name)).toEqual(["mcp__test__shout", "mcp__test__wait", "mcp__test__add_tool", "mcp__test__modern", "mcp__test__fail"]);
    expect(problems).toEqual([expect.stringMatching(/MCP server "test": tool "broken" is unavailable: .*inputSchema is not a valid JSON Schema/)]);
    expect(server.seen.authorization.every((a) => a === "Bearer t0ken")).toBe(true);
    expect(handle.tools.find((t) => t.name === "mcp__test__add_tool")?.risk).toBe("write");

    const shout = handle.tools.find((t) => t.name === "mcp__test__shout")!;
    expect(shout.validateInput({})).toMatchObject({ ok: false, message: 'input: missing required property "text"' });
    expect(await shout.execute({ text: "hi" }, toolContext())).toEqual({ content: "HI", details: { structuredContent: { length: 2 } } });
    // In a run: the details reach the caller's tool_result and the trace, the model sees the text.
    const { events, result } = await collect(query("go", { model: scriptedModel([{ toolCalls: [{ name: "mcp__test__shout", input: { text: "abc" } }] }, { text: "ok" }]), tools: handle.tools, cwd }));
    expect(events.find((e) => e.type === "tool_result")).toMatchObject({ result: { content: "ABC", details: { structuredContent: { length: 3 } } } });
    expect(result.messages.find((m) => m.role === "tool")).toEqual(expect.not.objectContaining({ details: expect.anything() }));
    expect(readFileSync(join(cwd, ".agent", "trace.jsonl"), "utf8")).toContain('"details":{"structuredContent":{"length":3}}');
    // A 2020-12 schema is checked, $ref into $defs included.
    const modern = handle.tools.find((t) => t.name === "mcp__test__modern")!;
    expect(modern.validateInput({ n: 0 })).toMatchObject({ ok: false, message: "input.n: must be >= 1" });
    expect(modern.validateInput({ n: "2" })).toEqual({ ok: true, value: { n: 2 } });
    expect(await handle.tools.find((t) => t.name === "mcp__test__fail")!.execute({}, toolContext())).toEqual({ content: "the backend said no", isError: true });
  }, 60_000);

  it("keeps the tool list current on list_changed", async () => {
    const server = await startTestServer();
    cleanups.push(() => server.close());
    handle = await mcpTools({ test: { url: server.url } });
    const tools = handle.tools;
    expect(tools.some((t) => t.name === "mcp__test__later")).toBe(false);
    await tools.find((t) => t.name === "mcp__test__add_tool")!.execute({}, toolContext());
    const deadline = Date.now() + 20_000;
    while (!tools.some((t) => t.name === "mcp__test__later") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    // The same array, now holding the new tool, which a run can call.
    expect(handle.tools).toBe(tools);
    expect(handle.servers()).toEqual([{ name: "test", tools: 6 }]);
    const { result } = await collect(query("go", { model: scriptedModel([{ toolCalls: [{ name: "mcp__test__later", input: {} }] }, { text: "ok" }]), tools, cwd }));
    expect(result.messages.find((m) => m.role === "tool")).toMatchObject({ content: "later ran", isError: false });
  }, 60_000);

  it("an abort cancels the request on the server (notifications/cancelled) after progress events", async () => {
    const server = await startTestServer();
    cleanups.push(() => server.close());
    handle = await mcpTools({ test: { url: server.url } });
    const controller = new AbortController();
    const events: AgentEvent[] = [];
    for await (const event of query("go", { model: scriptedModel([{ toolCalls: [{ name: "mcp__test__wait", input: {} }] }, { text: "never" }]), tools: handle.tools, cwd, signal: controller.signal })) {
      events.push(event);
      if (event.type === "tool_progress" && event.progress === 3) controller.abort();
    }
    expect(events.filter((e) => e.type === "tool_progress").slice(0, 3)).toMatchObject([
      { progress: 1, total: 600, message: "step 1" },
      { progress: 2, total: 600, message: "step 2" },
      { progress: 3, total: 600, message: "step 3" },
    ]);
    expect(events.at(-1)).toMatchObject({ type: "turn_end", reason: "user_abort" });
    const deadline = Date.now() + 20_000;
    while (server.seen.cancelled.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(server.seen.cancelled).toHaveLength(1);
  }, 60_000);

  it("a server that goes away mid-call gives that call an error result; the next call connects again", async () => {
    const first = await startTestServer();
    const problems: string[] = [];
    handle = await mcpTools({ test: { url: first.url } }, { onProblem: (m) => problems.push(m) });
    const wait = handle.tools.find((t) => t.name === "mcp__test__wait")!;
    const shout = handle.tools.find((t) => t.name === "mcp__test__shout")!;
    const progressed = new Promise<void>((resolve) => {
      void wait
        .execute({}, { ...toolContext(), progress: () => resolve() })
        .then((out) => outcome.push(out));
    });
    const outcome: unknown[] = [];
    await progressed;
    await first.close();
    const deadline = Date.now() + 20_000;
    while (outcome.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(outcome[0]).toMatchObject({ isError: true });
    expect(JSON.stringify(outcome[0])).toMatch(/MCP server \\"test\\" went away during wait/);
    // A new server at the same address: the next call opens a new session there.
    const second = await startTestServer(Number(new URL(first.url).port));
    cleanups.push(() => second.close());
    expect(await shout.execute({ text: "back" }, toolContext())).toMatchObject({ content: "BACK" });
    expect(problems.some((p) => /"test" reconnected \(1 of at most 3\)/.test(p))).toBe(true);
  }, 60_000);

  it("a URL where no server listens fails mcpTools() naming the server and the URL", async () => {
    const port = await freePort();
    await expect(mcpTools({ remote: { url: `http://127.0.0.1:${port}/mcp` } }, { connectTimeoutMs: 5_000 })).rejects.toThrow(
      new RegExp(`MCP server "remote" did not start \\(url http://127.0.0.1:${port}/mcp\\)`),
    );
  }, 60_000);
});
