import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { openaiModel, scriptedModel } from "../../src/index.js";
import { replies, startOpenAIServer } from "../support/openai-server.js";
import type { TraceLine } from "../../src/record/format.js";
import type { SessionTimeline } from "../../src/debug/timeline.js";
import type { SessionSummary } from "../../src/debug/session.js";
import { removeDir, tempDir } from "../support/engine.js";
import { echo, readLines, record, stateOf, traceCli, writeLines, writeNote } from "./helpers.js";

let cwd: string;
let first: string;
let second: string;
let file: string;

beforeEach(async () => {
  cwd = tempDir();
  const a = await record(cwd, "echo the word alpha please", {
    model: scriptedModel([{ text: "Echoing.", toolCalls: [{ name: "echo", input: { text: "alpha" } }], usage: { input: 11, output: 3 } }, { text: "alpha", usage: { input: 20, output: 1 } }]),
    tools: [echo, writeNote],
    permissions: { onAsk: () => "allow" },
  });
  const b = await record(cwd, "write a note", {
    model: scriptedModel([{ toolCalls: [{ name: "write_note", input: { note: "n" } }] }, { text: "noted" }]),
    tools: [echo, writeNote],
    permissions: { onAsk: () => "allow" },
  });
  first = a.sessionId;
  second = b.sessionId;
  file = a.file;
});
afterEach(() => removeDir(cwd));

describe("statecraft trace list", () => {
  it("one line per session with id, start, stop reason, turns, tool calls, tokens, duration and the request", async () => {
    const out = await traceCli(cwd, ["trace", "list"]);
    expect(out.code).toBe(0);
    const lines = out.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^session\s+started\s+stop\s+turns\s+tools\s+tokens\s+duration\s+request$/);
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(new RegExp(`^${first}\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\s+final_answer\\s+2\\s+1\\s+35\\s+[\\d.]+ m?s\\s+echo the word alpha please$`));
    expect(lines[2]).toContain(second);
    expect(lines[2]).toContain("write a note");
  });

  it("--json: one object per session and line; a file can be named", async () => {
    const out = await traceCli("/", ["trace", "list", file, "--json"]);
    expect(out.code).toBe(0);
    const summaries = out.stdout.trim().split("\n").map((l) => JSON.parse(l) as SessionSummary);
    expect(summaries.map((s) => [s.sessionId, s.reason, s.turns, s.toolCalls, s.tokens.input + s.tokens.output, s.request])).toEqual([
      [first, "final_answer", 2, 1, 35, "echo the word alpha please"],
      [second, "final_answer", 2, 1, 0, "write a note"],
    ]);
  });

  it("a missing file is a usage error with a clear message", async () => {
    const out = await traceCli(cwd, ["trace", "list", "nope.jsonl"]);
    expect(out.code).toBe(2);
    expect(out.stderr).toBe(`statecraft: trace file ${join(cwd, "nope.jsonl")} does not exist; runs write one to <cwd>/.agent/trace.jsonl unless told otherwise\n`);
  });
});

