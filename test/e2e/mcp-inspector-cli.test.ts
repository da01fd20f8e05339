import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CLI, cliEnv, makeTempDir, removeDir } from "../cli/helpers/cli-process.js";

// A real MCP host process: the MCP Inspector's CLI mode (@modelcontextprotocol/inspector-cli 1.0.3, on SDK 1.x,
// protocol 2025-11-25), installed from npm; the full Inspector 2.x needs Node 22.

const require = createRequire(import.meta.url);
const BUILD = join(dirname(require.resolve("@modelcontextprotocol/inspector-cli/package.json")), "build");

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** Runs the Inspector CLI (from its build folder, where it reads its own package.json) and parses its JSON answer. */
function inspector(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; json: unknown; stderr: string }> {
  const child = spawn(process.execPath, [join(BUILD, "index.js"), ...args], { cwd: BUILD, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) =>
    child.once("exit", (code) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = stdout;
      }
      resolve({ code, json, stderr });
    }),
  );
}

describe("the MCP Inspector's CLI mode as the host", { timeout: 120_000 }, () => {
  it("lists run_agent, calls it to the final answer, and reads the session's summary back", async () => {
    const root = makeTempDir("statecraft-inspector-cli-");
    cleanups.push(() => removeDir(root));
    const project = join(root, "project");
    mkdirSync(project);
    writeFileSync(join(root, "script.json"), JSON.stringify([{ text: "hello, inspector" }]));
    const env = cliEnv({ HOME: join(root, "home") });
    const server = [process.execPath, CLI, "mcp", "serve", "--model", `script:${join(root, "script.json")}`, "--cwd", project];

    const listed = await inspector([...server, "--method", "tools/list"], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.json).toMatchObject({ tools: [{ name: "run_agent", inputSchema: { required: ["prompt"] } }] });

    const called = await inspector([...server, "--method", "tools/call", "--tool-name", "run_agent", "--tool-arg", "prompt=say hello"], env);
    expect(called.code, called.stderr).toBe(0);
    expect(called.json).toMatchObject({ content: [{ type: "text", text: "hello, inspector" }], structuredContent: { reason: "final_answer", turns: 1, toolCalls: 0 } });
    const { sessionId } = (called.json as { structuredContent: { sessionId: string } }).structuredContent;

    const read = await inspector([...server, "--method", "resources/read", "--uri", `statecraft://sessions/${sessionId}/summary`], env);
    expect(read.code, read.stderr).toBe(0);
    const summary = JSON.parse((read.json as { contents: Array<{ text: string }> }).contents[0].text);
    expect(summary).toMatchObject({ sessionId, runs: [{ prompt: "say hello", reason: "final_answer", text: "hello, inspector" }] });
  });
});
