import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { scriptedModel } from "../../src/models/scripted.js";
import type { PermissionAnswer, PermissionRequest } from "../../src/permissions/types.js";
import { query } from "../../src/query.js";
import { builtinTools } from "../../src/tools/builtin/index.js";
import { collect, readJsonl } from "../support/engine.js";
import { makeTempDir, removeDir } from "./workspace.js";

let cwd: string;
beforeEach(() => {
  cwd = makeTempDir("statecraft-query-tools-");
});
afterEach(() => removeDir(cwd));

interface AuditLine {
  toolCallId: string;
  tool: string;
  input: unknown;
  permission: { decision: string; by: string; rule?: string } | null;
  ok: boolean;
  durationMs: number;
}
type TraceLine = { state: string; details: { permissions?: Array<Record<string, unknown>> } };

const audit = () => readJsonl<AuditLine>(path.join(cwd, ".agent", "audit.jsonl"));
/** Every permission record the trace holds, in order. */
const tracedPermissions = () =>
  readJsonl<TraceLine>(path.join(cwd, ".agent", "trace.jsonl")).flatMap((line) => line.details.permissions ?? []);

/** An onAsk that records each request and answers from a list. */
function answering(...answers: PermissionAnswer[]) {
  const requests: PermissionRequest[] = [];
  return {
    requests,
    onAsk(request: PermissionRequest): PermissionAnswer {
      requests.push(request);
      const answer = answers[requests.length - 1];
      if (answer === undefined) throw new Error(`unexpected permission request ${JSON.stringify(request)}`);
      return answer;
    },
  };
}