describe("statecraft trace show", () => {
  it("the last session by default, as a timeline with decisions, results, time and tokens", async () => {
    const out = await traceCli(cwd, ["trace", "show"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(`session ${second}`);
    expect(out.stdout).toMatch(/seq\s+time\s+state\s+turn\s+what happened/);
    expect(out.stdout).toMatch(/\n0\s+\+0\.000s\s+build_context\s+0\s+request: "write a note"/);
    expect(out.stdout).toContain("write_note: allow by human");
    expect(out.stdout).toContain('result write_note in');
    expect(out.stdout).toMatch(/time: .* total: model .*, tools .*, waiting for a human .*, other/);
    expect(out.stdout).toContain("stopped: final_answer");
  });

  it("--session by a prefix of the id; --json gives the timeline as one object", async () => {
    const out = await traceCli(cwd, ["trace", "show", "--session", first.slice(0, 8), "--json"]);
    expect(out.code).toBe(0);
    const timeline = JSON.parse(out.stdout) as SessionTimeline;
    expect(timeline.sessionId).toBe(first);
    const run = timeline.runs[0];
    expect(run.entries.map((e) => e.state)).toEqual(readLines(file).filter((l) => l.sessionId === first).map(stateOf));
    expect(run.entries.find((e) => e.state === "parse_tool_call")?.events).toEqual(['model: "Echoing."', 'model calls echo({"text":"alpha"})', "finish tool_calls, 11 in / 3 out tokens"]);
    expect(run.tokens).toEqual([
      { turn: 1, input: 11, output: 3, cached: 0, reasoning: 0 },
      { turn: 2, input: 20, output: 1, cached: 0, reasoning: 0 },
    ]);
    expect(run.time.totalMs).toBe(run.time.modelMs + run.time.toolsMs + run.time.humanMs + run.time.otherMs);
    expect(run.reason).toBe("final_answer");
  });

  it("--session and --last are one or the other; an unknown session is a usage error", async () => {
    const both = await traceCli(cwd, ["trace", "show", "--session", first, "--last"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/cannot be used with/);
    const unknown = await traceCli(cwd, ["trace", "show", "--session", "zzz"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("no session zzz in");
  });
});

describe("statecraft trace replay", () => {
  it("exit 0 and a line saying identical", async () => {
    const out = await traceCli(cwd, ["trace", "replay", "--session", first]);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(new RegExp(`^identical: session ${first} replayed through the engine \\(\\d+ lines\\)`));
  });

  it("exit 1 and the first divergence with its context for a tampered trace", async () => {
    const lines = readLines(file).filter((l) => l.sessionId === first);
    const parse = lines.find((l) => stateOf(l) === "parse_tool_call") as TraceLine & { details: { response: { toolCalls: Array<{ name: string }> } } };
    parse.details.response.toolCalls[0].name = "ghost";
    const tampered = join(cwd, "tampered.jsonl");
    writeLines(tampered, lines);
    const ask = lines.find((l) => stateOf(l) === "ask_permission")!.seq;
    const out = await traceCli(cwd, ["trace", "replay", tampered]);
    expect(out.code).toBe(1);
    const printed = out.stdout.split("\n");
    expect(printed[0]).toBe(`diverged at seq ${ask}: recorded ask_permission, replayed recover`);
    expect(out.stdout).toContain(`  recorded seq ${ask} ask_permission`);
    expect(out.stdout).toContain(`  replayed seq ${ask} recover`);
  });

  it("no such trace file or session is exit 2, as for every trace command, never a crash", async () => {
    writeFileSync(join(cwd, "junk.jsonl"), "not a trace\n{}\n");
    const junk = await traceCli(cwd, ["trace", "replay", "junk.jsonl"]);
    expect(junk.code).toBe(2);
    expect(junk.stderr).toContain("holds no sessions");
    const missing = await traceCli(cwd, ["trace", "replay", "missing.jsonl"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("does not exist");
    const json = await traceCli(cwd, ["trace", "replay", "--session", first, "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ identical: true, sessionId: first, runs: 1 });
  });

  it.each([
    ["show", []],
    ["replay", []],
    ["script", []],
    ["fork", ["--at", "1", "--model", "script:none.json"]],
  ])("trace %s --session zzzz (no such session) exits 2 naming it", async (command, more) => {
    const out = await traceCli(cwd, ["trace", command, "--session", "zzzz", ...more]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("no session zzzz in");
    expect(out.stdout).toBe("");
  });

  it("a recorded state the engine does not have: the divergence names it as recorded, the reason says why", async () => {
    const lines = readLines(file).filter((l) => l.sessionId === first);
    const at = lines.find((l) => stateOf(l) === "append_tool_result")!.seq;
    (lines[at] as { state: string }).state = "no_such_state";
    writeLines(join(cwd, "unknown-state.jsonl"), lines);
    const out = await traceCli(cwd, ["trace", "replay", "unknown-state.jsonl"]);
    expect(out.code).toBe(1);
    const [message, reason] = out.stdout.split("\n");
    expect(message).toBe(`diverged at seq ${at}: recorded no_such_state, replayed append_tool_result`);
    expect(reason).toMatch(/^ {2}the trace can't be read as a run: unknown state "no_such_state" \(known: build_context, /);
  });
});

describe("statecraft trace fork", () => {
  it("continues a session from a seq as a new session in the same trace; the exit code is run's", async () => {
    const script = join(cwd, "fork-model.json");
    writeFileSync(script, JSON.stringify([{ text: "A different ending." }]));
    const at = readLines(file).filter((l) => l.sessionId === first).find((l) => stateOf(l) === "append_tool_result")!.seq;
    const out = await traceCli(cwd, ["trace", "fork", "--session", first, "--at", String(at), "--model", `script:${script}`, "--no-color"]);
    expect(out.stderr).toBe("");
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("A different ending.");
    const forkId = /new session ([0-9a-f-]{36})/.exec(out.stdout)?.[1];
    expect(forkId).toBeDefined();
    const forked = readLines(file).filter((l) => l.sessionId === forkId);
    expect(forked.length).toBeGreaterThan(2);
    expect(forked.every((l) => l.parentSession === first)).toBe(true);
    expect((forked[0] as { forkedAt?: unknown }).forkedAt).toEqual({ sessionId: first, seq: at });
    expect(out.stdout).toContain(`fork: session ${forkId} (parent ${first}, forked at seq ${at}); trace: ${file}`);
  });

  it("goes on with the recorded model unless --model names another (the server from OPENAI_BASE_URL, as for run)", async () => {
    const api = await startOpenAIServer();
    try {
      api.enqueue(replies.text("First answer."), replies.text("Forked answer."), replies.text("Other answer."));
      const recorded = await record(cwd, "say something", { model: openaiModel({ model: "recorded-model", baseURL: api.baseURL, apiKey: "sk-test" }) });
      const at = readLines(file).filter((l) => l.sessionId === recorded.sessionId).find((l) => stateOf(l) === "build_context")!.seq;
      // STATECRAFT_MODEL is a default like the recorded model; the recorded one is the fork's.
      const env = { OPENAI_BASE_URL: api.baseURL, OPENAI_API_KEY: "sk-test", STATECRAFT_MODEL: "env-model", XDG_CONFIG_HOME: join(cwd, "no-user-config") };
      const out = await traceCli(cwd, ["trace", "fork", "--session", recorded.sessionId, "--at", String(at), "--no-color"], env);
      expect(out.stderr).toBe("");
      expect(out.code).toBe(0);
      expect(out.stdout).toContain("Forked answer.");
      expect(out.stdout).toContain(`model recorded-model at ${api.baseURL} (the recorded one; --model for another)`);
      expect(api.chatRequests.map((r) => r.body.model)).toEqual(["recorded-model", "recorded-model"]);
      const other = await traceCli(cwd, ["trace", "fork", "--session", recorded.sessionId, "--at", String(at), "--model", "other-model", "--no-color"], env);
      expect(other.code).toBe(0);
      expect(other.stdout).not.toContain("the recorded one");
      expect(api.chatRequests.map((r) => r.body.model)).toEqual(["recorded-model", "recorded-model", "other-model"]);
    } finally {
      await api.close();
    }
  });

  it("a scripted model is not asked for again: the fork's model is chosen as run chooses one", async () => {
    const at = readLines(file).filter((l) => l.sessionId === first).find((l) => stateOf(l) === "build_context")!.seq;
    const out = await traceCli(cwd, ["trace", "fork", "--session", first, "--at", String(at)], { XDG_CONFIG_HOME: join(cwd, "no-user-config") });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("STATECRAFT_MODEL");
  });

  it("run options apply to the fork: a lower turn limit stops it with run's exit code 3", async () => {
    const script = join(cwd, "loop.json");
    writeFileSync(script, JSON.stringify([{ toolCalls: [{ name: "read_file", input: { path: "x" } }] }, { text: "never" }]));
    const out = await traceCli(cwd, ["trace", "fork", file, "--session", first, "--at", "1", "--model", `script:${script}`, "--max-turns", "1", "--json"]);
    expect(out.code).toBe(3);
    const events = out.stdout.trim().split("\n").map((l) => JSON.parse(l) as { type: string; reason?: string });
    expect(events.at(-1)).toMatchObject({ type: "turn_end", reason: "max_turns" });
  });

  it("--session and --at are required; a seq not in the session is a usage error", async () => {
    const missing = await traceCli(cwd, ["trace", "fork", "--session", first]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/required option '--at <seq>' not specified/);
    const bad = await traceCli(cwd, ["trace", "fork", "--session", first, "--at", "x1"]);
    expect(bad.code).toBe(2);
    const script = join(cwd, "m.json");
    writeFileSync(script, "[]");
    const far = await traceCli(cwd, ["trace", "fork", "--session", first, "--at", "999", "--model", `script:${script}`]);
    expect(far.code).toBe(2);
    expect(far.stderr).toContain("seq 999 is not in session");
  });
});

describe("statecraft trace script", () => {
  it("prints the session's model outputs as a scripted-model file", async () => {
    const out = await traceCli(cwd, ["trace", "script", "--session", first]);
    expect(out.code).toBe(0);
    const script = JSON.parse(out.stdout) as { session: string; request: string; steps: unknown[] };
    expect(script).toMatchObject({
      session: first,
      request: "echo the word alpha please",
      steps: [{ text: "Echoing.", toolCalls: [{ name: "echo", input: { text: "alpha" } }], usage: { input: 11, output: 3 } }, { text: "alpha", usage: { input: 20, output: 1 } }],
    });
  });

  it("the last session by default, as show and replay; --last says so; --session and --last are one or the other", async () => {
    const last = await traceCli(cwd, ["trace", "script"]);
    expect(last.code).toBe(0);
    expect(JSON.parse(last.stdout)).toMatchObject({ session: second, request: "write a note" });
    const named = await traceCli(cwd, ["trace", "script", "--last"]);
    expect(named.stdout).toBe(last.stdout);
    const both = await traceCli(cwd, ["trace", "script", "--session", first, "--last"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/option '--last' cannot be used with option '--session <id>'/);
  });
});
