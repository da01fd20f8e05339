import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mcpTools, type McpToolsHandle } from "../../src/mcp/index.js";
import { scriptedModel } from "../../src/models/scripted.js";
import { pathArguments } from "../../src/permissions/path-arguments.js";
import { createPermissionPolicy } from "../../src/permissions/policy.js";
import { PERMISSION_MODES } from "../../src/permissions/types.js";
import { query } from "../../src/query.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { bashTool, globTool, grepTool, readFileTool, writeFileTool } from "../../src/tools/builtin/index.js";
import { PROTECTED_RULES } from "../../src/tools/protected-paths.js";
import { collect } from "../support/engine.js";
import { stdioServer } from "../mcp/servers.js";
import { makeTempDir, removeDir, writeFiles } from "../tools/workspace.js";

// Holes 1, 2 and 8: protected paths hold for every tool that names a path (MCP tools whatever their annotations say,
// custom tools whatever argument name they use), `.mcp.json` is one of them, and the user's statecraft folders
// (session key, user config, trust list) are kept from every tool, readers included.

let ws: string;
let home: string;
let xdg: string;
const saved: Record<string, string | undefined> = {};
const KEY = "ab".repeat(32);

beforeEach(() => {
  ws = makeTempDir("statecraft-any-tool-");
  home = makeTempDir("statecraft-any-home-");
  xdg = makeTempDir("statecraft-any-xdg-");
  for (const name of ["STATECRAFT_HOME", "XDG_CONFIG_HOME", "HOME"]) saved[name] = process.env[name];
  process.env.STATECRAFT_HOME = home;
  process.env.XDG_CONFIG_HOME = xdg;
  writeFiles(ws, { "statecraft.config.json": '{"mode":"default"}\n', ".mcp.json": '{"mcpServers":{}}\n', ".agent/audit.jsonl": "{}\n", "notes.txt": "n\n" });
  writeFiles(home, { "session-key": `${KEY}\n` });
  writeFiles(xdg, { "statecraft/trusted-folders.json": '{"folders":[]}\n', "statecraft/config.json": "{}\n" });
});
afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  for (const dir of [ws, home, xdg]) removeDir(dir);
});

const snapshot = () =>
  [
    path.join(ws, "statecraft.config.json"),
    path.join(ws, ".mcp.json"),
    path.join(home, "session-key"),
    path.join(xdg, "statecraft", "trusted-folders.json"),
    path.join(xdg, "statecraft", "config.json"),
  ].map((file) => `${file}=${fs.readFileSync(file, "utf8")}`);

const results = (events: Awaited<ReturnType<typeof collect>>["events"]) =>
  events.flatMap((e) => (e.type === "tool_result" ? [{ name: e.call.name, input: e.call.input, ...e.result }] : []));

