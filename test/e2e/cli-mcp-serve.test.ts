import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { StdioClientTransport as V1StdioTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, describe, expect, it } from "vitest";
import { CLI, cliEnv, makeTempDir, removeDir } from "../cli/helpers/cli-process.js";
import { legacyHost, modernHost, type HostOptions, type TestHost } from "../mcp-server/clients.js";

// `statecraft mcp serve` as a real process, started by the SDK's own clients as an MCP host starts a server.

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function setup(script: unknown[]) {
  const root = makeTempDir("statecraft-mcp-serve-e2e-");
  cleanups.push(() => removeDir(root));
  const project = join(root, "project");
  mkdirSync(project);
  writeFileSync(join(root, "script.json"), JSON.stringify(script));
  return { root, project, args: ["mcp", "serve", "--model", `script:${join(root, "script.json")}`, "--cwd", project], env: cliEnv({ HOME: join(root, "home") }) as Record<string, string> };
}

/** The SDK's stdio transport, probing the pinned revision on the server's own process. */
class InPlaceStdio extends StdioClientTransport {}

const GENERATIONS = [
  { name: "2026-07-28 (SDK v2 client)", protocol: "2026-07-28", connect: (args: string[], env: Record<string, string>, o: HostOptions) => modernHost({ transport: new InPlaceStdio({ command: process.execPath, args: [CLI, ...args], env, stderr: "pipe" }) }, o) },
  { name: "2025-11-25 (SDK 1.x client)", protocol: "2025-11-25", connect: (args: string[], env: Record<string, string>, o: HostOptions) => legacyHost({ transport: new V1StdioTransport({ command: process.execPath, args: [CLI, ...args], env, stderr: "pipe" }) }, o) },
] as const;

describe.each(GENERATIONS)("statecraft mcp serve on stdio, a host of $name", { timeout: 120_000 }, ({ connect }) => {
  async function host(args: string[], env: Record<string, string>, options: HostOptions = {}): Promise<TestHost> {
    const h = await connect(args, env, options);
    cleanups.push(() => h.close());
    return h;
  }

  it("runs the agent in --cwd to its final answer with progress; a write is asked of the host and, allowed, done", async () => {
    const s = setup([{ text: "hello from the agent" }, { toolCalls: [{ name: "write_file", input: { path: "note.txt", content: "hi" } }] }, { text: "wrote it" }]);
    const h = await host(s.args, s.env, { answer: { action: "accept", decision: "allow" } });
    const progress: string[] = [];
    const first = await h.callTool({ prompt: "hello" }, { onprogress: (p) => progress.push(p.message ?? "") });
    expect(first).toMatchObject({ content: [{ type: "text", text: "hello from the agent" }], structuredContent: { reason: "final_answer", turns: 1 } });
    expect(progress).toEqual(["build_context (turn 0)", "call_model (turn 1)", "stream_text (turn 1)"]);
    const second = await h.callTool({ prompt: "write a note" });
    expect(h.asked).toEqual([expect.stringMatching(/write_file .*note\.txt/)]);
    expect(second).toMatchObject({ content: [{ type: "text", text: "wrote it" }], structuredContent: { reason: "final_answer", toolCalls: 1 } });
    expect(readFileSync(join(s.project, "note.txt"), "utf8")).toBe("hi");
    // The runs were traced in the project, as `statecraft run` traces them; the host reads them back as resources.
    const sessionId = (second.structuredContent as { sessionId: string }).sessionId;
    const summary = JSON.parse((await h.readResource(`statecraft://sessions/${sessionId}/summary`)).text);
    expect(summary.runs).toMatchObject([{ prompt: "write a note", reason: "final_answer", toolCalls: 1 }]);
    expect(existsSync(join(s.project, ".agent", "trace.jsonl"))).toBe(true);
  });

  it("without elicitation, --permission-mode and --allow decide: an allowed write runs, another is denied unasked", async () => {
    const s = setup([
      { toolCalls: [{ name: "write_file", input: { path: "a.txt", content: "a" } }] },
      { text: "done" },
      { toolCalls: [{ name: "write_file", input: { path: "b.txt", content: "b" } }] },
    ]);
    const h = await host([...s.args, "--allow", "write_file(a.txt)"], s.env);
    expect(await h.callTool({ prompt: "a" })).toMatchObject({ structuredContent: { reason: "final_answer" } });
    expect(await h.callTool({ prompt: "b" })).toMatchObject({ isError: true, structuredContent: { reason: "permission_denied" } });
    expect(existsSync(join(s.project, "a.txt"))).toBe(true);
    expect(existsSync(join(s.project, "b.txt"))).toBe(false);
  });

  it("a cancelled call ends its run user_abort, and the server serves the next call", async () => {
    // The aborted run never asks the model again: the next response is the next call's.
    const s = setup([{ toolCalls: [{ name: "bash", input: { command: "sleep 30" } }] }, { text: "next" }]);
    const h = await host([...s.args, "--allow", "bash"], s.env);
    const controller = new AbortController();
    await expect(h.callTool({ prompt: "sleep" }, { signal: controller.signal, onprogress: (p) => p.message?.startsWith("execute_tool") && controller.abort() })).rejects.toThrow();
    const deadline = Date.now() + 20_000;
    let reason: string | undefined;
    while (!reason && Date.now() < deadline) {
      const uri = (await h.listResources()).find((r) => r.uri.endsWith("/summary"))?.uri;
      reason = uri ? JSON.parse((await h.readResource(uri)).text).runs[0]?.reason : undefined;
      if (!reason) await new Promise((r) => setTimeout(r, 100));
    }
    expect(reason).toBe("user_abort");
    expect(await h.callTool({ prompt: "again" })).toMatchObject({ content: [{ type: "text", text: "next" }] });
  });
});

