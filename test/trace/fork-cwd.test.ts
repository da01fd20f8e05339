import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fork, forkStart } from "../../src/debug/fork.js";
import { loadSession } from "../../src/debug/session.js";
import { scriptedModel } from "../../src/models/scripted.js";
import { readFileTool } from "../../src/tools/builtin/index.js";
import { collect } from "../support/engine.js";
import { makeTempDir, removeDir, runCli } from "../cli/helpers/cli-process.js";
import { readLines, stateOf } from "./helpers.js";

// Hole 7: a trace names the folder its run worked in. A trace can come from anywhere; edited to name a victim's
// folder, it must not choose where a fork's tools read and write: a fork acts in the folder it is started in or -C.

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) removeDir(dir);
});

const KEY = "-----BEGIN OPENSSH PRIVATE KEY----- victim-secret-key";
const SECRET_TALK = "the victim's private conversation";

interface Setup {
  root: string;
  /** Where the person runs `trace fork` (the repository the trace came with). */
  here: string;
  /** The folder the edited trace names. */
  victim: string;
  trace: string;
  sessionId: string;
  inBatch: number;
}

function scriptFile(root: string, name: string, steps: unknown[]): string {
  const file = join(root, `${name}.json`);
  writeFileSync(file, JSON.stringify(steps));
  return `script:${file}`;
}

/** A real recorded run in `here`, whose trace is then edited to name `victim` as its folder. */
async function setup(): Promise<Setup> {
  const root = makeTempDir("statecraft-fork-cwd-");
  temps.push(root);
  const here = join(root, "here");
  const victim = join(root, "victim");
  mkdirSync(here);
  mkdirSync(join(victim, ".ssh"), { recursive: true });
  writeFileSync(join(victim, ".ssh", "id_rsa"), KEY);
  const env = { XDG_CONFIG_HOME: join(root, "user-config") };
  const call = { name: "read_file", input: { path: "notes.txt" } };
  writeFileSync(join(here, "notes.txt"), "notes\n");
  const recorded = await runCli(["run", "--model", scriptFile(root, "recorded", [{ toolCalls: [call] }, { text: "done" }]), "go"], { cwd: here, env });
  expect(recorded.code, recorded.stderr + recorded.stdout).toBe(0);
  const trace = join(here, ".agent", "trace.jsonl");
  const text = readFileSync(trace, "utf8");
  expect(text).toContain(JSON.stringify(here));
  writeFileSync(trace, text.split(JSON.stringify(here)).join(JSON.stringify(victim)));
  const lines = readLines(trace);
  const sessionId = lines[0].sessionId as string;
  // The victim's folder holds a transcript of a session of that id: a fork must not take its conversation either.
  mkdirSync(join(victim, ".agent", "sessions"), { recursive: true });
  writeFileSync(
    join(victim, ".agent", "sessions", `${sessionId}.jsonl`),
    `${JSON.stringify({ type: "message", time: new Date().toISOString(), message: { role: "user", content: SECRET_TALK } })}\n`,
  );
  return { root, here, victim, trace, sessionId, inBatch: lines.find((l) => stateOf(l) === "parse_tool_call")!.seq };
}

function forkCli(s: Setup, steps: unknown[], extra: string[] = []) {
  return runCli(["trace", "fork", s.trace, "--session", s.sessionId, "--at", String(s.inBatch), "--model", scriptFile(s.root, "fork", steps), "--no-color", "--json", ...extra], {
    cwd: s.here,
    env: { XDG_CONFIG_HOME: join(s.root, "user-config") },
  });
}

const victimFiles = (s: Setup) => readdirSync(s.victim, { recursive: true }).map(String).sort();

describe("trace fork acts where it is started, never where an edited trace says", { timeout: 120_000 }, () => {
  it("the re-run call and new calls read, write and run in the current folder (several payloads)", async () => {
    const s = await setup();
    const before = victimFiles(s);
    const payloads: Array<{ steps: unknown[]; flags: string[]; landed: () => boolean; leak?: string }> = [
      // The recorded call re-run at a point inside its batch, then a read of the key.
      { steps: [{ toolCalls: [{ name: "read_file", input: { path: ".ssh/id_rsa" } }] }, { text: "ok" }], flags: [], landed: () => false },
      { steps: [{ toolCalls: [{ name: "write_file", input: { path: "pwned.txt", content: "x" } }] }, { text: "ok" }], flags: ["--permission-mode", "acceptEdits"], landed: () => existsSync(join(s.here, "pwned.txt")) },
      { steps: [{ toolCalls: [{ name: "bash", input: { command: "cat .ssh/id_rsa; touch ran.txt" } }] }, { text: "ok" }], flags: ["--allow", "bash"], landed: () => existsSync(join(s.here, "ran.txt")) },
      { steps: [{ toolCalls: [{ name: "list_dir", input: { path: "." } }] }, { text: "ok" }], flags: [], landed: () => false, leak: ".ssh" },
    ];
    const through: string[] = [];
    for (const payload of payloads) {
      const result = await forkCli(s, payload.steps, payload.flags);
      const out = result.stdout + result.stderr;
      if (out.includes(KEY) || out.includes(SECRET_TALK) || (payload.leak !== undefined && out.includes(payload.leak))) through.push(JSON.stringify(payload.steps[0]));
      expect(out).toContain(`cwd ${s.here}`);
      if (payload.flags.length > 0) expect(payload.landed(), out).toBe(true);
    }
    expect(through).toEqual([]);
    expect(victimFiles(s)).toEqual(before);
  });

  it("-C naming the recorded folder is how a fork works there (the control)", async () => {
    const s = await setup();
    const result = await forkCli(s, [{ toolCalls: [{ name: "read_file", input: { path: ".ssh/id_rsa" } }] }, { text: "ok" }], ["-C", s.victim]);
    expect(result.stdout + result.stderr).toContain(KEY);
  });

  it("fork() and forkStart() in the library: the folder given, else process.cwd(), never the trace's", async () => {
    const s = await setup();
    const session = await loadSession(s.trace, s.sessionId);
    const recorded = session.lines.find((l) => stateOf(l) === "append_tool_result")!.seq;
    // The conversation is rebuilt from the trace; the victim's transcript is never looked at.
    expect(JSON.stringify(forkStart(session, recorded, undefined, s.here).messages)).not.toContain(SECRET_TALK);
    const model = scriptedModel([{ toolCalls: [{ name: "read_file", input: { path: ".ssh/id_rsa" } }] }, { text: "done" }]);
    const run = fork(session, { at: recorded, model, tools: [readFileTool()], cwd: s.here, traceFile: false });
    const { events } = await collect(run);
    const result = events.find((e) => e.type === "tool_result");
    expect(result && result.type === "tool_result" ? result.result.content : "").not.toContain(KEY);
    expect(JSON.stringify(model.requests)).not.toContain(SECRET_TALK);
    expect(existsSync(join(s.here, ".agent", "sessions", `${run.sessionId}.jsonl`))).toBe(true);
    expect(existsSync(join(s.victim, ".agent", "sessions", `${run.sessionId}.jsonl`))).toBe(false);
  });
});
