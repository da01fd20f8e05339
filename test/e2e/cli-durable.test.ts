import { spawnSync } from "node:child_process";
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeTempDir, removeDir, runCli } from "../cli/helpers/cli-process.js";

const temps: string[] = [];
function workspace(): string {
  const dir = makeTempDir("statecraft-durable-");
  temps.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of temps.splice(0)) removeDir(dir);
});

function script(dir: string, steps: unknown[], name: string): string {
  writeFileSync(join(dir, name), JSON.stringify(steps));
  return `script:${name}`;
}

describe("statecraft run --on-ask suspend, runs, resume", { timeout: 120_000 }, () => {
  it("a run with no terminal suspends at its edit (exit 10), is listed, and is finished by resume in a new process", async () => {
    const dir = workspace();
    writeFileSync(join(dir, "greeting.txt"), "hello\n");
    const first = script(dir, [{ text: "Editing.", toolCalls: [{ name: "edit_file", input: { path: "greeting.txt", old_string: "hello", new_string: "hi" } }] }], "first.json");
    const run = await runCli(["run", "--model", first, "--on-ask", "suspend", "say hi"], { cwd: dir });
    expect(run.code, run.stderr).toBe(10);
    expect(run.stdout).toMatch(/suspended: 1 call waits for an answer/);
    const resumeLine = /statecraft resume (\S+) --allow (\S+)/.exec(run.stdout);
    expect(resumeLine).not.toBeNull();
    const [, session, callId] = resumeLine!;
    expect(readFileSync(join(dir, "greeting.txt"), "utf8")).toBe("hello\n");

    const listed = await runCli(["runs", "--json"], { cwd: dir });
    expect(listed.code).toBe(0);
    const rows = listed.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ sessionId: session, status: "suspended", pending: [{ callId, name: "edit_file" }] });

    const bad = await runCli(["resume", session, "--allow", "nope", "--model", first], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/nope is not a pending call/);

    const second = script(dir, [{ text: "Done: it says hi." }], "second.json");
    const resumed = await runCli(["resume", session, "--allow", callId, "--model", second, "--json"], { cwd: dir });
    expect(resumed.code, resumed.stderr).toBe(0);
    const events = resumed.stdout.trim().split("\n").map((l) => JSON.parse(l) as { type: string; reason?: string });
    expect(events.filter((e) => e.type === "turn_end")).toEqual([expect.objectContaining({ reason: "final_answer" })]);
    expect(readFileSync(join(dir, "greeting.txt"), "utf8")).toBe("hi\n");
    expect(existsSync(join(dir, ".agent", "runs", `${session}.json`))).toBe(false);

    const none = await runCli(["runs"], { cwd: dir });
    expect(none.stdout).toMatch(/no suspended or interrupted runs/);
    const again = await runCli(["resume", session, "--model", second], { cwd: dir });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/has no suspended or interrupted run/);
  });

  it("--on-ask takes deny or suspend only", async () => {
    const dir = workspace();
    const result = await runCli(["run", "--model", script(dir, [{ text: "x" }], "s.json"), "--on-ask", "maybe", "x"], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--on-ask must be deny or suspend/);
  });
});

describe("the demo's sample project, suspended at its edit and finished by statecraft resume", { timeout: 120_000 }, () => {
  it("exits 10 with the file untouched, then resume applies the edit and the tests pass", async () => {
    const dir = workspace();
    cpSync(join(import.meta.dirname, "..", "..", "src", "demo", "sample"), dir, { recursive: true });
    const edit = { path: "src/slugify.js", old_string: 'replace(" ", "-")', new_string: "replace(/\\s+/g, \"-\")" };
    const first = script(dir, [{ text: "Reading.", toolCalls: [{ name: "read_file", input: { path: "src/slugify.js" } }] }, { text: "Fixing.", toolCalls: [{ name: "edit_file", input: edit }] }], "first.json");
    const before = readFileSync(join(dir, "src", "slugify.js"), "utf8");
    const run = await runCli(["run", "--model", first, "--on-ask", "suspend", "the tests fail: fix it"], { cwd: dir });
    expect(run.code, run.stderr).toBe(10);
    expect(readFileSync(join(dir, "src", "slugify.js"), "utf8")).toBe(before);
    const [, session, callId] = /statecraft resume (\S+) --allow (\S+)/.exec(run.stdout)!;
    const second = script(dir, [{ text: "Fixed: every run of spaces becomes one dash." }], "second.json");
    const resumed = await runCli(["resume", session, "--allow", callId, "--model", second], { cwd: dir });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(readFileSync(join(dir, "src", "slugify.js"), "utf8")).toContain('replace(/\\s+/g, "-")');
    const tests = spawnSync(process.execPath, ["test/slugify.test.js"], { cwd: dir, encoding: "utf8" });
    expect(tests.status, tests.stdout + tests.stderr).toBe(0);
  });
});
