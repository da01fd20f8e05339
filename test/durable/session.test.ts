import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSession, defineTool, scriptedModel } from "../../src/index.js";
import { collect, removeDir, tempDir } from "../support/engine.js";

let cwd: string;
beforeEach(() => {
  cwd = tempDir();
});
afterEach(() => removeDir(cwd));

let runs = 0;
const note = defineTool({
  name: "write_note",
  description: "Writes a note.",
  inputSchema: { type: "object", properties: { note: { type: "string" } }, required: ["note"] },
  risk: "write",
  execute: (input: { note: string }) => (runs++, `wrote ${input.note}`),
});

describe("a session surfaces its suspended run", () => {
  it("pending, then resume(answers); queued messages are kept with the run and handed back, never lost", async () => {
    runs = 0;
    const model = scriptedModel([
      { text: "Writing.", toolCalls: [{ name: "write_note", input: { note: "a" } }] },
      { text: "Noted." },
      { text: "And the follow-up." },
    ]);
    const session = createSession({ model, tools: [note], cwd, permissions: { whenUnanswered: "suspend" } });
    const first = session.query("note a");
    const events = [];
    for (;;) {
      const next = await first.next();
      if (next.done) break;
      events.push(next.value);
      // Queued while the run goes on: the run keeps it when it suspends.
      if (next.value.type === "state" && next.value.state === "call_model") session.steer("also: be brief");
    }
    expect(events.at(-1)?.type).toBe("suspended");
    expect(session.running).toBe(false);
    expect(session.pending).toHaveLength(1);
    expect(session.queued).toEqual({ steering: [], followUp: [] });
    // Queued while suspended: handed to the resumed run after the one it kept.
    session.followUp("then summarise");
    await expect(session.query("something else").next()).rejects.toMatchObject({ code: "SESSION_BUSY" });
    expect(session.queued.followUp).toHaveLength(1);
    const callId = session.pending![0].callId;
    const { events: resumed, result } = await collect(session.resume({ [callId]: "allow" }, { answeredBy: "test" }));
    expect(result).toMatchObject({ status: "completed", reason: "final_answer" });
    expect(runs).toBe(1);
    expect(session.pending).toBeUndefined();
    const entered = resumed.filter((e) => e.type === "user_message").map((e) => (e as { message: { content: string } }).message.content);
    expect(entered).toEqual(["also: be brief", "then summarise"]);
    expect(session.queued).toEqual({ steering: [], followUp: [] });
  });

  it("a refused resume leaves the queued messages with the session", async () => {
    const session = createSession({ model: scriptedModel([{ text: "hi" }]), cwd });
    session.followUp("later");
    await expect(session.resume({}).next()).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
    expect(session.queued.followUp).toEqual([{ role: "user", content: "later" }]);
  });
});
