import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defineTool, fileRunStore, query, resume, scriptedModel } from "../../src/index.js";
import { collect, removeDir, tempDir } from "../support/engine.js";
import { runCli } from "../cli/helpers/cli-process.js";

// Hole 3: a signed `.agent/runs/<S>.json` copied into another workspace resumed there, and copied to `<B>.json` it
// resumed as session B, running its approved call twice. A stored run is bound to its session and to the real path of
// its workspace: any copy or rename is RUN_DAMAGED and nothing of it runs.

let root: string;
let w1: string;
let w2: string;
beforeEach(() => {
  root = tempDir();
  w1 = join(root, "w1");
  w2 = join(root, "w2");
  mkdirSync(w1);
  mkdirSync(w2);
});
afterEach(() => removeDir(root));

/** A write tool that counts its runs in a file outside every workspace. */
const counted = () =>
  defineTool({
    name: "write_note",
    description: "Writes a note.",
    inputSchema: { type: "object", properties: { note: { type: "string" } }, required: ["note"] },
    risk: "write",
    execute: (input: { note: string }) => {
      const file = join(root, "runs.txt");
      writeFileSync(file, (existsSync(file) ? readFileSync(file, "utf8") : "") + input.note + "\n");
      return `wrote ${input.note}`;
    },
  });
const ran = () => (existsSync(join(root, "runs.txt")) ? readFileSync(join(root, "runs.txt"), "utf8").split("\n").filter(Boolean).length : 0);

async function suspendIn(cwd: string, sessionId?: string): Promise<{ sessionId: string; callId: string }> {
  const model = scriptedModel([{ toolCalls: [{ name: "write_note", input: { note: "a" } }] }]);
  const { result } = await collect(query("note a", { model, tools: [counted()], cwd, permissions: { whenUnanswered: "suspend" }, ...(sessionId ? { sessionId } : {}) }));
  if (result.status !== "suspended") throw new Error("not suspended");
  return { sessionId: result.sessionId, callId: result.pending[0].callId };
}

const runFile = (cwd: string, sessionId: string) => join(cwd, ".agent", "runs", `${sessionId}.json`);
const resumeIn = (cwd: string, sessionId: string, callId: string) =>
  collect(resume(sessionId, { model: scriptedModel([{ text: "done" }]), tools: [counted()], cwd, answers: { [callId]: "allow" } }));

describe("a stored run resumes only as its own session, in its own workspace", () => {
  it("copies and renames are RUN_DAMAGED and run nothing (several payloads)", async () => {
    const s = await suspendIn(w1);
    const other = await suspendIn(w1, "session-b");
    const attacks: Array<{ name: string; place: () => { cwd: string; sessionId: string } }> = [
      { name: "copied into another workspace", place: () => (mkdirSync(join(w2, ".agent", "runs"), { recursive: true }), cpSync(runFile(w1, s.sessionId), runFile(w2, s.sessionId)), { cwd: w2, sessionId: s.sessionId }) },
      { name: "copied under another session's name", place: () => (cpSync(runFile(w1, s.sessionId), runFile(w1, "session-c")), { cwd: w1, sessionId: "session-c" }) },
      { name: "put over another suspended session", place: () => (cpSync(runFile(w1, s.sessionId), runFile(w1, other.sessionId)), { cwd: w1, sessionId: other.sessionId }) },
      { name: "the whole workspace copied", place: () => (cpSync(w1, join(root, "w3"), { recursive: true }), { cwd: join(root, "w3"), sessionId: s.sessionId }) },
      { name: "copied elsewhere under another name", place: () => (cpSync(runFile(w1, s.sessionId), runFile(w2, "session-d")), { cwd: w2, sessionId: "session-d" }) },
    ];
    const through: string[] = [];
    for (const attack of attacks) {
      const place = attack.place();
      const before = ran();
      let code: string | undefined;
      try {
        await resumeIn(place.cwd, place.sessionId, s.callId);
      } catch (error) {
        code = (error as { code?: string }).code;
      }
      if (code !== "RUN_DAMAGED" || ran() !== before) through.push(attack.name);
      expect(code, attack.name).toBe("RUN_DAMAGED");
    }
    expect(through).toEqual([]);
    expect(ran()).toBe(0);
    // The original still resumes where it was made (the control): its call runs once.
    const { result } = await resumeIn(w1, s.sessionId, s.callId);
    expect(result.status).toBe("completed");
    expect(ran()).toBe(1);
  });

  it("the message names the session and workspace it belongs to", async () => {
    const s = await suspendIn(w1);
    renameSync(runFile(w1, s.sessionId), runFile(w1, "renamed"));
    await expect(fileRunStore(w1).load("renamed")).rejects.toThrow(`it is the run of session ${s.sessionId}, kept under the name of session renamed`);
    mkdirSync(join(w2, ".agent", "runs"), { recursive: true });
    cpSync(runFile(w1, "renamed"), runFile(w2, s.sessionId));
    await expect(fileRunStore(w2).load(s.sessionId)).rejects.toThrow(/it is the run of workspace .*w1, found in workspace .*w2 \(copied\)/);
  });

  it("the same workspace reached through a symbolic link is the same workspace", async () => {
    const s = await suspendIn(w1);
    symlinkSync(w1, join(root, "link"));
    const { result } = await resumeIn(join(root, "link"), s.sessionId, s.callId);
    expect(result.status).toBe("completed");
    expect(ran()).toBe(1);
  });

  it("statecraft resume --allow … -C <other workspace> refuses a copied run, exit code and all", { timeout: 60_000 }, async () => {
    const s = await suspendIn(w1);
    mkdirSync(join(w2, ".agent", "runs"), { recursive: true });
    cpSync(runFile(w1, s.sessionId), runFile(w2, s.sessionId));
    writeFileSync(join(root, "script.json"), JSON.stringify([{ text: "done" }]));
    const result = await runCli(["resume", s.sessionId, "--allow", s.callId, "-C", w2, "--model", `script:${join(root, "script.json")}`], {
      cwd: w2,
      env: { XDG_CONFIG_HOME: join(root, "user-config") },
    });
    expect(result.code, result.stderr).not.toBe(0);
    expect(result.stderr).toMatch(/can't be resumed: it is the run of workspace/);
    expect(ran()).toBe(0);
  });
});
