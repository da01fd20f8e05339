import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import { scriptedModel } from "../../src/index.js";
import type { TraceLine } from "../../src/record/format.js";
import { loadSession } from "../../src/debug/session.js";
import { replay } from "../../src/debug/replay.js";
import { removeDir, tempDir } from "../support/engine.js";
import { echo, readLines, record, stateOf, writeLines, writeNote } from "./helpers.js";

let cwd: string;
let lines: TraceLine[];
let sessionId: string;
let tampered: string;

type Details = Record<string, unknown> & { response?: { toolCalls: Array<{ name: string; arguments: string }> }; calls?: Array<{ name: string; input: unknown }> };
const details = (line: TraceLine) => (line as unknown as { details: Details }).details;
const seqOf = (state: string, nth = 0) => lines.filter((l) => stateOf(l) === state)[nth].seq;

beforeEach(async () => {
  cwd = tempDir();
  const recorded = await record(cwd, "echo something", {
    model: scriptedModel([{ text: "Echoing.", toolCalls: [{ name: "echo", input: { text: "a" } }] }, { text: "Echoed a." }]),
    tools: [echo, writeNote],
  });
  sessionId = recorded.sessionId;
  lines = readLines(recorded.file);
  tampered = join(cwd, "tampered.jsonl");
  expect(lines.map(stateOf)).toEqual([
    "build_context",
    "call_model",
    "stream_text",
    "parse_tool_call",
    "validate_tool",
    "ask_permission",
    "execute_tool",
    "append_tool_result",
    "build_context",
    "call_model",
    "stream_text",
    "done",
  ]);
});
afterEach(() => removeDir(cwd));

async function replayTampered(edit: (lines: TraceLine[]) => TraceLine[]) {
  const copy = structuredClone(lines);
  writeLines(tampered, edit(copy));
  const session = await loadSession(tampered, sessionId, { onWarning: () => {} });
  return replay(session);
}

describe("a tampered recording diverges at the right seq", () => {
  it("the untouched copy replays identical", async () => {
    const result = await replayTampered((l) => l);
    expect(result.identical).toBe(true);
  });

  it("a model output changed to call an unknown tool: the engine recovers where the recording asked for permission", async () => {
    const result = await replayTampered((l) => {
      details(l[seqOf("parse_tool_call")]).response!.toolCalls[0].name = "ghost";
      return l;
    });
    expect(result.identical).toBe(false);
    const d = result.divergence!;
    const at = seqOf("ask_permission");
    expect(d.seq).toBe(at);
    expect(d.message).toBe(`diverged at seq ${at}: recorded ask_permission, replayed recover`);
    // The context shows both sides and that the calls already differed one line earlier.
    expect(d.context.join("\n")).toContain(`earlier, at seq ${seqOf("validate_tool")}`);
    expect(d.context.join("\n")).toContain("ghost");
    expect(d.context.some((c) => c.startsWith(`recorded seq ${at} ask_permission`))).toBe(true);
    expect(d.context.some((c) => c.startsWith(`replayed seq ${at} recover`))).toBe(true);
  });

  it("a final answer changed to call an unknown tool: the replay goes on where the recording stopped", async () => {
    const result = await replayTampered((l) => {
      details(l[seqOf("done")]).response!.toolCalls.push({ name: "ghost", arguments: "{}" });
      return l;
    });
    const at = seqOf("done");
    expect(result.divergence?.message).toBe(`diverged at seq ${at}: recorded done, replayed parse_tool_call`);
  });

  it("a dropped line", async () => {
    const at = seqOf("execute_tool");
    const result = await replayTampered((l) => l.filter((line) => line.seq !== at));
    expect(result.divergence?.seq).toBe(at);
    expect(result.divergence?.message).toBe(`diverged at seq ${at}: recorded (missing line), replayed execute_tool`);
    expect(result.divergence?.reason).toContain(`the line with seq ${at} is missing`);
  });

  it("a dropped line that carried the model's output", async () => {
    const at = seqOf("parse_tool_call");
    const result = await replayTampered((l) => l.filter((line) => line.seq !== at));
    expect(result.divergence?.message).toBe(`diverged at seq ${at}: recorded (missing line), replayed parse_tool_call`);
  });

  it("two lines swapped", async () => {
    const a = seqOf("validate_tool");
    const result = await replayTampered((l) => {
      [l[a], l[a + 1]] = [l[a + 1], l[a]];
      return l;
    });
    expect(result.divergence?.seq).toBe(a);
    expect(result.divergence?.message).toBe(`diverged at seq ${a}: recorded ask_permission, replayed validate_tool`);
    expect(result.divergence?.reason).toContain("out of order");
  });

  it("two lines swapped with their seqs renumbered", async () => {
    const a = seqOf("ask_permission");
    const result = await replayTampered((l) => {
      [l[a], l[a + 1]] = [l[a + 1], l[a]];
      l[a].seq = a;
      l[a + 1].seq = a + 1;
      return l;
    });
    expect(result.divergence?.message).toBe(`diverged at seq ${a}: recorded execute_tool, replayed ask_permission`);
  });

  it("an unknown state", async () => {
    const at = seqOf("append_tool_result");
    const result = await replayTampered((l) => {
      (l[at] as { state: string }).state = "dance";
      return l;
    });
    expect(result.divergence?.message).toBe(`diverged at seq ${at}: recorded dance, replayed append_tool_result`);
    expect(result.divergence?.reason).toMatch(/^the trace can't be read as a run: unknown state "dance" \(known: build_context, /);
  });

  it("no build_context line", async () => {
    const result = await replayTampered((l) => l.slice(1));
    expect(result.divergence?.seq).toBe(0);
    expect(result.divergence?.replayed).toBe("(not replayed)");
    expect(result.divergence?.reason).toContain("build_context");
  });

  it("the done line lost (a crash before it was written)", async () => {
    const at = seqOf("done");
    const result = await replayTampered((l) => l.slice(0, -1));
    expect(result.divergence?.message).toBe(`diverged at seq ${at}: recorded (end of recording), replayed done`);
  });

  it("a line whose details contradict the model's output: the divergence names what differs", async () => {
    const at = seqOf("validate_tool");
    const result = await replayTampered((l) => {
      details(l[at]).calls![0].input = { text: "b" };
      return l;
    });
    expect(result.divergence?.message).toBe(`diverged at seq ${at}: recorded validate_tool, replayed validate_tool`);
    expect(result.divergence?.reason).toBe('the tool calls differ at item 1: recorded {"call":"call 1.1","name":"echo","input":{"text":"b"}}, replayed {"call":"call 1.1","name":"echo","input":{"text":"a"}}');
  });

  it("a changed stop reason", async () => {
    const at = seqOf("done");
    const result = await replayTampered((l) => {
      details(l[at]).reason = "max_turns";
      return l;
    });
    expect(result.divergence?.seq).toBe(at);
    expect(result.divergence?.reason).toBe('the stop reason differ: recorded "max_turns", replayed "final_answer"');
  });

  it("nonsense details never make replay throw", async () => {
    const result = await replayTampered((l) =>
      l.map((line) => ({ ...line, details: line.seq === 0 ? { input: 42, options: { tools: [{ name: "x y", inputSchema: { type: "nonsense" } }] } } : "garbage" }) as unknown as TraceLine),
    );
    expect(result.identical).toBe(false);
    expect(result.divergence?.message).toMatch(/^diverged at seq \d+: recorded .+, replayed .+$/);
  });
});