describe("statecraft mcp serve --http", { timeout: 120_000 }, () => {
  function serveHttp(args: string[], env: Record<string, string>): Promise<{ child: ChildProcess; url: string; printed: string }> {
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.kill("SIGTERM");
        }),
    );
    return new Promise((resolve, reject) => {
      let out = "";
      let err = "";
      child.stderr!.on("data", (c: Buffer) => (err += c.toString()));
      child.stdout!.on("data", (c: Buffer) => {
        out += c.toString();
        const url = /MCP server: (\S+)/.exec(out)?.[1];
        if (url && out.includes("bearer token:")) resolve({ child, url, printed: out });
      });
      child.once("exit", (code) => reject(new Error(`exited ${code}: ${err}`)));
    });
  }

  it("prints its address and a new token, keeps a --token-file token (0600), refuses others, and serves both generations", async () => {
    const s = setup([{ text: "one" }, { text: "two" }]);
    const printed = await serveHttp([...s.args, "--http", "0"], s.env);
    const token = /bearer token: (\S+)/.exec(printed.printed)![1];
    expect(printed.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const auth = (t: string) => [new URL(printed.url), { requestInit: { headers: { Authorization: `Bearer ${t}` } } }] as never;
    const modern = await modernHost(auth(token));
    cleanups.push(() => modern.close());
    expect(await modern.callTool({ prompt: "1" })).toMatchObject({ content: [{ type: "text", text: "one" }] });
    const legacy = await legacyHost(auth(token));
    cleanups.push(() => legacy.close());
    expect(await legacy.callTool({ prompt: "2" })).toMatchObject({ content: [{ type: "text", text: "two" }] });
    await expect(legacyHost(auth("not-the-token-at-all"))).rejects.toThrow();

    const tokenFile = join(s.root, "token");
    const withFile = await serveHttp([...s.args, "--http", "0", "--token-file", tokenFile], s.env);
    expect(withFile.printed).not.toMatch(/bearer token: [A-Za-z0-9_-]{20,}/);
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    const kept = readFileSync(tokenFile, "utf8").trim();
    const res = await fetch(withFile.url, { method: "POST", headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" }, body: "{}" });
    expect(res.status).toBe(401);
    const ok = await legacyHost([new URL(withFile.url), { requestInit: { headers: { Authorization: `Bearer ${kept}` } } }] as never);
    cleanups.push(() => ok.close());
    expect((await ok.listResources()).length).toBeGreaterThanOrEqual(0);
  });
});