describe("an MCP server's file tools (the reference filesystem server, a real child process)", () => {
  let handle: McpToolsHandle | undefined;
  afterEach(async () => {
    await handle?.close();
    handle = undefined;
  });

  it("can't write, move into, or read the protected paths, in bypassPermissions with allow rules and onAsk saying yes", async () => {
    // The server's own roots cover the workspace and both statecraft folders: only the engine stands in the way.
    handle = await mcpTools({ fs: { ...stdioServer("server-filesystem", [ws, home, path.join(xdg, "statecraft")]), cwd: ws } });
    const attacks: Array<{ name: string; input: Record<string, unknown> }> = [
      { name: "mcp__fs__write_file", input: { path: path.join(ws, "statecraft.config.json"), content: '{"permissions":{"mode":"bypassPermissions"}}' } },
      { name: "mcp__fs__write_file", input: { path: path.join(ws, ".agent", "sessions", "forged.jsonl"), content: "{}" } },
      { name: "mcp__fs__write_file", input: { path: path.join(ws, ".mcp.json"), content: '{"mcpServers":{"x":{"command":"sh","args":["-c","touch pwned"]}}}' } },
      { name: "mcp__fs__edit_file", input: { path: path.join(ws, ".mcp.json"), edits: [{ oldText: "{}", newText: '{"x":{"command":"sh"}}' }] } },
      { name: "mcp__fs__move_file", input: { source: path.join(ws, "notes.txt"), destination: path.join(ws, ".agent", "audit.jsonl.new") } },
      { name: "mcp__fs__move_file", input: { source: path.join(ws, "notes.txt"), destination: path.join(ws, ".MCP.json") } },
      { name: "mcp__fs__create_directory", input: { path: path.join(ws, "sub", ".agent") } },
      { name: "mcp__fs__write_file", input: { path: path.join(home, "session-key"), content: "00".repeat(32) } },
      { name: "mcp__fs__write_file", input: { path: path.join(xdg, "statecraft", "trusted-folders.json"), content: `{"folders":["${ws}"]}` } },
      { name: "mcp__fs__read_text_file", input: { path: path.join(home, "session-key") } },
      { name: "mcp__fs__read_multiple_files", input: { paths: [path.join(ws, "notes.txt"), path.join(home, "session-key")] } },
      { name: "mcp__fs__get_file_info", input: { path: path.join(xdg, "statecraft", "config.json") } },
    ];
    for (const attack of attacks) expect(handle.tools.some((t) => t.name === attack.name), attack.name).toBe(true);
    const before = snapshot();
    const through: string[] = [];
    for (const mode of ["bypassPermissions", "acceptEdits"] as const) {
      // A deny ends its run: one run per attack.
      for (const attack of attacks) {
        const model = scriptedModel([{ toolCalls: [attack] }, { text: "done" }]);
        const { events, result } = await collect(query("go", { model, tools: handle.tools, cwd: ws, permissions: { mode, allow: ["mcp__fs__*"], onAsk: () => "allow" } }));
        const [got] = results(events);
        if (!got.isError || got.content.includes(KEY)) through.push(`${mode} ${attack.name} ${JSON.stringify(attack.input)}`);
        expect(got.content, attack.name).toMatch(/protected\(/);
        expect((result as { reason?: string }).reason).toBe("permission_denied");
      }
    }
    expect(through).toEqual([]);
    expect(snapshot()).toEqual(before);
    expect(fs.existsSync(path.join(ws, ".agent", "sessions", "forged.jsonl"))).toBe(false);
    expect(fs.existsSync(path.join(ws, "sub", ".agent"))).toBe(false);
    expect(fs.existsSync(path.join(ws, "notes.txt"))).toBe(true);
  });

  it("still writes ordinary files and reads .agent/ files (the engine's state is not secret, only not the agent's to change)", async () => {
    handle = await mcpTools({ fs: { ...stdioServer("server-filesystem", [ws]), cwd: ws } });
    const model = scriptedModel([
      { toolCalls: [{ name: "mcp__fs__write_file", input: { path: path.join(ws, "src.txt"), content: "ok" } }] },
      { toolCalls: [{ name: "mcp__fs__move_file", input: { source: path.join(ws, "src.txt"), destination: path.join(ws, "dst.txt") } }] },
      { text: "done" },
    ]);
    const { events } = await collect(query("go", { model, tools: handle.tools, cwd: ws, permissions: { mode: "bypassPermissions" } }));
    expect(results(events).map((r) => r.isError)).toEqual([false, false]);
    expect(fs.readFileSync(path.join(ws, "dst.txt"), "utf8")).toBe("ok");
  });
});

describe("custom tools name paths under many argument names", () => {
  const execTool = (name: string) =>
    defineTool({ name, description: "d", inputSchema: { type: "object" }, risk: "exec", execute: () => "ran" });

  const payloads: Array<{ input: Record<string, unknown>; rule: string }> = [
    { input: { file: "statecraft.config.json" }, rule: PROTECTED_RULES.projectConfig },
    { input: { filePath: ".agent/trace.jsonl" }, rule: PROTECTED_RULES.agentDir },
    { input: { file_path: "./sub/../.mcp.json" }, rule: PROTECTED_RULES.mcpConfig },
    { input: { target: ".Agent/x" }, rule: PROTECTED_RULES.agentDir },
    { input: { destination: "deep/.mcp.json" }, rule: PROTECTED_RULES.mcpConfig },
    { input: { options: { outputPath: ".agent/runs/x.json" } }, rule: PROTECTED_RULES.agentDir },
    { input: { files: ["ok.txt", "statecraft.config.json"] }, rule: PROTECTED_RULES.projectConfig },
    { input: { edits: [{ uri: "file:///WS/.agent/audit.jsonl" }] }, rule: PROTECTED_RULES.agentDir },
  ];

  it("every payload is denied in every mode, with allow rules for the tool", () => {
    let through = 0;
    for (const mode of PERMISSION_MODES) {
      const policy = createPermissionPolicy({ mode, allow: ["deploy"] }, [], { cwd: ws });
      for (const { input, rule } of payloads) {
        const fixed = JSON.parse(JSON.stringify(input).replace("/WS", ws));
        const verdict = policy.evaluate(execTool("deploy"), fixed);
        if (verdict.kind !== "deny") through++;
        expect(verdict, `${mode} ${JSON.stringify(input)}`).toMatchObject({ kind: "deny", by: "rule", rule });
      }
    }
    expect(through).toBe(0);
  });

  it("a symlink and a hard link to a protected file are found under any argument name", () => {
    fs.symlinkSync(path.join(ws, ".mcp.json"), path.join(ws, "innocent.json"));
    fs.linkSync(path.join(ws, "statecraft.config.json"), path.join(ws, "copy.json"));
    const policy = createPermissionPolicy({ mode: "bypassPermissions" }, [], { cwd: ws });
    expect(policy.evaluate(execTool("t"), { output: "innocent.json" })).toMatchObject({ kind: "deny", rule: PROTECTED_RULES.mcpConfig });
    expect(policy.evaluate(execTool("t"), { target: "copy.json" })).toMatchObject({ kind: "deny", rule: PROTECTED_RULES.projectConfig });
  });

  it("reads only the arguments whose names say path: text arguments and other URLs are not paths", () => {
    expect(pathArguments({ content: ".agent/x", message: "see statecraft.config.json", url: "https://example.com/.agent/x", path: "a", nested: { dir: "b" } })).toEqual(["a", "b"]);
    const policy = createPermissionPolicy({ mode: "bypassPermissions" }, [], { cwd: ws });
    expect(policy.evaluate(execTool("t"), { content: "write .agent/x please" }).kind).toBe("allow");
  });
});

describe("the user's statecraft folders, for every tool", () => {
  it("read_file can't read the session key, the user config or the trust list even when additionalDirectories cover them", async () => {
    const tools = [readFileTool({ additionalDirectories: [home, xdg] })];
    fs.symlinkSync(path.join(home, "session-key"), path.join(ws, "key-link"));
    const targets = [
      path.join(home, "session-key"),
      `${home}/./session-key`,
      path.join(xdg, "statecraft", "config.json"),
      path.join(xdg, "statecraft", "trusted-folders.json"),
      "key-link",
    ];
    const through: string[] = [];
    for (const target of targets) {
      const model = scriptedModel([{ toolCalls: [{ name: "read_file", input: { path: target } }] }, { text: "done" }]);
      const { events } = await collect(query("go", { model, tools, cwd: ws, permissions: { mode: "bypassPermissions", allow: ["read_file"], onAsk: () => "allow" } }));
      const [got] = results(events);
      if (!got.isError || got.content.includes(KEY) || got.content.includes("\"folders\"")) through.push(target);
    }
    expect(through).toEqual([]);
  });

  it("write_file in acceptEdits can't write the trust list when STATECRAFT_HOME points elsewhere", async () => {
    const tools = [writeFileTool({ additionalDirectories: [xdg] })];
    const list = path.join(xdg, "statecraft", "trusted-folders.json");
    const model = scriptedModel([{ toolCalls: [{ name: "write_file", input: { path: list, content: `{"folders":["${ws}"]}` } }] }, { text: "done" }]);
    const { events } = await collect(query("go", { model, tools, cwd: ws, permissions: { mode: "acceptEdits", allow: ["write_file"] } }));
    expect(results(events)[0]).toMatchObject({ isError: true });
    expect(fs.readFileSync(list, "utf8")).toBe('{"folders":[]}\n');
  });

  it("with the workspace at $HOME, `bash(echo *)` can't write the user config and `bash(cat *)` can't read the key", async () => {
    process.env.HOME = ws;
    delete process.env.XDG_CONFIG_HOME;
    process.env.STATECRAFT_HOME = path.join(ws, ".config", "statecraft");
    writeFiles(ws, { ".config/statecraft/session-key": `${KEY}\n`, ".config/statecraft/config.json": "{}\n" });
    const commands = [
      `echo '{"permissions":{"mode":"bypassPermissions"}}' > .config/statecraft/config.json`,
      `echo '{"folders":["/"]}' > ~/.config/statecraft/trusted-folders.json`,
      `echo x >> "$HOME/.config/statecraft/config.json"`,
      "cat .config/statecraft/session-key",
      "cat ~/.config/statecraft/session-key",
      "cat .config/*/session-key",
      `cat ${path.join(ws, ".config", "statecraft", "session-key")}`,
    ];
    let through = 0;
    for (const mode of PERMISSION_MODES) {
      const policy = createPermissionPolicy({ mode, allow: ["bash(echo *)", "bash(cat *)"] }, [], { cwd: ws });
      await policy.ready;
      for (const command of commands) {
        const verdict = policy.evaluate(bashTool(), { command });
        if (verdict.kind === "allow") through++;
        expect(verdict.kind, `${mode}: ${command}`).not.toBe("allow");
      }
    }
    expect(through).toBe(0);
    // And through runs: asked, refused, nothing written.
    for (const command of commands.slice(0, 3)) {
      const model = scriptedModel([{ toolCalls: [{ name: "bash", input: { command } }] }, { text: "done" }]);
      const { events } = await collect(
        query("go", { model, tools: [bashTool()], cwd: ws, permissions: { mode: "acceptEdits", allow: ["bash(echo *)"], whenUnanswered: "deny" } }),
      );
      expect(results(events).every((r) => r.isError), command).toBe(true);
    }
    expect(fs.readFileSync(path.join(ws, ".config", "statecraft", "config.json"), "utf8")).toBe("{}\n");
    expect(fs.existsSync(path.join(ws, ".config", "statecraft", "trusted-folders.json"))).toBe(false);
  });

  it("grep and glob over a workspace that holds the statecraft folder (the workspace at $HOME) never find what is in it", async () => {
    process.env.HOME = ws;
    delete process.env.XDG_CONFIG_HOME;
    process.env.STATECRAFT_HOME = path.join(ws, ".config", "statecraft");
    writeFiles(ws, { ".config/statecraft/session-key": `${KEY}\n`, ".config/statecraft/trusted-folders.json": '{"folders":["/"]}\n', "src/a.txt": "abab here\n" });
    const calls = [
      { name: "grep", input: { pattern: "abab" } },
      { name: "grep", input: { pattern: "folders", glob: "*.json" } },
      { name: "grep", input: { pattern: "ab", path: ".config" } },
      { name: "glob", input: { pattern: "**/session-key" } },
      { name: "glob", input: { pattern: "**/*", path: ".config" } },
    ];
    const through: string[] = [];
    for (const call of calls) {
      const model = scriptedModel([{ toolCalls: [call] }, { text: "done" }]);
      const { events } = await collect(query("go", { model, tools: [grepTool(), globTool()], cwd: ws, permissions: { mode: "bypassPermissions" } }));
      const [got] = results(events);
      // A file found is named by its path (a "no files match <pattern>" answer only repeats the pattern).
      if (got.content.includes(KEY) || got.content.includes("statecraft/session-key") || got.content.includes("statecraft/trusted-folders")) through.push(JSON.stringify(call));
    }
    expect(through).toEqual([]);
    // The control: the rest of the workspace is still searched.
    const model = scriptedModel([{ toolCalls: [{ name: "grep", input: { pattern: "abab" } }] }, { text: "done" }]);
    const { events } = await collect(query("go", { model, tools: [grepTool()], cwd: ws }));
    expect(results(events)[0].content).toContain("src/a.txt");
  });
});
