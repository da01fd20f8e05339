import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSession, defineTool, query, resume, scriptedModel, type AgentError } from "../../src/index.js";

let cwd: string;
beforeEach(() => {
  cwd = mkdtempSync(join(tmpdir(), "statecraft-result-"));
});
afterEach(() => rmSync(cwd, { recursive: true, force: true }));

const write = defineTool({
  name: "write",
  description: "Writes.",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  risk: "write",
  execute: ({ text }) => `wrote ${text}`,
});

describe("QueryRun.result: the RunResult that for await drops", () => {
  it("resolves with the generator's return value once the events were read", async () => {
    const run = query("hi", { model: scriptedModel([{ text: "Hello." }]), cwd });
    let returned: unknown;
    for (;;) {
      const next = await run.next();
      if (next.done) {
        returned = next.value;
        break;
      }
    }
    const result = await run.result;
    expect(result).toBe(returned);
    expect(result).toMatchObject({ status: "completed", reason: "final_answer", text: "Hello.", sessionId: run.sessionId });
  });

  it("resolves after for await, and after a break at turn_end", async () => {
    const run = query("hi", { model: scriptedModel([{ text: "One." }]), cwd });
    for await (const event of run) if (event.type === "turn_end") break;
    expect(await run.result).toMatchObject({ status: "completed", text: "One." });
  });

  it("rejects with USER_ABORT when the loop stops before the last event", async () => {
    const run = query("hi", { model: scriptedModel([{ text: "Never read." }]), cwd });
    for await (const event of run) if (event.type === "state") break;
    await expect(run.result).rejects.toMatchObject({ code: "USER_ABORT", message: expect.stringContaining("stopped before its last event") });
  });

  it("rejects as the run does: a busy session's second query", async () => {
    const session = createSession({ model: scriptedModel([{ text: "a" }, { text: "b" }]), cwd });
    const first = session.query("one");
    await first.next();
    const second = session.query("two");
    await expect(second.next()).rejects.toMatchObject({ code: "SESSION_BUSY" });
    await expect(second.result).rejects.toMatchObject({ code: "SESSION_BUSY" });
    for await (const _ of first);
    expect((await first.result).status).toBe("completed");
  });

  it("a run nobody reads the result of does not leave an unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const run = query("hi", { model: scriptedModel([{ text: "x" }]), cwd });
      for await (const _ of run) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("is the suspended result for a suspended run, and resume()'s result is the resumed run's", async () => {
    const model = scriptedModel([{ toolCalls: [{ name: "write", input: { text: "x" } }] }, { text: "Written." }]);
    const run = query("write", { model, cwd, tools: [write], permissions: { whenUnanswered: "suspend" } });
    for await (const _ of run);
    const suspended = await run.result;
    expect(suspended.status).toBe("suspended");
    if (suspended.status !== "suspended") return;
    const resumed = resume(run.sessionId, { model, cwd, tools: [write], answers: { [suspended.pending[0].callId]: "allow" } });
    for await (const event of resumed) if (event.type === "turn_end") break;
    expect(await resumed.result).toMatchObject({ status: "completed", reason: "final_answer", text: "Written." });
  });

  it("resume() of a session with nothing suspended rejects its result with RUN_NOT_FOUND", async () => {
    const run = resume("no-such-session", { model: scriptedModel([]), cwd });
    await expect(run.next()).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
    const error = (await run.result.catch((e: unknown) => e)) as AgentError;
    expect(error.code).toBe("RUN_NOT_FOUND");
  });
});
