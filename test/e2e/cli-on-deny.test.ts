import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeTempDir, removeDir, runCli } from "../cli/helpers/cli-process.js";

const temps: string[] = [];
function workspace(): string {
  const dir = makeTempDir("statecraft-on-deny-");
  temps.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of temps.splice(0)) removeDir(dir);
});

const steps = [{ toolCalls: [{ name: "bash", input: { command: "echo hi > made.txt" } }] }, { text: "I was not allowed; here is what I would have done." }];
const lines = (dir: string) =>
  readFileSync(join(dir, ".agent", "trace.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { kind: string; state?: string; details?: Record<string, unknown> });

describe("statecraft run --on-deny", { timeout: 60_000 }, () => {
  it("continue: the denied call goes back to the model, which answers; exit 0; the trace records the option and the deny", async () => {
    const dir = workspace();
    writeFileSync(join(dir, "case.json"), JSON.stringify(steps));
    const result = await runCli(["run", "--model", "script:case.json", "--deny", "bash(echo *)", "--on-deny", "continue", "x"], { cwd: dir });
    expect(result.code).toBe(0);
    expect(existsSync(join(dir, "made.txt"))).toBe(false);
    expect(result.stdout).toContain("I was not allowed; here is what I would have done.");
    const trace = lines(dir);
    expect(trace[0].details).toMatchObject({ options: { permissions: { deny: ["bash(echo *)"], onDeny: "continue" } } });
    expect(trace.flatMap((l) => (l.details?.permissions as unknown[]) ?? [])).toEqual([expect.objectContaining({ name: "bash", decision: "deny", by: "rule", rule: "bash(echo *)" })]);
    expect(trace.at(-1)!.details).toMatchObject({ reason: "final_answer" });
  });

  it("end (the default, and from the config file unless the flag says otherwise) ends the run permission_denied, exit 6", async () => {
    const dir = workspace();
    writeFileSync(join(dir, "case.json"), JSON.stringify(steps));
    expect((await runCli(["run", "--model", "script:case.json", "--deny", "bash(echo *)", "x"], { cwd: dir })).code).toBe(6);
    writeFileSync(join(dir, "statecraft.config.json"), JSON.stringify({ permissions: { onDeny: "continue" } }));
    expect((await runCli(["run", "--model", "script:case.json", "--deny", "bash(echo *)", "x"], { cwd: dir })).code).toBe(0);
    expect((await runCli(["run", "--model", "script:case.json", "--deny", "bash(echo *)", "--on-deny", "end", "x"], { cwd: dir })).code).toBe(6);
  });

  it("a bad value is a usage error (flag and config file)", async () => {
    const dir = workspace();
    writeFileSync(join(dir, "case.json"), JSON.stringify(steps));
    const flag = await runCli(["run", "--model", "script:case.json", "--on-deny", "maybe", "x"], { cwd: dir });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/--on-deny.*maybe.*(end|continue)/s);
    writeFileSync(join(dir, "statecraft.config.json"), JSON.stringify({ permissions: { onDeny: "sometimes" } }));
    const config = await runCli(["run", "--model", "script:case.json", "x"], { cwd: dir });
    expect(config.code).toBe(2);
    expect(config.stderr).toContain('"permissions.onDeny" must be "end" or "continue", got "sometimes"');
  });
});
