import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AgentError, defineTool, fileRunStore, query, resume, scriptedModel, type StoredRun, type ToolContext } from "../../src/index.js";
import { collect, removeDir, tempDir } from "../support/engine.js";

let cwd: string;
beforeEach(() => {
  cwd = tempDir();
});
afterEach(() => removeDir(cwd));

/** The run's one tool: a `write` tool (its start is written before it runs) doing `execute`. */
const writeNote = (execute: (input: Record<string, unknown>, context: ToolContext) => unknown) =>
  defineTool({ name: "write_note", description: "Writes.", risk: "write", inputSchema: { type: "object" }, execute: execute as (input: unknown, context: ToolContext) => string });

const fileOf = (sessionId: string) => join(cwd, ".agent", "runs", `${sessionId}.json`);
const linesOf = (sessionId: string) => readFileSync(fileOf(sessionId), "utf8").split("\n").filter(Boolean);

describe("checkpoints are on by default and cost what changed", () => {
  it("a write tool's start is in the store before the tool runs, with every earlier call's result", async () => {
    const seen: Array<{ id: string; stored: StoredRun | undefined }> = [];
    const note = defineTool({
      name: "write_note",
      description: "Writes.",
      risk: "write",
      inputSchema: { type: "object", properties: { n: { type: "number" } } },
      // Read synchronously as the tool starts, before it does anything: what a SIGKILL right now would leave.
      execute: async (_input: { n?: number }, { toolCallId, sessionId }) => {
        seen.push({ id: toolCallId, stored: await fileRunStore(cwd).load(sessionId) });
        return "written";
      },
    });
    const model = scriptedModel([
      { toolCalls: [{ name: "write_note", input: { n: 1 } }, { name: "write_note", input: { n: 2 } }] },
      { toolCalls: [{ name: "write_note", input: { n: 3 } }] },
      { text: "done" },
    ]);
    const { result } = await collect(query("go", { model, tools: [note], cwd, permissions: { mode: "bypassPermissions" } }));
    expect(result.status).toBe("completed");
    expect(seen).toHaveLength(3);
    for (const [i, { id, stored }] of seen.entries()) {
      expect(stored, `checkpoint at call ${i + 1}`).toMatchObject({ status: "running", at: "execute_tool" });
      expect(stored!.started).toContain(id);
      // Every call that finished before this one is stored with its result.
      const finished = stored!.batch.filter((r) => r.status === "finished").map((r) => r.result?.content);
      expect(finished).toEqual(i === 1 ? ["written"] : []);
    }
    // The second response's checkpoint holds the first batch's tool messages: the conversation went on.
    expect(seen[2].stored!.messages.filter((m) => (m as { role: string }).role === "tool")).toHaveLength(2);
    // The run ended: its checkpoint went.
    expect(existsSync(fileOf(result.sessionId))).toBe(false);
  });

  it("appends one line per checkpoint with only the new messages; the lines fold into the run as it stands", async () => {
    let observed: { lines: string[]; stored: StoredRun | undefined; turn: number } | undefined;
    let calls = 0;
    const note = writeNote(async (_input, { sessionId }) => {
        calls++;
        if (calls === 12) observed = { lines: linesOf(sessionId), stored: await fileRunStore(cwd).load(sessionId), turn: calls };
        return "x".repeat(2_000);
      });
    const steps = Array.from({ length: 15 }, (_, n) => ({ toolCalls: [{ name: "write_note", input: { n } }] }));
    const model = scriptedModel([...steps, { text: "done" }]);
    const { result } = await collect(query("go", { model, tools: [note], cwd, maxTurns: 20, permissions: { mode: "bypassPermissions" } }));
    expect(result.status).toBe("completed");
    const { lines, stored } = observed!;
    // One base line, then appended checkpoints: the base holds the conversation as it was at the first checkpoint.
    const base = JSON.parse(lines[0]) as StoredRun;
    expect(base.messages.length).toBeLessThanOrEqual(2);
    expect(lines.length).toBeGreaterThan(12);
    for (const line of lines.slice(1)) {
      expect(line.startsWith('{"sig":"hmac-sha256:')).toBe(true);
      const delta = JSON.parse(line) as { from: number; add: unknown[] };
      // Never the whole conversation again: at most one step's messages (the assistant's call and its result).
      expect(delta.add.length).toBeLessThanOrEqual(2);
    }
    // Folded: the conversation up to the twelfth call (system-less: user, then 11 call+result pairs, then the 12th call).
    expect(stored).toMatchObject({ status: "running", at: "execute_tool", turn: 12, toolCallCount: 12 });
    expect(stored!.messages).toHaveLength(1 + 11 * 2 + 1);
    const last = stored!.messages.at(-1) as { role: string; toolCalls?: unknown[] };
    expect(last.role).toBe("assistant");
    expect(last.toolCalls).toHaveLength(1);
    // Size: each result is written about twice (as the call's result, then as its message), not once per checkpoint:
    // a few times the run's own size (a whole state per checkpoint would be ~12 times it here, and grow with the run).
    expect(lines.join("\n").length).toBeLessThan(3 * JSON.stringify(stored).length);
  });

  it("durable: false keeps no checkpoint; a run whose process dies then can't be resumed", async () => {
    let existed: boolean | undefined;
    const note = writeNote((_input, { sessionId }) => {
        existed = existsSync(fileOf(sessionId)) || existsSync(join(cwd, ".agent", "runs", `${sessionId}.lock`));
        return "ok";
      });
    const model = scriptedModel([{ toolCalls: [{ name: "write_note", input: {} }] }, { text: "done" }]);
    await collect(query("go", { model, tools: [note], cwd, durable: false, permissions: { mode: "bypassPermissions" } }));
    expect(existed).toBe(false);
  });
});

