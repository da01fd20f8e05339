import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { scriptedModel, type ScriptedToolCall } from "../../src/models/scripted.js";
import type { PermissionOptions } from "../../src/permissions/types.js";
import { query } from "../../src/query.js";
import { builtinTools } from "../../src/tools/builtin/index.js";
import { collect, readJsonl } from "../support/engine.js";
import { makeTempDir, removeDir, writeFiles } from "../tools/workspace.js";

const SECRET = "SECRET=hunter2-do-not-leak";

let ws: string;
let outside: string;
beforeEach(() => {
  ws = makeTempDir("statecraft-recheck-");
  outside = makeTempDir("statecraft-recheck-outside-");
  writeFiles(ws, {
    ".env": `${SECRET}\n`,
    "secrets/key.pem": `${SECRET}\n`,
    "real.txt": "just text\n",
    "package.json": '{"name":"app"}\n',
  });
});
afterEach(() => {
  removeDir(ws);
  removeDir(outside);
});

interface AuditLine {
  tool: string;
  ok: boolean;
  permission: { decision: string; by: string } | null;
  error?: { code: string; message: string };
}

/** Runs one response of `calls`, then a final answer; returns what the model was sent afterwards, and the audit. */
async function runBatch(calls: ScriptedToolCall[], permissions: PermissionOptions) {
  const model = scriptedModel([{ toolCalls: calls }, { text: "done" }]);
  const { events, result } = await collect(query("go", { model, tools: builtinTools(), cwd: ws, permissions }));
  const sent = JSON.stringify(model.requests[1]?.messages ?? []);
  const results = events.flatMap((e) => (e.type === "tool_result" ? [{ name: e.call.name, ...e.result }] : []));
  const audit = readJsonl<AuditLine>(path.join(ws, ".agent", "audit.jsonl"));
  const trace = readJsonl<{ state: string; details: { errors?: Array<{ code: string; message: string }> } }>(path.join(ws, ".agent", "trace.jsonl"));
  return { result, sent, results, audit, traceErrors: trace.flatMap((l) => l.details.errors ?? []) };
}

