import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ToolMessage } from "../../src/models/messages.js";
import { scriptedModel } from "../../src/models/scripted.js";
import type { PermissionOptions } from "../../src/permissions/types.js";
import { query } from "../../src/query.js";
import { builtinTools } from "../../src/tools/builtin/index.js";
import { collect, readJsonl, removeDir, tempDir } from "../support/engine.js";

let cwd: string;
beforeEach(() => {
  cwd = tempDir("statecraft-on-deny-");
});
afterEach(() => removeDir(cwd));

const audit = () => readJsonl<{ tool: string; ok: boolean; permission: { decision: string; by: string; rule?: string } | null }>(path.join(cwd, ".agent", "audit.jsonl"));
const tracedPermissions = () =>
  readJsonl<{ state: string; details: { permissions?: Array<Record<string, unknown>> } }>(path.join(cwd, ".agent", "trace.jsonl")).flatMap((l) => l.details?.permissions ?? []);

/**
 * One response with the denied call and an allowed one (`echo ok > ran.txt`), then the model's answer: with
 * onDeny "continue" the denied call comes back as its error result, the other runs, and the model answers.
 */
async function deniedThenGoesOn(denied: { name: string; input: Record<string, unknown> }, permissions: PermissionOptions, other: { name: string; input: Record<string, unknown> }) {
  const model = scriptedModel([
    { toolCalls: [denied, other] },
    { text: "I could not do that, so I did the rest." },
  ]);
  const { events, result } = await collect(query("go", { model, tools: builtinTools(), cwd, permissions: { ...permissions, onDeny: "continue" } }));
  const results = model.requests[1]?.messages.filter((m): m is ToolMessage => m.role === "tool") ?? [];
  return { events, result, results };
}

const WRITE_RAN = { name: "bash", input: { command: "echo ok > ran.txt" } };
/** Plan mode allows reading only: the other call reads what the write would not run beside. */
const READ_SEED = { name: "read_file", input: { path: "ran.txt" } };

const KINDS: Array<{ kind: string; by: string; rule?: string; denied: { name: string; input: Record<string, unknown> }; permissions: PermissionOptions; reason: RegExp; other?: typeof READ_SEED }> = [
  {
    kind: "a deny rule",
    by: "rule",
    rule: "write_file",
    denied: { name: "write_file", input: { path: "a.txt", content: "x" } },
    permissions: { mode: "bypassPermissions", deny: ["write_file"] },
    reason: /write_file/,
  },
  {
    kind: "the mode (plan is read-only)",
    by: "mode",
    denied: { name: "write_file", input: { path: "a.txt", content: "x" } },
    permissions: { mode: "plan" },
    reason: /plan/i,
    other: READ_SEED,
  },
  {
    kind: "a person's no",
    by: "human",
    denied: { name: "write_file", input: { path: "a.txt", content: "x" } },
    permissions: { allow: ["bash(echo *)"], onAsk: (request) => (request.call.name === "write_file" ? "deny" : "allow") },
    reason: /denied/i,
  },
  {
    kind: "a protected path",
    by: "rule",
    rule: "protected(**/.agent/**)",
    denied: { name: "write_file", input: { path: ".agent/audit.jsonl", content: "forged" } },
    permissions: { mode: "bypassPermissions" },
    reason: /protected/i,
  },
];

describe('permissions.onDeny: "continue"', () => {
  for (const { kind, by, rule, denied, permissions, reason, other } of KINDS) {
    it(`${kind}: the call's error result says why, the response's other call runs, the model goes on; trace and audit record the deny`, async () => {
      if (other) fs.writeFileSync(path.join(cwd, "ran.txt"), "ok\n");
      const { events, result, results } = await deniedThenGoesOn(denied, permissions, other ?? WRITE_RAN);
      expect(result.reason).toBe("final_answer");
      expect(result.status === "completed" && result.text).toBe("I could not do that, so I did the rest.");
      expect(fs.existsSync(path.join(cwd, "a.txt"))).toBe(false);
      expect(fs.readFileSync(path.join(cwd, "ran.txt"), "utf8")).toBe("ok\n");
      expect(results.map((r) => r.isError)).toEqual([true, false]);
      if (other) expect(results[1].content).toContain("ok");
      expect(results[0].content).toMatch(/^Permission denied: /);
      expect(results[0].content).toMatch(reason);
      expect(results[0].content).toContain(`${denied.name} was not run.`);
      // Every call has its one tool_result event.
      expect(events.filter((e) => e.type === "tool_result").map((e) => e.type === "tool_result" && e.result.isError)).toEqual([true, false]);
      const lines = audit();
      expect(lines.map((l) => [l.tool, l.ok, l.permission?.decision, l.permission?.by])).toEqual([
        [denied.name, false, "deny", by],
        [(other ?? WRITE_RAN).name, true, "allow", expect.any(String)],
      ]);
      if (rule) expect(lines[0].permission?.rule).toBe(rule);
      expect(tracedPermissions()[0]).toMatchObject({ name: denied.name, decision: "deny", by, ...(rule ? { rule } : {}) });
    });
  }

  it('"end" (the default) still ends the run permission_denied and runs nothing of the response', async () => {
    for (const onDeny of [undefined, "end"] as const) {
      const model = scriptedModel([{ toolCalls: [{ name: "write_file", input: { path: "a.txt", content: "x" } }, { name: "bash", input: { command: "echo ok > ran.txt" } }] }, { text: "never" }]);
      const permissions: PermissionOptions = { mode: "bypassPermissions", deny: ["write_file"], ...(onDeny ? { onDeny } : {}) };
      const { result } = await collect(query("go", { model, tools: builtinTools(), cwd, permissions }));
      expect(result.reason).toBe("permission_denied");
      expect(result.error?.code).toBe("PERMISSION_DENIED");
      expect(model.calls).toBe(1);
      expect(fs.existsSync(path.join(cwd, "ran.txt"))).toBe(false);
    }
  });

  it("a run whose every call is denied still ends by its limits", async () => {
    // Each call differs, so the repeated-call guard does not end it first: maxTurns does.
    const model = scriptedModel([0, 1, 2, 3].map((i) => ({ toolCalls: [{ name: "write_file", input: { path: `a${i}.txt`, content: "x" } }] })));
    const { result } = await collect(query("go", { model, tools: builtinTools(), cwd, maxTurns: 3, permissions: { mode: "bypassPermissions", deny: ["write_file"], onDeny: "continue" } }));
    expect(result.reason).toBe("max_turns");
    expect(model.calls).toBe(3);
    expect(audit().map((l) => l.permission?.decision)).toEqual(["deny", "deny", "deny"]);
  });

  it("a value other than end or continue is refused, naming the option", async () => {
    const model = scriptedModel([{ text: "x" }]);
    expect(() => query("go", { model, cwd, permissions: { onDeny: "retry" as never } })).toThrow(/options\.permissions\.onDeny must be "end" or "continue", got "retry"/);
  });
});
