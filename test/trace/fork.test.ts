import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createSession, defineTool, query, scriptedModel, type Message } from "../../src/index.js";
import { fork, forkStart } from "../../src/debug/fork.js";
import { loadTranscript } from "../../src/record/transcript.js";
import { loadSession, splitRuns, type TraceSession } from "../../src/debug/session.js";
import { replay } from "../../src/debug/replay.js";
import { collect, removeDir, tempDir } from "../support/engine.js";
import { echo, readLines, record, stateOf, writeNote } from "./helpers.js";

let cwd: string;
let parent: TraceSession;
let file: string;

/** The parent: go → "Looking." + echo(a) → "echo: a" → "Done." */
beforeEach(async () => {
  cwd = tempDir();
  const recorded = await record(cwd, "go", {
    model: scriptedModel([
      { text: "Looking.", toolCalls: [{ name: "echo", input: { text: "a" } }], usage: { input: 4, output: 2 } },
      { text: "Done.", usage: { input: 8, output: 1 } },
    ]),
    tools: [echo, writeNote],
    systemPrompt: "be brief",
    maxTurns: 5,
  });
  file = recorded.file;
  parent = await loadSession(file, recorded.sessionId);
});
afterEach(() => removeDir(cwd));

const roles = (messages: readonly Message[]) => messages.map((m) => (m.role === "assistant" && m.toolCalls ? "assistant+calls" : m.role));
const seqOf = (state: string, nth = 0) => parent.lines.filter((l) => stateOf(l) === state)[nth].seq;

