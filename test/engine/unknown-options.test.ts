import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AgentError, createSession, query, resume, scriptedModel } from "../../src/index.js";
import { nearestName } from "../../src/util/nearest-name.js";

let cwd: string;
beforeEach(() => {
  cwd = mkdtempSync(join(tmpdir(), "statecraft-options-"));
});
afterEach(() => rmSync(cwd, { recursive: true, force: true }));

const model = scriptedModel([{ text: "ok" }]);

/** What a call throws at once, or undefined. */
function thrown(run: () => unknown): AgentError | undefined {
  try {
    run();
  } catch (error) {
    return error as AgentError;
  }
  return undefined;
}

describe("unknown option names are refused, naming the nearest known one", () => {
  it.each([
    ["maxturns", "maxTurns"],
    ["maxTurn", "maxTurns"],
    ["max_turns", "maxTurns"],
    ["timeout", "timeoutMs"],
    ["sytemPrompt", "systemPrompt"],
    ["beforeToolcall", "beforeToolCall"],
  ])("query({ %s }) throws INVALID_OPTIONS: did you mean %s?", (name, meant) => {
    const error = thrown(() => query("hi", { model, cwd, [name]: 3 } as never));
    expect(error).toBeInstanceOf(AgentError);
    expect(error!.code).toBe("INVALID_OPTIONS");
    expect(error!.message).toBe(`options.${name} is not an option of query(); did you mean ${meant}?`);
  });

  it("a name close to none lists the options", () => {
    const error = thrown(() => query("hi", { model, cwd, colour: "blue" } as never));
    expect(error!.code).toBe("INVALID_OPTIONS");
    expect(error!.message).toMatch(/^options\.colour is not an option of query\(\); the options are model, tools, maxTurns, .*onModelError, output, outputRetries$/);
  });

  it("permissions' own names are checked too", () => {
    const error = thrown(() => query("hi", { model, cwd, permissions: { alow: ["bash"] } } as never));
    expect(error!.message).toBe("options.permissions.alow is not an option of query(); did you mean allow?");
  });

  it("createSession() knows its queue modes and refuses the rest", () => {
    expect(thrown(() => createSession({ model, cwd, steeringMode: "all", followUpMode: "all" }))).toBeUndefined();
    const error = thrown(() => createSession({ model, cwd, steeringMod: "all" } as never));
    expect(error!.code).toBe("INVALID_OPTIONS");
    expect(error!.message).toBe("options.steeringMod is not an option of createSession(); did you mean steeringMode?");
    // query() has no queues.
    expect(thrown(() => query("hi", { model, cwd, steeringMode: "all" } as never))!.message).toContain("options.steeringMode is not an option of query()");
  });

  it("a session's queries and resume pass its options on without complaint", async () => {
    const session = createSession({ model: scriptedModel([{ text: "a" }]), cwd, steeringMode: "all", traceFile: false });
    const events = [];
    for await (const event of session.query("one")) events.push(event.type);
    expect(events.at(-1)).toBe("turn_end");
    // Nothing is suspended: refused for that reason, not for the session's options.
    await expect(session.resume({}).next()).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
  });

  it("resume() refuses an unknown option at its first next(), and says where the session id goes", async () => {
    await expect(resume("s1", { model, cwd, answer: {} } as never).next()).rejects.toMatchObject({
      code: "INVALID_OPTIONS",
      message: "options.answer is not an option of resume(); did you mean answers?",
    });
    await expect(resume("s1", { model, cwd, sessionId: "s1" } as never).next()).rejects.toMatchObject({
      code: "INVALID_OPTIONS",
      message: expect.stringContaining("options.sessionId is not an option of resume(): the session to resume is resume()'s first argument"),
    });
  });

  it("nearestName keeps to likely typos", () => {
    expect(nearestName("MAXTURNS", ["maxTurns", "maxToolCalls"])).toBe("maxTurns");
    expect(nearestName("maxToolCall", ["maxTurns", "maxToolCalls"])).toBe("maxToolCalls");
    expect(nearestName("xyz", ["maxTurns", "cwd"])).toBeUndefined();
  });
});
