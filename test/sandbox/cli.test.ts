import { mkdirSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeTempDir, removeDir, runCli } from "../cli/helpers/cli-process.js";
import { serverEntry } from "../mcp/servers.js";
import type { Style } from "../../src/cli/colors.js";
import { headerLine, type PreparedAgent } from "../../src/cli/commands/prepare-agent.js";

// The command line's side: --sandbox, the header line, an MCP server's opt-out said at start, "required" refusing.

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function setup(steps: unknown[]) {
  const root = makeTempDir("statecraft-sandbox-cli-");
  cleanups.push(() => removeDir(root));
  const project = join(root, "project");
  mkdirSync(project);
  const script = join(root, "script.json");
  writeFileSync(script, JSON.stringify(steps));
  return { root, project, env: { HOME: join(root, "home"), XDG_CONFIG_HOME: join(root, "user-config") }, model: `script:${script}` };
}

describe("the header line (on a terminal)", () => {
  const prepared = (sandbox: unknown) =>
    ({ settings: { cwd: "/w", permissions: { allow: [], ask: [], deny: [] }, ...(sandbox !== undefined ? { sandbox } : {}) }, created: { description: "m" } }) as unknown as PreparedAgent;
  const plain = { dim: (text: string) => text } as unknown as Style;
  it("names the sandbox's mode and network", () => {
    expect(headerLine(plain, prepared(undefined))).toBe("statecraft · model m · cwd /w · permissions default · sandbox auto");
    expect(headerLine(plain, prepared("off"))).toContain("· sandbox off");
    expect(headerLine(plain, prepared({ mode: "required", network: { allow: ["registry.npmjs.org"] } }))).toContain("· sandbox required (network registry.npmjs.org)");
    expect(headerLine(plain, prepared({ network: "host" }))).toContain("· sandbox auto (host network)");
  });
});

describe("statecraft run and the sandbox", { timeout: 120_000 }, () => {
  it("says an MCP server's \"sandbox\": false on its line at start", async () => {
    const s = setup([{ text: "nothing to do" }]);
    const config = join(s.root, "mcp.json");
    const server = (sandbox?: false) => ({ command: process.execPath, args: [serverEntry("server-memory")], env: { MEMORY_FILE_PATH: join(s.project, "m.jsonl") }, ...(sandbox === false ? { sandbox } : {}) });
    writeFileSync(config, JSON.stringify({ mcpServers: { inside: server(), outside: server(false) } }));
    const result = await runCli(["run", "--model", s.model, "--mcp-config", config, "--no-color", "hello"], { cwd: s.project, env: s.env });
    expect(result.code, result.stderr).toBe(0);
    const all = result.stdout + result.stderr;
    expect(all).toMatch(/mcp inside · 9 tools\n/);
    expect(all).toContain('mcp outside · 9 tools · not sandboxed ("sandbox": false)');
  });

  it("--sandbox required without bubblewrap runs no command: the call fails, saying how to install it", async () => {
    const s = setup([{ toolCalls: [{ name: "bash", input: { command: "/usr/bin/touch ran.txt" } }] }, { text: "done" }]);
    const result = await runCli(["run", "--model", s.model, "--sandbox", "required", "--permission-mode", "bypassPermissions", "--json", "go"], {
      cwd: s.project,
      env: { ...s.env, PATH: "/nonexistent-statecraft-path" },
    });
    expect(existsSync(join(s.project, "ran.txt"))).toBe(false);
    expect(result.stdout).toContain('sandbox \\"required\\" but bubblewrap (bwrap) is not installed; the process was not started. Fix: install it: apt-get install bubblewrap');
  });

  it("refuses --sandbox with another value, naming the choices", async () => {
    const s = setup([{ text: "x" }]);
    const result = await runCli(["run", "--model", s.model, "--sandbox", "strict", "go"], { cwd: s.project, env: s.env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("error: option '--sandbox <mode>' argument 'strict' is invalid. Allowed choices are auto, required, off.");
  });
});