describe("fork", () => {
  it("every line of a run is a point to fork from: each fork is a valid run that names its parent", async () => {
    // Up to the model's first response the fork asks the model again; from then on the conversation holds the call
    // and its result (inside the batch: the first model call is answered with the recorded response and the batch
    // runs again, live).
    const finalSeq = seqOf("done");
    for (const line of parent.lines) {
      if (line.seq === finalSeq) continue;
      const model = scriptedModel([{ text: `fork answer at ${line.seq}` }]);
      const run = fork(parent, { cwd, at: line.seq, model, tools: [echo, writeNote] });
      const { result } = await collect(run);
      expect(result.reason, `fork at seq ${line.seq}`).toBe("final_answer");
      expect(result.text).toBe(`fork answer at ${line.seq}`);
      const state = stateOf(line);
      const sent = model.requests[0].messages;
      const before = line.seq < seqOf("parse_tool_call");
      expect(roles(sent), `fork at seq ${line.seq} (${state})`).toEqual(before ? ["system", "user"] : ["system", "user", "assistant+calls", "tool"]);
      if (sent.length > 2) {
        expect(sent[2]).toMatchObject({ role: "assistant", content: "Looking.", toolCalls: [{ name: "echo", input: { text: "a" } }] });
        expect(sent[3]).toMatchObject({ role: "tool", name: "echo", content: "echo: a", isError: false });
      }
      const forked = await loadSession(file, run.sessionId);
      expect(forked.lines.every((l) => l.parentSession === parent.sessionId)).toBe(true);
      expect((forked.lines[0] as { forkedAt?: unknown }).forkedAt).toEqual({ sessionId: parent.sessionId, seq: line.seq });
      expect(forked.lines.slice(1).some((l) => "forkedAt" in l)).toBe(false);
      expect(forked.forkedAt).toEqual({ sessionId: parent.sessionId, seq: line.seq });
      expect(forked.parentSession).toBe(parent.sessionId);
      expect(stateOf(forked.lines.at(-1)!)).toBe("done");
      const replayed = await replay(forked);
      expect(replayed.divergence, `replay of the fork at seq ${line.seq}`).toBeUndefined();
    }
  });

  it("a fork inside a tool batch decides and runs that batch again under its own options", async () => {
    const risky = await record(cwd, "write it", {
      model: scriptedModel([{ toolCalls: [{ name: "write_note", input: { note: "n" } }] }, { text: "written" }]),
      tools: [writeNote],
      permissions: { mode: "bypassPermissions" },
    });
    const session = await loadSession(risky.file, risky.sessionId);
    const at = session.lines.find((l) => stateOf(l) === "ask_permission")!.seq;
    const run = fork(session, { cwd, at, model: scriptedModel([{ text: "unused" }]), tools: [writeNote], permissions: { mode: "plan" } });
    const { result } = await collect(run);
    expect(result.reason).toBe("permission_denied");
    expect(result.error?.message).toContain("write_note");
  });

  it("a run stopped by a limit can be forked at its end with a higher limit and goes on", async () => {
    const limited = await record(cwd, "count", {
      model: scriptedModel([{ toolCalls: [{ name: "echo", input: { text: "1" } }] }]),
      tools: [echo],
      maxTurns: 1,
    });
    expect(limited.result.reason).toBe("max_turns");
    const session = await loadSession(limited.file, limited.sessionId);
    const model = scriptedModel([{ text: "finished" }]);
    const { result } = await collect(fork(session, { cwd, at: session.lines.at(-1)!.seq, model, tools: [echo], maxTurns: 3 }));
    expect(result.reason).toBe("final_answer");
    expect(roles(model.requests[0].messages)).toEqual(["user", "assistant+calls", "tool"]);
  });

  it("after a final answer a fork needs a prompt, which becomes the next user message", async () => {
    const at = seqOf("done");
    expect(() => fork(parent, { cwd, at, model: scriptedModel([{ text: "x" }]) })).toThrow(/ended with the model's answer; give a prompt/);
    const model = scriptedModel([{ text: "Again: done." }]);
    const run = fork(parent, { cwd, at, prompt: "and once more?", model });
    const { result } = await collect(run);
    expect(result.reason).toBe("final_answer");
    expect(model.requests[0].messages.map((m) => m.content)).toEqual(["be brief", "go", "Looking.", "echo: a", "Done.", "and once more?"]);
    const first = (await loadSession(file, run.sessionId)).lines[0] as { details: { input: string; options: { maxTurns: number; systemPrompt: string } } };
    expect(first.details.input).toBe("and once more?");
    // Options not given are the recorded run's.
    expect(first.details.options).toMatchObject({ maxTurns: 5, systemPrompt: "be brief" });
  });

  it("a fork can be forked, and continued like any session (its transcript holds what it inherited)", async () => {
    const first = fork(parent, { cwd, at: seqOf("append_tool_result"), model: scriptedModel([{ toolCalls: [{ name: "echo", input: { text: "b" } }] }, { text: "B." }]), tools: [echo] });
    await collect(first);
    const child = await loadSession(file, first.sessionId);
    const at = child.lines.find((l) => stateOf(l) === "append_tool_result")!.seq;
    const model = scriptedModel([{ text: "grandchild" }]);
    const second = fork(child, { cwd, at, model, tools: [echo] });
    await collect(second);
    expect(model.requests[0].messages.map((m) => m.content)).toEqual(["be brief", "go", "Looking.", "echo: a", "", "echo: b"]);
    const grandchild = await loadSession(file, second.sessionId);
    expect(grandchild.forkedAt).toEqual({ sessionId: first.sessionId, seq: at });
    expect((await replay(grandchild)).divergence).toBeUndefined();
    // The conversation at a point of the grandchild still starts with the first request.
    expect(forkStart(grandchild, grandchild.lines.at(-1)!.seq, undefined, cwd).messages.map((m) => m.content)).toEqual([
      "be brief",
      "go",
      "Looking.",
      "echo: a",
      "",
      "echo: b",
      "grandchild",
    ]);
    // Continued with query(): the transcript of the fork has the whole conversation.
    const next = scriptedModel([{ text: "still here" }]);
    await collect(query("more", { model: next, cwd, sessionId: second.sessionId, systemPrompt: "be brief" }));
    expect(next.requests[0].messages.map((m) => m.content)).toEqual(["be brief", "go", "Looking.", "echo: a", "", "echo: b", "grandchild", "more"]);
  });

  it("the rebuilt conversation has the messages a session queued and the notes of a continued model error", async () => {
    let session!: ReturnType<typeof createSession>;
    const tool = defineTool({
      name: "steerer",
      description: "Queues a message.",
      inputSchema: { type: "object" },
      risk: "read",
      execute: () => {
        session.steer("also this");
        return "queued";
      },
    });
    let failures = 0;
    session = createSession({
      model: scriptedModel([{ toolCalls: [{ name: "steerer", input: {} }] }, { text: "Half", error: { status: 500, message: "flaky" } }, { text: "All done." }]),
      tools: [tool],
      cwd,
      onModelError: () => (++failures === 1 ? { action: "continue" } : undefined),
    });
    const run = session.query("start");
    await collect(run);
    const recorded = await loadSession(file, run.sessionId);
    const lastCall = recorded.lines.filter((l) => stateOf(l) === "call_model").at(-1)!;
    const model = scriptedModel([{ text: "forked" }]);
    await collect(fork(recorded, { cwd, at: lastCall.seq, model, tools: [tool] }));
    expect(model.requests[0].messages.map((m) => `${m.role}:${m.content}`)).toEqual([
      "user:start",
      "assistant:",
      "tool:queued",
      "user:also this",
      "assistant:(text streamed before the request failed; not in the trace)",
      "user:[The previous model request failed: model request failed (500): flaky. Continue from where you were.]",
    ]);
    expect((lastCall as { details: { messages: number } }).details.messages).toBe(6);
  });

  it("at every model call of a varied run, the rebuilt conversation is exactly what the engine sent the model", async () => {
    const model = scriptedModel([
      {
        thinking: "Plan.",
        text: "Trying things.",
        toolCalls: [
          { name: "echo", input: { text: "a" } },
          { name: "ghost", input: {} },
          { name: "echo", rawArguments: "{bad json" },
          { name: "write_note", input: { note: "n" } },
        ],
      },
      { text: "Cut", toolCalls: [{ name: "echo", input: { text: "b" } }], finishReason: "length" },
      { toolCalls: [{ name: "echo", input: { text: "c" }, id: "srv-1" }] },
      { text: "Done." },
    ]);
    const recorded = await record(cwd, "vary", { model, tools: [echo, writeNote], systemPrompt: "sys", permissions: { onAsk: () => "allow" } });
    expect(recorded.result.reason).toBe("final_answer");
    // A second run of the session (its history from the first), whose first call a person's deny ends.
    const next = scriptedModel([{ toolCalls: [{ name: "echo", input: { text: "d" } }, { name: "write_note", input: { note: "m" } }] }]);
    const second = await record(cwd, "go on", { model: next, tools: [echo, writeNote], sessionId: recorded.sessionId, systemPrompt: "sys", permissions: { onAsk: () => "deny" } });
    expect(second.result.reason).toBe("permission_denied");
    const session = await loadSession(recorded.file, recorded.sessionId);
    const runs = splitRuns(session.lines);
    const requests = [model.requests, next.requests];
    runs.forEach((lines, r) => {
      const calls = lines.filter((l) => stateOf(l) === "call_model");
      expect(calls).toHaveLength(requests[r].length);
      calls.forEach((line, i) => expect(forkStart(session, line.seq, r + 1).messages, `run ${r + 1}, call ${i + 1}`).toEqual(requests[r][i].messages));
    });
    // At the end of the second run: the whole conversation as the transcript has it, the denied batch closed.
    const end = forkStart(session, runs[1].at(-1)!.seq, 2).messages;
    expect(end.filter((m) => m.role !== "system")).toEqual(loadTranscript(cwd, recorded.sessionId).messages);
    expect(end.slice(-2).map((m) => m.content)).toEqual([
      "Not run: another call in this response was denied.",
      "Permission denied: write_note was denied when asked. write_note was not run.",
    ]);
  });

  it("after a compaction the rebuilt conversation is the summary and the recent turns, as the engine had it", async () => {
    const bulky = defineTool({ ...echo, name: "bulky", execute: () => "x".repeat(2000) });
    const model = scriptedModel([
      { toolCalls: [{ name: "bulky", input: { text: "1" } }] },
      { toolCalls: [{ name: "bulky", input: { text: "2" } }] },
      { toolCalls: [{ name: "bulky", input: { text: "3" } }] },
      { text: "done" },
    ]);
    const recorded = await record(cwd, "start", {
      model,
      tools: [bulky],
      contextWindow: 1500,
      reserveTokens: 200,
      keepRecentTokens: 600,
      summarize: (messages) => `summary of ${messages.length} messages`,
    });
    const session = await loadSession(recorded.file, recorded.sessionId);
    const calls = session.lines.filter((l) => stateOf(l) === "call_model");
    expect(calls.some((l) => (l as { details: { compaction?: unknown } }).details.compaction)).toBe(true);
    // At every model call, the rebuilt conversation is exactly what the engine sent.
    calls.forEach((line, i) => {
      const rebuilt = forkStart(session, line.seq).messages;
      expect(rebuilt, `model call ${i + 1}`).toEqual(model.requests[i].messages);
    });
  });

  it("writes to the session's trace file, or where traceFile says", async () => {
    const elsewhere = join(cwd, "forks.jsonl");
    const run = fork(parent, { cwd, at: 1, model: scriptedModel([{ text: "x" }]), traceFile: elsewhere });
    await collect(run);
    expect(readLines(elsewhere).every((l) => l.sessionId === run.sessionId)).toBe(true);
    expect(readLines(file).some((l) => l.sessionId === run.sessionId)).toBe(false);
  });

  it("points that are not in the session are refused, saying what is", () => {
    const model = scriptedModel([]);
    const last = parent.lines.at(-1)!.seq;
    expect(() => fork(parent, { cwd, at: last + 1, model })).toThrow(`seq ${last + 1} is not in session ${parent.sessionId} (its lines are seq 0 to ${last})`);
    expect(() => fork(parent, { cwd, at: -1, model })).toThrow(/at must be the seq of a line/);
    expect(() => fork(parent, { cwd, at: 1, run: 2, model })).toThrow(/run must be a whole number from 1 to 1/);
    expect(() => fork(parent, { cwd, at: 1, model, sessionId: parent.sessionId })).toThrow(/already exists/);
    expect(() => fork(parent, { cwd, at: 1 } as never)).toThrow(/options.model must be a Model/);
  });

  it("a session of several runs forks in its last run unless told which", async () => {
    await record(cwd, "first", { model: scriptedModel([{ text: "one" }]), sessionId: "chat" });
    await record(cwd, "second", { model: scriptedModel([{ text: "two" }]), sessionId: "chat" });
    const chat = await loadSession(file, "chat");
    expect(forkStart(chat, 1, undefined, cwd).messages.map((m) => m.content)).toEqual(["first", "one", "second"]);
    expect(forkStart(chat, 1, 1).messages.map((m) => m.content)).toEqual(["first"]);
    const run = fork(chat, { cwd, at: 1, run: 1, model: scriptedModel([{ text: "other" }]) });
    await collect(run);
    expect((await loadSession(file, run.sessionId)).forkedAt).toEqual({ sessionId: "chat", seq: 1, run: 1 });
    const transcript = readLines(join(cwd, ".agent", "sessions", `${run.sessionId}.jsonl`)) as unknown as Array<{ message: Message }>;
    expect(transcript.map((e) => e.message.content)).toEqual(["first", "other"]);
    expect(existsSync(join(cwd, ".agent", "sessions", "chat.jsonl"))).toBe(true);
  });
});
