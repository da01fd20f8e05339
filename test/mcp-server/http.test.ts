import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { mcpServer, type StatecraftMcpServer } from "../../src/mcp-server/index.js";
import { scriptedModel } from "../../src/models/scripted.js";
import { makeTempDir, removeDir } from "../tools/workspace.js";
import { legacyHost, modernHost, type HostOptions, type TestHost } from "./clients.js";

// statecraft as an MCP server over Streamable HTTP, called by the SDK's own clients of both generations: v2 (2.4.0,
// protocol 2026-07-28, stateless) and 1.x (1.32.2, protocol 2025-11-25 with initialize and a session).

let cwd: string;
let server: StatecraftMcpServer | undefined;
const hosts: TestHost[] = [];
beforeEach(() => {
  cwd = makeTempDir("statecraft-mcp-serve-");
});
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.close().catch(() => undefined);
  await server?.close();
  server = undefined;
  removeDir(cwd);
});

/** A tool that writes: default mode asks before it runs. */
const touch = defineTool<{ name: string }>({
  name: "touch",
  description: "Creates an empty file",
  inputSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  risk: "write",
  async execute(input, context) {
    const { writeFileSync } = await import("node:fs");
    writeFileSync(join(context.cwd, input.name), "");
    return `created ${input.name}`;
  },
});

/** A tool that waits until its call is aborted. */
const wait = defineTool<Record<string, never>>({
  name: "wait",
  description: "Waits",
  inputSchema: { type: "object", properties: {} },
  risk: "read",
  execute: (_input, context) => new Promise((resolve) => context.signal.addEventListener("abort", () => resolve("stopped"))),
});

async function serve(script: Parameters<typeof scriptedModel>[0], permissions: { allow?: string[] } = {}) {
  server = await mcpServer({ agent: { model: scriptedModel(script), tools: [touch, wait], cwd, permissions } });
  return server.listen();
}

const GENERATIONS = [
  { name: "2026-07-28 (SDK v2 client)", connect: modernHost, protocol: "2026-07-28" },
  { name: "2025-11-25 (SDK 1.x client)", connect: legacyHost, protocol: "2025-11-25" },
] as const;