describe("query() with builtinTools()", () => {
  it("a call denied when asked never runs; audit and trace record the human's deny", async () => {
    const ask = answering("deny");
    const model = scriptedModel([{ toolCalls: [{ name: "bash", input: { command: "touch ran.txt" } }] }, { text: "ok" }]);
    const { events } = await collect(query("go", { model, tools: builtinTools(), cwd, permissions: { onAsk: ask.onAsk } }));
    expect(fs.existsSync(path.join(cwd, "ran.txt"))).toBe(false);
    expect(events.some((e) => e.type === "tool_start")).toBe(false);
    expect(ask.requests).toHaveLength(1);
    expect(ask.requests[0].call).toMatchObject({ name: "bash", input: { command: "touch ran.txt" } });
    expect(ask.requests[0].reason).toContain("bash");
    const [line] = audit();
    expect(line).toMatchObject({ tool: "bash", ok: false, permission: { decision: "deny", by: "human" } });
    expect(tracedPermissions()).toEqual([
      { toolCallId: line.toolCallId, name: "bash", decision: "deny", by: "human", input: { command: "touch ran.txt" } },
    ]);
  });

  it("a deny rule stops a compound command before anyone is asked", async () => {
    fs.mkdirSync(path.join(cwd, "keep"));
    const ask = answering();
    const model = scriptedModel([{ toolCalls: [{ name: "bash", input: { command: "echo hi && rm -rf keep" } }] }, { text: "ok" }]);
    await collect(query("go", { model, tools: builtinTools(), cwd, permissions: { mode: "bypassPermissions", deny: ["bash(rm *)"], onAsk: ask.onAsk } }));
    expect(fs.existsSync(path.join(cwd, "keep"))).toBe(true);
    expect(ask.requests).toEqual([]);
    expect(audit()[0]).toMatchObject({ ok: false, permission: { decision: "deny", by: "rule", rule: "bash(rm *)" } });
    expect(tracedPermissions()[0]).toMatchObject({ decision: "deny", by: "rule", rule: "bash(rm *)" });
  });

  it("allow_always covers exactly that command, for the rest of the session and its later runs", async () => {
    const ask = answering("allow_always", "deny");
    const model = scriptedModel([
      { toolCalls: [{ name: "bash", input: { command: "echo one >> log.txt" } }] },
      { toolCalls: [{ name: "bash", input: { command: "echo one >> log.txt" } }] },
      { toolCalls: [{ name: "bash", input: { command: "echo two >> log.txt" } }] },
      { text: "done" },
    ]);
    const run = query("go", { model, tools: builtinTools(), cwd, permissions: { onAsk: ask.onAsk } });
    await collect(run);
    expect(fs.readFileSync(path.join(cwd, "log.txt"), "utf8")).toBe("one\none\n");
    expect(ask.requests.map((r) => r.call.input)).toEqual([{ command: "echo one >> log.txt" }, { command: "echo two >> log.txt" }]);
    expect(audit().map((a) => [a.permission, a.ok])).toEqual([
      [{ decision: "allow_always", by: "human", rule: "bash(echo one >> log.txt)" }, true],
      [{ decision: "allow", by: "rule", rule: "bash(echo one >> log.txt)" }, true],
      [{ decision: "deny", by: "human" }, false],
    ]);
    expect(tracedPermissions().map((p) => [p.decision, p.by, p.rule])).toEqual([
      ["allow_always", "human", "bash(echo one >> log.txt)"],
      ["allow", "rule", "bash(echo one >> log.txt)"],
      ["deny", "human", undefined],
    ]);

    // A later run of the same session: the rule still holds without asking; nothing else is covered by it.
    const later = answering("deny");
    const again = scriptedModel([
      { toolCalls: [{ name: "bash", input: { command: "echo one >> log.txt" } }] },
      { toolCalls: [{ name: "bash", input: { command: "echo one >> log.txt && echo three >> log.txt" } }] },
      { text: "done" },
    ]);
    await collect(query("again", { model: again, tools: builtinTools(), cwd, sessionId: run.sessionId, permissions: { onAsk: later.onAsk } }));
    expect(fs.readFileSync(path.join(cwd, "log.txt"), "utf8")).toBe("one\none\none\n");
    expect(later.requests.map((r) => r.call.input)).toEqual([{ command: "echo one >> log.txt && echo three >> log.txt" }]);
  });

  it("each request is bound to its own call id and input, and the call runs with exactly that input", async () => {
    const ask = answering("allow", "allow");
    const model = scriptedModel([
      {
        toolCalls: [
          { name: "write_file", input: { path: "a.txt", content: "A" } },
          { name: "write_file", input: { path: "b.txt", content: "B" } },
        ],
      },
      { text: "ok" },
    ]);
    const { events } = await collect(query("go", { model, tools: builtinTools(), cwd, permissions: { onAsk: ask.onAsk } }));
    const started = events.flatMap((e) => (e.type === "tool_start" ? [e.call] : []));
    expect(started.map((c) => c.id)).toEqual(ask.requests.map((r) => r.call.id));
    expect(new Set(started.map((c) => c.id)).size).toBe(2);
    expect(ask.requests.map((r) => r.call.input)).toEqual([
      { path: "a.txt", content: "A" },
      { path: "b.txt", content: "B" },
    ]);
    expect(fs.readFileSync(path.join(cwd, "a.txt"), "utf8")).toBe("A");
    expect(fs.readFileSync(path.join(cwd, "b.txt"), "utf8")).toBe("B");
    expect(audit().map((a) => [a.toolCallId, a.permission?.decision, a.permission?.by])).toEqual([
      [started[0].id, "allow", "human"],
      [started[1].id, "allow", "human"],
    ]);
  });

  it("a plain allow does not carry over to the next call with the same input", async () => {
    const ask = answering("allow", "deny");
    const model = scriptedModel([
      { toolCalls: [{ name: "bash", input: { command: "echo x >> twice.txt" } }] },
      { toolCalls: [{ name: "bash", input: { command: "echo x >> twice.txt" } }] },
      { text: "ok" },
    ]);
    await collect(query("go", { model, tools: builtinTools(), cwd, permissions: { onAsk: ask.onAsk } }));
    expect(ask.requests).toHaveLength(2);
    expect(ask.requests[0].call.id).not.toBe(ask.requests[1].call.id);
    expect(fs.readFileSync(path.join(cwd, "twice.txt"), "utf8")).toBe("x\n");
  });

  it("file rules are relative to the run's cwd (not the process's)", async () => {
    fs.mkdirSync(path.join(cwd, "secret"));
    fs.writeFileSync(path.join(cwd, "secret", "key.txt"), "TOP SECRET");
    // Absolute paths inside the run's workspace: only a policy rooted at the run's cwd sees them as src/…, secret/….
    const model = scriptedModel([
      { toolCalls: [{ name: "write_file", input: { path: path.join(cwd, "src", "a.ts"), content: "export {};\n" } }] },
      { toolCalls: [{ name: "read_file", input: { path: path.join(cwd, "secret", "key.txt") } }] },
      { text: "ok" },
    ]);
    const { events, result } = await collect(
      query("go", { model, tools: builtinTools(), cwd, permissions: { allow: ["write_file(src/**)"], deny: ["read_file(secret/)"] } }),
    );
    expect(fs.readFileSync(path.join(cwd, "src", "a.ts"), "utf8")).toBe("export {};\n");
    expect(JSON.stringify(events)).not.toContain("TOP SECRET");
    expect(result.reason).toBe("permission_denied");
    expect(audit().map((a) => a.permission)).toEqual([
      { decision: "allow", by: "rule", rule: "write_file(src/**)" },
      { decision: "deny", by: "rule", rule: "read_file(secret/)" },
    ]);
  });

  it("a call that must be asked is denied by default without onAsk, and never runs", async () => {
    const model = scriptedModel([{ toolCalls: [{ name: "write_file", input: { path: "other.txt", content: "no" } }] }, { text: "ok" }]);
    await collect(query("go", { model, tools: builtinTools(), cwd }));
    expect(fs.existsSync(path.join(cwd, "other.txt"))).toBe(false);
    expect(audit().map((a) => [a.ok, a.permission])).toEqual([[false, { decision: "deny", by: "default" }]]);
    expect(tracedPermissions()).toMatchObject([{ decision: "deny", by: "default", input: { path: "other.txt", content: "no" } }]);
  });

  it("plan mode: reads run, edits are denied by the mode; a failing bash call is audited ok: false", async () => {
    fs.writeFileSync(path.join(cwd, "f.txt"), "hello\n");
    const model = scriptedModel([
      { toolCalls: [{ name: "read_file", input: { path: "f.txt" } }] },
      { toolCalls: [{ name: "edit_file", input: { path: "f.txt", old_string: "hello", new_string: "bye" } }] },
      { text: "planned" },
    ]);
    await collect(query("go", { model, tools: builtinTools(), cwd, permissions: { mode: "plan" } }));
    expect(fs.readFileSync(path.join(cwd, "f.txt"), "utf8")).toBe("hello\n");
    expect(audit().map((a) => [a.tool, a.ok, a.permission])).toEqual([
      ["read_file", true, { decision: "allow", by: "mode" }],
      ["edit_file", false, { decision: "deny", by: "mode" }],
    ]);

    const failing = scriptedModel([{ toolCalls: [{ name: "bash", input: { command: "exit 4" } }] }, { text: "ok" }]);
    const { events } = await collect(query("go", { model: failing, tools: builtinTools(), cwd, permissions: { mode: "bypassPermissions" } }));
    const result = events.find((e) => e.type === "tool_result");
    expect(result && result.type === "tool_result" && result.result).toMatchObject({ isError: true, content: expect.stringContaining("exit code: 4") });
    expect(audit().at(-1)).toMatchObject({ tool: "bash", ok: false, permission: { decision: "allow", by: "mode" } });
  });

  it("a path outside the workspace reaches the model as an error result naming the workspace root", async () => {
    const model = scriptedModel([{ toolCalls: [{ name: "read_file", input: { path: "../../etc/passwd" } }] }, { text: "ok" }]);
    const { events } = await collect(query("go", { model, tools: builtinTools(), cwd }));
    const result = events.find((e) => e.type === "tool_result");
    expect(result && result.type === "tool_result" && result.result).toMatchObject({ isError: true, content: expect.stringContaining(`workspace root ${cwd}`) });
  });
});
