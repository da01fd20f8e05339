import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeTempDir, removeDir, runCli } from "../cli/helpers/cli-process.js";

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) removeDir(dir);
});

function workspace(steps: unknown[]): string {
  const dir = makeTempDir("statecraft-chat-");
  temps.push(dir);
  writeFileSync(join(dir, "case.json"), JSON.stringify(steps));
  return dir;
}

describe("statecraft chat without a terminal (lines on stdin)", { timeout: 60_000 }, () => {
  it("each line is a run of one session; /session, /help and unknown commands; ends at /exit", async () => {
    const dir = workspace([{ text: "one" }, { text: "two" }, { text: "never" }]);
    const result = await runCli(["chat", "--model", "script:case.json"], {
      cwd: dir,
      input: "first\n/session\n\n/bogus\nsecond\n/help\n/exit\nthird\n",
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(out).toContain("› first\none\n");
    expect(out).toContain("› second\ntwo\n");
    expect(out).not.toContain("never");
    expect(out).toContain("unknown command /bogus; /help lists the commands");
    expect(out).toContain("/new          start a new session");
    const sessions = [...out.matchAll(/session ([0-9a-f-]{36})/g)].map((m) => m[1]);
    expect(new Set(sessions).size).toBe(1);
    const messages = readFileSync(join(dir, ".agent", "sessions", `${sessions[0]}.jsonl`), "utf8")
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { message?: { role: string; content: string } }).message)
      .filter(Boolean)
      .map((m) => `${m!.role}: ${m!.content}`);
    expect(messages).toEqual(["user: first", "assistant: one", "user: second", "assistant: two"]);
  });

  it("the end of the input leaves; /new starts a fresh session", async () => {
    const dir = workspace([{ text: "one" }, { text: "two" }]);
    const result = await runCli(["chat", "--model", "script:case.json"], { cwd: dir, input: "first\n/new\nsecond\n" });
    expect(result.code).toBe(0);
    const sessions = new Set([...result.stdout.matchAll(/· session ([0-9a-f-]{36})/g)].map((m) => m[1]));
    expect(sessions.size).toBe(2);
  });

  it("a call that needs asking is denied with the notice on stderr, and the chat goes on", async () => {
    const dir = workspace([{ toolCalls: [{ name: "write_file", input: { path: "x.txt", content: "x" } }] }, { text: "next answer" }]);
    const result = await runCli(["chat", "--model", "script:case.json"], { cwd: dir, input: "write it\nthen this\n" });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("■ permission_denied");
    expect(result.stdout).toContain("next answer");
    expect(result.stderr).toContain("denied write_file x.txt");
    expect(result.stderr).toContain("--permission-mode acceptEdits");
  });
});
