import { execFileSync } from "node:child_process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events.js";
import { mcpTools, type McpToolsHandle } from "../../src/mcp/index.js";
import { scriptedModel } from "../../src/models/scripted.js";
import { query } from "../../src/query.js";
import { collect } from "../support/engine.js";
import { makeTempDir, removeDir } from "../tools/workspace.js";
import { stdioServer, toolContext } from "./servers.js";

let cwd: string;
let handle: McpToolsHandle | undefined;
beforeEach(() => {
  cwd = makeTempDir("statecraft-mcp-limits-");
});
afterEach(async () => {
  await handle?.close();
  handle = undefined;
  removeDir(cwd);
});

/** The pids of the processes whose command line holds this test's marker (its temp folder). */
function serverPids(marker: string): number[] {
  try {
    // The server itself (node …), not the sandbox around it, whose command line names it too.
    return execFileSync("pgrep", ["-f", `^${process.execPath} .*${marker}`], { encoding: "utf8" }).split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The everything server, marked with this test's folder so the test can find (and kill) exactly its process. */
const everything = () => stdioServer("server-everything", ["stdio", `--marker=${cwd}`]);
const longRun = { name: "mcp__every__trigger-long-running-operation", input: { duration: 30, steps: 30 } };

describe("MCP limits", () => {
  it("aborting the run during a long call ends it promptly, after progress events, and the server serves the next run", async () => {
    handle = await mcpTools({ every: everything() });
    const controller = new AbortController();
    const events: AgentEvent[] = [];
    const started = performance.now();
    const run = query("go", { model: scriptedModel([{ toolCalls: [longRun] }, { text: "never" }]), tools: handle.tools, cwd, signal: controller.signal });
    for await (const event of run) {
      events.push(event);
      if (event.type === "tool_progress") controller.abort();
    }
    const elapsed = performance.now() - started;
    const progress = events.find((e) => e.type === "tool_progress");
    expect(progress).toMatchObject({ type: "tool_progress", call: { name: longRun.name }, progress: 1, total: 30 });
    expect(events.at(-1)).toMatchObject({ type: "turn_end", reason: "user_abort" });
    // 30 s of work cancelled after the first 1 s step.
    expect(elapsed).toBeLessThan(15_000);
    const { result } = await collect(query("again", { model: scriptedModel([{ toolCalls: [{ name: "mcp__every__echo", input: { message: "still here" } }] }, { text: "ok" }]), tools: handle.tools, cwd }));
    expect(result.messages.find((m) => m.role === "tool")).toMatchObject({ content: "Echo: still here", isError: false });
  }, 60_000);

  it("a call past the server's timeoutMs is stopped and the model is told it timed out", async () => {
    handle = await mcpTools({ every: { ...everything(), timeoutMs: 1_500 } });
    const started = performance.now();
    const { events } = await collect(query("go", { model: scriptedModel([{ toolCalls: [longRun] }, { text: "ok" }]), tools: handle.tools, cwd }));
    const result = events.find((e) => e.type === "tool_result");
    expect(result).toMatchObject({ result: { isError: true } });
    expect(result?.type === "tool_result" && result.result.content).toMatch(/timed out after 1500 ms/);
    expect(performance.now() - started).toBeLessThan(15_000);
  }, 60_000);

  it("a server killed mid-call gives that call an error result, is restarted for the next, and after maxRestarts its tools fail clearly", async () => {
    const problems: string[] = [];
    handle = await mcpTools({ every: everything() }, { maxRestarts: 1, onProblem: (m) => problems.push(m) });
    const long = handle.tools.find((t) => t.name === longRun.name)!;
    const echo = handle.tools.find((t) => t.name === "mcp__every__echo")!;

    const killDuringCall = async () => {
      const [pid] = serverPids(cwd);
      expect(pid).toBeGreaterThan(0);
      const call = long.execute(longRun.input, toolContext());
      await new Promise((resolve) => setTimeout(resolve, 300));
      process.kill(pid, "SIGKILL");
      return call;
    };
    const first = await killDuringCall();
    expect(first).toMatchObject({ isError: true });
    expect(JSON.stringify(first)).toMatch(/MCP server \\"every\\" went away during trigger-long-running-operation/);

    expect(await echo.execute({ message: "back" }, toolContext())).toBe("Echo: back");
    expect(problems.some((p) => /"every" restarted \(1 of at most 1\)/.test(p))).toBe(true);

    await killDuringCall();
    const spent = await echo.execute({ message: "again" }, toolContext());
    expect(spent).toMatchObject({ isError: true });
    expect(JSON.stringify(spent)).toMatch(/restarted 1 times already \(maxRestarts 1\)/);
  }, 60_000);

  it("close() leaves no server process behind", async () => {
    handle = await mcpTools({ a: everything(), b: everything() });
    expect(serverPids(cwd)).toHaveLength(2);
    await handle.close();
    handle = undefined;
    expect(serverPids(cwd)).toEqual([]);
  }, 60_000);
});
