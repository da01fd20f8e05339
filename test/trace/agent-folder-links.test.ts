import fs from "node:fs";
import path from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { scriptedModel } from "../../src/models/scripted.js";
import { query } from "../../src/query.js";
import { openAppendInside } from "../../src/record/agent-folder.js";
import { collect, echoTool, removeDir, tempDir } from "../support/engine.js";
import { useTempHome } from "../support/home.js";

/**
 * A cloned repository can ship its `.agent/` folder: links in it must not make the engine append its trace, audit or
 * transcript lines to a file elsewhere (~/.bashrc, where the lines would then run as shell code).
 */
let ws: string;
let outside: string;
// The session key the transcript is signed with lives there.
useTempHome("statecraft-agent-links-home-");
beforeEach(() => {
  ws = tempDir("statecraft-agent-links-");
  outside = tempDir("statecraft-agent-links-outside-");
  fs.writeFileSync(path.join(outside, "bashrc"), "export PATH=/usr/bin\n");
});
afterEach(() => {
  removeDir(ws);
  removeDir(outside);
});

function capturingLogger() {
  const lines: Array<{ level: number; err?: string }> = [];
  const logger = pino({ level: "warn" }, new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  return { logger, errors: () => lines.filter((l) => l.level >= 50).map((l) => l.err ?? "") };
}

const victim = () => path.join(outside, "bashrc");
const link = (target: string, at: string) => {
  fs.mkdirSync(path.dirname(path.join(ws, at)), { recursive: true });
  fs.symlinkSync(target, path.join(ws, at));
};

/** Each payload plants links in the workspace's `.agent/`; none may make the engine write outside. */
const payloads: Array<{ name: string; plant: () => void }> = [
  { name: "audit.jsonl -> victim", plant: () => link(victim(), ".agent/audit.jsonl") },
  { name: "trace.jsonl -> victim", plant: () => link(victim(), ".agent/trace.jsonl") },
  { name: "the session transcript -> victim", plant: () => link(victim(), ".agent/sessions/s1.jsonl") },
  { name: "sessions folder -> outside", plant: () => link(outside, ".agent/sessions") },
  { name: ".agent -> outside", plant: () => link(outside, ".agent") },
  { name: "relative link up and out", plant: () => link(path.relative(path.join(ws, ".agent"), victim()), ".agent/audit.jsonl") },
  { name: "dangling link to a new file outside", plant: () => link(path.join(outside, "new.sh"), ".agent/audit.jsonl") },
  {
    name: "hard link to the victim",
    plant: () => {
      fs.mkdirSync(path.join(ws, ".agent"), { recursive: true });
      fs.linkSync(victim(), path.join(ws, ".agent", "audit.jsonl"));
    },
  },
];

describe("the engine's own files in .agent/ are never written through links", () => {
  for (const payload of payloads) {
    it(`refuses ${payload.name}`, async () => {
      payload.plant();
      const before = fs.readFileSync(victim(), "utf8");
      const { logger, errors } = capturingLogger();
      const model = scriptedModel([{ toolCalls: [{ name: "echo", input: { text: "hi" } }] }, { text: "done" }]);
      const { result } = await collect(query("go", { model, tools: [echoTool], cwd: ws, sessionId: "s1", logger }));
      expect(result.reason).toBe("final_answer");
      expect(fs.readFileSync(victim(), "utf8")).toBe(before);
      expect(fs.readdirSync(outside).sort()).toEqual(["bashrc"]);
      // Not silently: the failure is logged, naming the link.
      expect(errors().some((e) => /symbolic link|hard-linked|really is/.test(e))).toBe(true);
    });
  }

  it("still writes a plain .agent folder, creating it", async () => {
    const model = scriptedModel([{ text: "done" }]);
    const { result } = await collect(query("go", { model, tools: [echoTool], cwd: ws, sessionId: "s1" }));
    expect(result.reason).toBe("final_answer");
    for (const file of ["trace.jsonl", "sessions/s1.jsonl"]) expect(fs.statSync(path.join(ws, ".agent", file)).size).toBeGreaterThan(0);
  });

  it("openAppendInside refuses a file outside the folder and a folder on the way that is a link", () => {
    expect(() => openAppendInside(path.join(ws, ".agent"), victim())).toThrow(/not inside/);
    link(outside, ".agent/logs");
    expect(() => openAppendInside(path.join(ws, ".agent"), path.join(ws, ".agent", "logs", "x.jsonl"))).toThrow(/symbolic link/);
    expect(fs.readdirSync(outside).sort()).toEqual(["bashrc"]);
  });
});