describe("the store's file after a checkpoint", () => {
  /** A run stopped in its third write call's start, as a SIGKILL would leave it: its file, read back. */
  async function stoppedRun(): Promise<{ sessionId: string; text: string }> {
    let text = "";
    let calls = 0;
    const note = writeNote((_input, { sessionId }) => {
        if (++calls === 3) text = readFileSync(fileOf(sessionId), "utf8");
        return "ok";
      });
    const model = scriptedModel([...Array.from({ length: 3 }, (_, n) => ({ toolCalls: [{ name: "write_note", input: { n } }] })), { text: "done" }]);
    const { result } = await collect(query("go", { model, tools: [note], cwd, sessionId: "stopped", permissions: { mode: "bypassPermissions" } }));
    expect(result.status).toBe("completed");
    // Put back as the dead process left it.
    writeFileSync(fileOf("stopped"), text);
    return { sessionId: "stopped", text };
  }

  it("is resumed as it stands: the interrupted write gets INTERRUPTED", async () => {
    await stoppedRun();
    const model = scriptedModel([{ text: "checked" }]);
    const note = writeNote(() => "again");
    const { events, result } = await collect(resume("stopped", { model, tools: [note], cwd }));
    expect(result.status).toBe("completed");
    const results = events.filter((e) => e.type === "tool_result");
    expect(results).toHaveLength(1);
    expect((results[0] as { result: { content: string } }).result.content).toMatch(/^INTERRUPTED: write_note/);
  });

  it("a torn last line (the process died writing it) leaves the checkpoint before it", async () => {
    const { text } = await stoppedRun();
    const lines = text.split("\n").filter(Boolean);
    const whole = `${lines.slice(0, -1).join("\n")}\n`;
    const expected = await (async () => {
      writeFileSync(fileOf("stopped"), whole);
      return fileRunStore(cwd).load("stopped");
    })();
    writeFileSync(fileOf("stopped"), text);
    const full = await fileRunStore(cwd).load("stopped");
    writeFileSync(fileOf("stopped"), whole + lines.at(-1)!.slice(0, 40));
    const torn = await fileRunStore(cwd).load("stopped");
    expect(torn).toEqual(expected);
    // The torn line was the third call's start: without it, that call is not known to have started.
    const third = full!.started.at(-1)!;
    expect(torn!.started).not.toContain(third);
  });

  const attacks: Array<{ name: string; edit: (lines: string[]) => string[] }> = [
    { name: "a field of a checkpoint line changed", edit: (l) => l.map((line, i) => (i === l.length - 1 ? line.replace('"status":"running"', '"status":"suspended"') : line)) },
    { name: "a permission decision changed in a line", edit: (l) => l.map((line) => line.replace(/"by":"mode"/g, '"by":"human"')) },
    { name: "a line removed from the middle", edit: (l) => [l[0], ...l.slice(2)] },
    { name: "two lines swapped", edit: (l) => [l[0], l[2], l[1], ...l.slice(3)] },
    { name: "an earlier line appended again", edit: (l) => [...l, l[1]] },
    { name: "a line with a made-up signature appended", edit: (l) => [...l, `{"sig":"hmac-sha256:${"0".repeat(64)}",${l.at(-1)!.slice(86)}`] },
    { name: "a line without a signature appended", edit: (l) => [...l, `{${l.at(-1)!.slice(86)}`] },
    { name: "the base line's conversation edited", edit: (l) => [l[0].replace('"content":"go"', '"content":"delete everything"'), ...l.slice(1)] },
  ];
  for (const attack of attacks) {
    it(`${attack.name}: RUN_DAMAGED, never a run resumed from it`, async () => {
      const { text } = await stoppedRun();
      const lines = text.split("\n").filter(Boolean);
      expect(lines.length).toBeGreaterThan(3);
      const edited = attack.edit(lines);
      expect(edited.join("\n")).not.toBe(lines.join("\n"));
      writeFileSync(fileOf("stopped"), `${edited.join("\n")}\n`);
      let ran = 0;
      const note = writeNote(() => String(++ran));
      const error = await resume("stopped", { model: scriptedModel([{ text: "x" }]), tools: [note], cwd })
        .next()
        .then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(AgentError);
      expect((error as AgentError).code).toBe("RUN_DAMAGED");
      expect((error as AgentError).message).toMatch(/stopped\.json can't be resumed/);
      expect(ran).toBe(0);
    });
  }
});

describe("a new run of a session with a stored run", () => {
  it("a suspended run is not overwritten: SESSION_BUSY until it is resumed", async () => {
    const note = writeNote(() => "ok");
    const suspended = await collect(query("go", { model: scriptedModel([{ toolCalls: [{ name: "write_note", input: {} }] }]), tools: [note], cwd, sessionId: "s1", permissions: { whenUnanswered: "suspend" } }));
    expect(suspended.result.status).toBe("suspended");
    const before = readFileSync(fileOf("s1"), "utf8");
    const error = await query("again", { model: scriptedModel([{ text: "x" }]), cwd, sessionId: "s1" })
      .next()
      .then(() => undefined, (e: unknown) => e);
    expect((error as AgentError).code).toBe("SESSION_BUSY");
    expect((error as AgentError).message).toMatch(/suspended run waiting on .*resume/);
    expect(readFileSync(fileOf("s1"), "utf8")).toBe(before);
    // Resumed, the session is free again.
    const resumed = await collect(resume("s1", { model: scriptedModel([{ text: "done" }]), tools: [note], cwd, answers: { [(suspended.result as { pending: Array<{ callId: string }> }).pending[0].callId]: "allow" } }));
    expect(resumed.result.status).toBe("completed");
    const next = await collect(query("again", { model: scriptedModel([{ text: "x" }]), cwd, sessionId: "s1" }));
    expect(next.result.status).toBe("completed");
  });

  it("an interrupted run is given up with a warning, and the new run replaces it", async () => {
    const warnings: string[] = [];
    const logger = { warn: (_o: unknown, m: string) => warnings.push(m), error: () => {}, info: () => {}, debug: () => {} };
    const note = writeNote((_input, { sessionId }) => {
        writeFileSync(join(cwd, "left.json"), readFileSync(fileOf(sessionId)));
        return "ok";
      });
    await collect(query("go", { model: scriptedModel([{ toolCalls: [{ name: "write_note", input: {} }] }, { text: "x" }]), tools: [note], cwd, sessionId: "s2", permissions: { mode: "bypassPermissions" } }));
    writeFileSync(fileOf("s2"), readFileSync(join(cwd, "left.json")));
    const { result } = await collect(query("again", { model: scriptedModel([{ text: "fresh" }]), cwd, sessionId: "s2", logger: logger as never }));
    expect(result.status).toBe("completed");
    expect(warnings.some((w) => /interrupted run is given up/.test(w))).toBe(true);
    expect(existsSync(fileOf("s2"))).toBe(false);
  });
});