describe.each(GENERATIONS)("over HTTP, a host of $name", ({ connect, protocol }) => {
  async function host(url: string, token: string, options: HostOptions = {}): Promise<TestHost> {
    const h = await connect([new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }] as never, options);
    hosts.push(h);
    return h;
  }

  it("runs the agent to its final answer, with progress per state and the run's figures as structuredContent", async () => {
    const { url, token } = await serve([{ text: "forty-two" }]);
    const h = await host(url, token);
    if (protocol === "2026-07-28") expect(h.protocol()).toBe(protocol);
    const progress: Array<{ progress: number; message?: string }> = [];
    const result = await h.callTool({ prompt: "the answer?" }, { onprogress: (p) => progress.push(p) });
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: "text", text: "forty-two" }]);
    expect(result.structuredContent).toMatchObject({ reason: "final_answer", turns: 1, toolCalls: 0, usage: { input: expect.any(Number), output: expect.any(Number) } });
    const sessionId = (result.structuredContent as { sessionId: string }).sessionId;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    // One notification per state, each naming it and the turn, counting up.
    expect(progress.map((p) => p.message)).toEqual(["build_context (turn 0)", "call_model (turn 1)", "stream_text (turn 1)"]);
    expect(progress.map((p) => p.progress)).toEqual([1, 2, 3]);
  }, 60_000);

  it("goes on with a session given its sessionId; a run that does not end final_answer is an error result", async () => {
    const { url, token } = await serve([{ text: "first" }, { toolCalls: [{ name: "touch", input: { name: "x.txt" } }] }]);
    const h = await host(url, token);
    const first = await h.callTool({ prompt: "one" });
    const sessionId = (first.structuredContent as { sessionId: string }).sessionId;
    // The second run asks to write, which nobody can allow here (no rule, no elicitation): it ends permission_denied.
    const second = await h.callTool({ prompt: "two", sessionId });
    expect(second.structuredContent).toMatchObject({ sessionId, reason: "permission_denied", turns: 1 });
    expect(second.isError).toBe(true);
    expect(second.content).toEqual([{ type: "text", text: expect.stringMatching(/^The run ended permission_denied: .*touch/) }]);
    // The session's one summary holds both runs.
    const summary = JSON.parse((await h.readResource(`statecraft://sessions/${sessionId}/summary`)).text);
    expect(summary.runs.map((r: { prompt: string; reason: string }) => [r.prompt, r.reason])).toEqual([["one", "final_answer"], ["two", "permission_denied"]]);
  }, 60_000);

  it("a permission question goes to the host as an elicitation: allow runs the call once", async () => {
    const { url, token } = await serve([{ toolCalls: [{ name: "touch", input: { name: "allowed.txt" } }] }, { text: "made it" }]);
    const h = await host(url, token, { answer: { action: "accept", decision: "allow" } });
    const result = await h.callTool({ prompt: "make a file" });
    expect(h.asked).toHaveLength(1);
    expect(h.asked[0]).toMatch(/touch \{"name":"allowed.txt"\}/);
    expect(result).toMatchObject({ content: [{ type: "text", text: "made it" }], structuredContent: { reason: "final_answer", toolCalls: 1 } });
    expect(existsSync(join(cwd, "allowed.txt"))).toBe(true);
  }, 60_000);

  it("a permission question answered deny (or declined) keeps the call from running", async () => {
    const { url, token } = await serve([{ toolCalls: [{ name: "touch", input: { name: "denied.txt" } }] }, { toolCalls: [{ name: "touch", input: { name: "declined.txt" } }] }]);
    const denying = await host(url, token, { answer: { action: "accept", decision: "deny" } });
    const denied = await denying.callTool({ prompt: "make a file" });
    expect(denying.asked).toHaveLength(1);
    // A denial when asked ends the run (the engine's rule), and the host hears why.
    expect(denied).toMatchObject({ isError: true, structuredContent: { reason: "permission_denied", toolCalls: 0 } });
    const declining = await host(url, token, { answer: { action: "decline" } });
    const declined = await declining.callTool({ prompt: "make another" });
    expect(declining.asked).toHaveLength(1);
    expect(declined).toMatchObject({ isError: true, structuredContent: { reason: "permission_denied" } });
    expect(existsSync(join(cwd, "denied.txt"))).toBe(false);
    expect(existsSync(join(cwd, "declined.txt"))).toBe(false);
    const audit = readFileSync(join(cwd, ".agent", "audit.jsonl"), "utf8");
    expect(audit).toContain('"decision":"deny"');
  }, 60_000);

  it("a host without elicitation gets the server's rules: an allow rule runs the call, no rule denies it unasked", async () => {
    const { url, token } = await serve([{ toolCalls: [{ name: "touch", input: { name: "ruled.txt" } }] }, { text: "done" }], { allow: ["touch"] });
    const h = await host(url, token);
    const result = await h.callTool({ prompt: "make a file" });
    expect(result.structuredContent).toMatchObject({ reason: "final_answer", toolCalls: 1 });
    expect(existsSync(join(cwd, "ruled.txt"))).toBe(true);
    await server!.close();
    const again = await serve([{ toolCalls: [{ name: "touch", input: { name: "unruled.txt" } }] }, { text: "done" }]);
    const h2 = await host(again.url, again.token);
    await h2.callTool({ prompt: "make a file" });
    expect(existsSync(join(cwd, "unruled.txt"))).toBe(false);
  }, 60_000);

  it("the host cancelling the call aborts the run (user_abort), as the session's summary resource then says", async () => {
    const { url, token } = await serve([{ toolCalls: [{ name: "wait", input: {} }] }, { text: "never" }]);
    const h = await host(url, token);
    const controller = new AbortController();
    const call = h.callTool({ prompt: "wait" }, { signal: controller.signal, onprogress: (p) => p.message?.startsWith("execute_tool") && controller.abort() });
    await expect(call).rejects.toThrow();
    // The run ends once the server hears the cancellation; its summary then holds the reason.
    const deadline = Date.now() + 20_000;
    let summary: { runs?: Array<{ reason?: string }> } = {};
    while (Date.now() < deadline) {
      const resources = await h.listResources();
      const uri = resources.find((r) => r.uri.endsWith("/summary"))?.uri;
      if (uri) summary = JSON.parse((await h.readResource(uri)).text);
      if (summary.runs?.[0]?.reason) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(summary.runs?.[0]).toMatchObject({ prompt: "wait", reason: "user_abort" });
  }, 60_000);

  it("serves each session's trace (JSONL) and summary as resources", async () => {
    const { url, token } = await serve([{ text: "hello" }]);
    const h = await host(url, token);
    const result = await h.callTool({ prompt: "say hello" });
    const sessionId = (result.structuredContent as { sessionId: string }).sessionId;
    const uris = (await h.listResources()).map((r) => r.uri);
    expect(uris).toEqual(expect.arrayContaining([`statecraft://sessions/${sessionId}/trace`, `statecraft://sessions/${sessionId}/summary`]));
    const trace = await h.readResource(`statecraft://sessions/${sessionId}/trace`);
    expect(trace.mimeType).toBe("application/jsonl");
    const lines = trace.text.trim().split("\n").map((l) => JSON.parse(l) as { sessionId: string; state?: string });
    expect(lines.every((l) => l.sessionId === sessionId)).toBe(true);
    expect(lines.map((l) => l.state)).toEqual(["build_context", "call_model", "stream_text", "done"]);
    const summary = JSON.parse((await h.readResource(`statecraft://sessions/${sessionId}/summary`)).text);
    expect(summary).toMatchObject({ sessionId, runs: [{ prompt: "say hello", reason: "final_answer", turns: 1, toolCalls: 0, text: "hello" }] });
    await expect(h.readResource("statecraft://sessions/no-such-session/summary")).rejects.toThrow(/no session no-such-session/);
  }, 60_000);
});

