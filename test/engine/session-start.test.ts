import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSession, fileRunStore, scriptedModel, type Message, type RunStore } from "../../src/index.js";
import { collect, removeDir, tempDir } from "../support/engine.js";

let cwd: string;
beforeEach(() => {
  cwd = tempDir();
});
afterEach(() => removeDir(cwd));

const contents = (messages: readonly Message[]) => messages.map((m) => `${m.role}:${m.content}`);

/** The file store, whose lock waits until `open()` is called: a run start that waits on its store (a database's does). */
function gatedStore(): { store: RunStore; open(): void; asked: Promise<void> } {
  const files = fileRunStore(cwd);
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let asked!: () => void;
  const wasAsked = new Promise<void>((resolve) => (asked = resolve));
  return {
    store: {
      ...files,
      async lock(sessionId) {
        asked();
        await gate;
        return files.lock!(sessionId);
      },
    },
    open,
    asked: wasAsked,
  };
}

describe("a session whose run is still starting", () => {
  it("is running: a second query is refused, and a message steered meanwhile reaches the starting run", async () => {
    const { store, open, asked } = gatedStore();
    const model = scriptedModel([{ text: "first" }, { text: "second" }]);
    const session = createSession({ model, cwd, runStore: store });
    const first = collect(session.query("one"));
    await asked;
    expect(session.running).toBe(true);
    await expect(session.query("two").next()).rejects.toMatchObject({ code: "SESSION_BUSY" });
    session.steer("and this");
    open();
    const { result } = await first;
    expect(result.text).toBe("first");
    expect(contents(model.requests[0]!.messages)).toEqual(["user:one", "user:and this"]);
    expect(session.queued).toEqual({ steering: [], followUp: [] });
    expect(session.running).toBe(false);
  });

  it("that fails before its engine starts gives the session back, with what was queued for it", async () => {
    const files = fileRunStore(cwd);
    // A suspended run stored for the session (in its own workspace, under its own id: a stored run is bound to both):
    // a new query is refused once the store has been read.
    const sessionId = await suspendRunIn(cwd);
    expect((await files.load(sessionId))?.status).toBe("suspended");
    const session = createSession({ model: scriptedModel([{ text: "later" }]), cwd, runStore: files, sessionId });
    session.steer("queued before");
    await expect(session.query("one").next()).rejects.toMatchObject({ code: "SESSION_BUSY" });
    expect(session.running).toBe(false);
    expect(session.queued.steering.map((m) => m.content)).toEqual(["queued before"]);
  });
});

/** Runs a query in `cwd` that suspends on a permission question; its session id. */
async function suspendRunIn(cwd: string): Promise<string> {
  const { defineTool, query } = await import("../../src/index.js");
  const note = defineTool({ name: "write_note", description: "Writes.", risk: "write", inputSchema: { type: "object" }, execute: () => "ok" });
  const { result } = await collect(query("go", { model: scriptedModel([{ toolCalls: [{ name: "write_note", input: {} }] }]), tools: [note], cwd, permissions: { onAsk: () => "suspend" } }));
  expect(result.status).toBe("suspended");
  return result.sessionId;
}