describe("each call is decided again as it starts", () => {
  it("the issue's payload: ln -sf .env notes.txt, then read_file notes.txt, never sends .env to the model", async () => {
    const out = await runBatch(
      [
        { name: "bash", input: { command: "ln -sf .env notes.txt" } },
        { name: "read_file", input: { path: "notes.txt" } },
      ],
      { allow: ["bash(ln *)"], deny: ["read_file(.env*)"] },
    );
    expect(fs.readlinkSync(path.join(ws, "notes.txt"))).toBe(".env"); // the link was made: the attack really ran
    expect(out.sent).not.toContain("hunter2");
    expect(out.results.map((r) => [r.name, r.isError])).toEqual([
      ["bash", false],
      ["read_file", true],
    ]);
    const refused = out.results[1].content;
    expect(refused).toContain("permission re-checked as read_file started");
    expect(refused).toContain("denied by rule read_file(.env*)");
    // Recorded: the audit line and the trace say why.
    expect(out.audit[1]).toMatchObject({ tool: "read_file", ok: false, permission: { decision: "allow", by: "mode" }, error: { code: "PERMISSION_DENIED" } });
    expect(out.traceErrors).toEqual([expect.objectContaining({ code: "PERMISSION_DENIED", message: expect.stringContaining("read_file(.env*)") })]);
  });

  const leaks: Array<{ name: string; calls: ScriptedToolCall[]; permissions: PermissionOptions }> = [
    {
      name: "a symlink to a denied folder",
      calls: [
        { name: "bash", input: { command: "ln -s secrets docs" } },
        { name: "read_file", input: { path: "docs/key.pem" } },
      ],
      permissions: { allow: ["bash(ln *)"], deny: ["read_file(secrets/)"] },
    },
    {
      name: "a symlink renamed into place",
      calls: [
        { name: "bash", input: { command: "ln -s .env tmp.lnk && mv tmp.lnk notes.txt" } },
        { name: "read_file", input: { path: "notes.txt" } },
      ],
      permissions: { allow: ["bash(ln *)", "bash(mv *)"], deny: ["read_file(.env*)"] },
    },
    {
      name: "a folder renamed and replaced by a symlink",
      calls: [
        { name: "bash", input: { command: "mkdir pub && mv pub pub.old && ln -s secrets pub" } },
        { name: "read_file", input: { path: "pub/key.pem" } },
      ],
      permissions: { allow: ["bash(mkdir *)", "bash(ln *)", "bash(mv *)"], deny: ["read_file(secrets/)"] },
    },
    {
      name: "a symlink read in a parallel group next to an innocent read",
      calls: [
        { name: "bash", input: { command: "ln -sf .env a.txt" } },
        { name: "read_file", input: { path: "real.txt" } },
        { name: "read_file", input: { path: "a.txt" } },
      ],
      permissions: { allow: ["bash(ln *)"], deny: ["read_file(.env*)"] },
    },
  ];
  for (const leak of leaks) {
    it(`${leak.name}: the read is refused as it starts`, async () => {
      const out = await runBatch(leak.calls, leak.permissions);
      expect(out.sent).not.toContain("hunter2");
      const last = out.results[out.results.length - 1];
      expect(last).toMatchObject({ name: "read_file", isError: true });
      expect(last.content).toContain("permission re-checked as read_file started");
      expect(out.results[0]).toMatchObject({ name: "bash", isError: false });
    });
  }

  it("a write to a path that becomes a symlink out of the workspace: re-checked against the allow rule it no longer matches", async () => {
    const out = await runBatch(
      [
        { name: "bash", input: { command: `ln -s ${outside} out` } },
        { name: "write_file", input: { path: "out/x.txt", content: "planted" } },
      ],
      { allow: ["bash(ln *)", "write_file(out/**)"] },
    );
    expect(fs.existsSync(path.join(outside, "x.txt"))).toBe(false);
    expect(out.results[1]).toMatchObject({ name: "write_file", isError: true });
    expect(out.results[1].content).toContain("permission re-checked as write_file started");
    expect(out.audit[1].error?.code).toBe("PERMISSION_DENIED");
  });

  it("a write to a path that becomes a symlink out of the workspace, allowed by the mode: confinement refuses it as it starts", async () => {
    const out = await runBatch(
      [
        { name: "bash", input: { command: `ln -s ${outside} out` } },
        { name: "write_file", input: { path: "out/x.txt", content: "planted" } },
      ],
      { mode: "acceptEdits", allow: ["bash(ln *)"] },
    );
    expect(fs.existsSync(path.join(outside, "x.txt"))).toBe(false);
    expect(out.results[1]).toMatchObject({ name: "write_file", isError: true });
    expect(out.results[1].content).toContain("outside the workspace");
  });

  it("a call a person allowed doesn't run on another file than the one they were shown", async () => {
    const asked: unknown[] = [];
    const out = await runBatch(
      [
        { name: "bash", input: { command: "ln -sf package.json notes.txt" } },
        { name: "write_file", input: { path: "notes.txt", content: "owned" } },
      ],
      {
        allow: ["bash(ln *)"],
        onAsk: (request) => {
          asked.push(request.call.input);
          return "allow";
        },
      },
    );
    expect(asked).toEqual([{ path: "notes.txt", content: "owned" }]);
    expect(fs.readFileSync(path.join(ws, "package.json"), "utf8")).toBe('{"name":"app"}\n');
    expect(out.results[1].content).toContain("was allowed when asked about notes.txt, but it now touches package.json");
  });

  it("a protected path reached through a symlink made earlier in the response is refused", async () => {
    fs.mkdirSync(path.join(ws, ".agent"), { recursive: true });
    const out = await runBatch(
      [
        { name: "bash", input: { command: "ln -s .agent/audit.jsonl log.txt" } },
        { name: "write_file", input: { path: "log.txt", content: "" } },
      ],
      { mode: "bypassPermissions" },
    );
    expect(out.results[1].content).toContain("permission re-checked as write_file started");
    expect(out.results[1].content).toContain("protected(**/.agent/**)");
    expect(out.audit.length).toBeGreaterThan(0); // the audit log was not emptied
  });

  it("a change that keeps the call allowed is no reason to refuse it", async () => {
    const out = await runBatch(
      [
        { name: "bash", input: { command: "ln -s real.txt alias.txt" } },
        { name: "read_file", input: { path: "alias.txt" } },
      ],
      { allow: ["bash(ln *)"], deny: ["read_file(.env*)"] },
    );
    expect(out.results.map((r) => [r.name, r.isError])).toEqual([
      ["bash", false],
      ["read_file", false],
    ]);
    expect(out.results[1].content).toContain("just text");
    expect(out.result.reason).toBe("final_answer");
  });
});