describe("the HTTP endpoint's guards", () => {
  it("refuses a missing or wrong bearer token, another site's Origin, a foreign Host and a body over the limit", async () => {
    server = await mcpServer({ agent: { model: scriptedModel([{ text: "x" }]), cwd } });
    const { url, token } = await server.listen({ maxBodyBytes: 10_000 });
    const initialize = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
    const post = (headers: Record<string, string>, body = initialize) =>
      fetch(url, { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers }, body });
    for (const authorization of [undefined, "Bearer wrong-token-wrong-token", `Basic ${token}`, `Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, token]) {
      const res = await post(authorization === undefined ? {} : { Authorization: authorization });
      expect(res.status, `Authorization: ${authorization}`).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
    }
    for (const origin of ["https://evil.example", "http://127.0.0.1.evil.example", "null", `http://localhost:1`]) {
      expect((await post({ Authorization: `Bearer ${token}`, Origin: origin })).status, `Origin ${origin}`).toBe(403);
    }
    // A page of another site reaching 127.0.0.1 by a name of its own (DNS rebinding) sends its own Host.
    const { request } = await import("node:http");
    const rebinding = await new Promise<number>((resolve, reject) => {
      const req = request(url, { method: "POST", headers: { Host: "attacker.example", Authorization: `Bearer ${token}`, "Content-Type": "application/json" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end(initialize);
    });
    expect(rebinding).toBe(403);
    expect((await post({ Authorization: `Bearer ${token}` }, JSON.stringify({ pad: "x".repeat(20_000) }))).status).toBe(413);
    // And the right token from no browser (no Origin) is served.
    expect((await post({ Authorization: `Bearer ${token}` })).status).toBe(200);
    // A modern host with a wrong token fails to connect.
    await expect(modernHost([new URL(url), { requestInit: { headers: { Authorization: "Bearer nope-nope-nope-nope" } } }] as never)).rejects.toThrow();
  }, 60_000);
});
