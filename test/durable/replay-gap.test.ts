import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import { defineTool, describeLine, forkStart, loadSession, query, replay, resume, scriptedModel } from "../../src/index.js";
import { collect, removeDir, tempDir } from "../support/engine.js";

let cwd: string;
beforeEach(() => {
  cwd = tempDir();
});
afterEach(() => removeDir(cwd));

const note = defineTool({
  name: "write_note",
  description: "Writes a note.",
  inputSchema: { type: "object", properties: { note: { type: "string" } }, required: ["note"] },
  risk: "write",
  execute: (input: { note: string }) => `wrote ${input.note}`,
});

describe("the trace of a suspended-then-resumed session", () => {
  it("replays identical when the question suspended because nobody could be asked (whenUnanswered)", async () => {
    const first = scriptedModel([{ text: "Writing.", toolCalls: [{ name: "write_note", input: { note: "b" } }] }]);
    const { result } = await collect(query("note b", { model: first, tools: [note], cwd, permissions: { whenUnanswered: "suspend" } }));
    if (result.status !== "suspended") throw new Error("not suspended");
    await collect(resume(result.sessionId, { model: scriptedModel([{ text: "Done." }]), tools: [note], cwd, answers: { [result.pending[0].callId]: "allow" } }));
    const replayed = await replay(await loadSession(join(cwd, ".agent", "trace.jsonl"), result.sessionId));
    expect(replayed.divergence).toBeUndefined();
    expect(replayed.identical).toBe(true);
  });

  it("replays identical", async () => {
    const first = scriptedModel([{ text: "Writing.", toolCalls: [{ name: "write_note", input: { note: "a" } }] }]);
    const { result } = await collect(query("note a", { model: first, tools: [note], cwd, permissions: { onAsk: () => "suspend" } }));
    if (result.status !== "suspended") throw new Error("not suspended");
    await collect(resume(result.sessionId, { model: scriptedModel([{ text: "Done." }]), tools: [note], cwd, answers: { [result.pending[0].callId]: "allow" } }));
    const session = await loadSession(join(cwd, ".agent", "trace.jsonl"), result.sessionId);
    const replayed = await replay(session);
    expect(replayed.divergence).toBeUndefined();
    expect(replayed.identical).toBe(true);

    // trace show says what the gap lines mean.
    const shown = session.lines.map(describeLine);
    expect(shown.find((l) => / suspended/.test(l))).toMatch(/suspended: waiting for an answer to write_note /);
    expect(shown.find((l) => / resumed/.test(l))).toMatch(/resumed after \d+ ms: \S+ allow by human/);

    // Forks on either side of the gap: at the question it suspended at, and after the call it resumed to run.
    const lines = session.lines as Array<{ seq: number; kind: string; state?: string }>;
    const gap = lines.findIndex((l) => l.kind === "suspended");
    const before = forkStart(session, lines[gap - 1].seq);
    expect(before.messages[0]).toMatchObject({ role: "user", content: "note a" });
    expect(before.messages.some((m) => m.role === "tool")).toBe(false);
    const after = forkStart(session, lines.find((l) => l.state === "append_tool_result")!.seq);
    expect(after.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(after.messages[2]).toMatchObject({ content: "wrote a" });
  });
});
