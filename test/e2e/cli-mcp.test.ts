import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeTempDir, removeDir, runCli } from "../cli/helpers/cli-process.js";
import { serverEntry } from "../mcp/servers.js";

// The CLI with MCP servers: the built CLI as a real process, the memory reference server as its real child.

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function setup() {
  const root = makeTempDir("statecraft-mcp-e2e-");
  cleanups.push(() => removeDir(root));
  const project = join(root, "project");
  mkdirSync(project);
  const env = { HOME: join(root, "home"), XDG_CONFIG_HOME: join(root, "user-config") };
  // In the project: the run's workspace, where a server may write inside the sandbox.
  const memoryFile = join(project, "memory.jsonl");
  // The marker (this test's folder) lets the test find exactly its own server processes.
  const memory = { command: process.execPath, args: [serverEntry("server-memory"), `--marker=${root}`], env: { MEMORY_FILE_PATH: memoryFile } };
  const script = join(root, "script.json");
  writeFileSync(
    script,
    JSON.stringify([
      { toolCalls: [{ name: "mcp__memory__create_entities", input: { entities: [{ name: "e2e", entityType: "test", observations: ["seen by the cli"] }] } }] },
      { toolCalls: [{ name: "mcp__memory__read_graph", input: {} }] },
      { text: "done" },
    ]),
  );
  return { root, project, env, memory, memoryFile, model: `script:${script}` };
}

function processesWith(marker: string): number[] {
  try {
    return execFileSync("pgrep", ["-f", marker], { encoding: "utf8" }).split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

describe("statecraft run with MCP servers", { timeout: 120_000 }, () => {
  it("--mcp-config starts the servers, shows them, gives their tools to the agent under the permission rules, and leaves no process behind", async () => {
    const s = setup();
    const config = join(s.root, "mcp.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { memory: s.memory } }));
    const result = await runCli(["run", "--model", s.model, "--mcp-config", config, "--allow", "mcp__memory__*", "--json", "remember"], { cwd: s.project, env: s.env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain("mcp memory · 9 tools");
    const events = result.stdout.trim().split("\n").map((line) => JSON.parse(line) as { type: string; result?: { content: string; isError: boolean } });
    const results = events.filter((e) => e.type === "tool_result").map((e) => e.result!);
    expect(results.map((r) => r.isError)).toEqual([false, false]);
    expect(results[1].content).toContain("seen by the cli");
    expect(readFileSync(s.memoryFile, "utf8")).toContain("e2e");
    expect(processesWith(s.root)).toEqual([]);
  });

  it("chat keeps the servers for the whole session and closes them when it ends", async () => {
    const s = setup();
    const config = join(s.root, "mcp.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { memory: s.memory } }));
    const result = await runCli(["chat", "--model", s.model, "--mcp-config", config, "--allow", "mcp__memory__*"], { cwd: s.project, env: s.env, input: "remember this\n/exit\n" });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain("mcp memory · 9 tools");
    expect(result.stdout).toContain("mcp__memory__read_graph");
    expect(readFileSync(s.memoryFile, "utf8")).toContain("e2e");
    expect(processesWith(s.root)).toEqual([]);
  });

  it("a project's .mcp.json is listed and skipped in an untrusted folder, and started with --trust-project", async () => {
    const s = setup();
    const ran = join(s.root, "server-ran");
    const sneaky = { command: process.execPath, args: ["-e", `require("fs").writeFileSync(${JSON.stringify(ran)}, "x")`] };
    writeFileSync(join(s.project, ".mcp.json"), JSON.stringify({ mcpServers: { sneaky } }));
    const untrusted = await runCli(["run", "--model", s.model, "--json", "go"], { cwd: s.project, env: s.env });
    expect(untrusted.stderr).toContain(".mcp.json lists MCP servers sneaky: not started, this folder is not trusted");
    expect(untrusted.stderr).toContain(`statecraft trust ${s.project}`);
    expect(existsSync(ran)).toBe(false);

    writeFileSync(join(s.project, ".mcp.json"), JSON.stringify({ mcpServers: { memory: { type: "stdio", ...s.memory } } }));
    const trusted = await runCli(["run", "--model", s.model, "--trust-project", "--allow", "mcp__memory__*", "--json", "go"], { cwd: s.project, env: s.env });
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(trusted.stderr).toContain("mcp memory · 9 tools");
    expect(readFileSync(s.memoryFile, "utf8")).toContain("e2e");
  });

  it("a bad --mcp-config or a server that does not start is a usage error naming the file or the server", async () => {
    const s = setup();
    const bad = join(s.root, "bad.json");
    writeFileSync(bad, JSON.stringify({ mcpServers: { x: { command: "node", args: "oops" } } }));
    const invalid = await runCli(["run", "--model", s.model, "--mcp-config", bad, "go"], { cwd: s.project, env: s.env });
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain(`${bad}: MCP server "x": "args" must be an array of strings`);
    writeFileSync(bad, JSON.stringify({ mcpServers: { broken: { command: process.execPath, args: ["-e", "console.error('no database at DB_URL'); process.exit(1)"] } } }));
    const failed = await runCli(["run", "--model", s.model, "--mcp-config", bad, "go"], { cwd: s.project, env: s.env });
    expect(failed.code).toBe(2);
    expect(failed.stderr).toMatch(/MCP server "broken" did not start[\s\S]*no database at DB_URL/);
  });
});
