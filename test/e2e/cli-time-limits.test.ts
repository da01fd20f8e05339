import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events.js";
import { makeTempDir, removeDir, runCli, startCli } from "../cli/helpers/cli-process.js";

const temps: string[] = [];
function workspace(): string {
  const dir = makeTempDir("statecraft-limits-");
  temps.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of temps.splice(0)) removeDir(dir);
});

/** A workspace with a file grep's catastrophic pattern backtracks on for minutes, and a script that greps it. */
function slowGrep(dir: string): string {
  writeFileSync(join(dir, "slow.txt"), `${"a".repeat(28)}!\n`);
  writeFileSync(join(dir, "case.json"), JSON.stringify([{ toolCalls: [{ name: "grep", input: { pattern: "^(a+)+$", path: "slow.txt" } }] }, { text: "never" }]));
  return "script:case.json";
}

const lastEvent = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1)!) as AgentEvent;

describe("statecraft run: time limits hold during a catastrophic grep", { timeout: 60_000 }, () => {
  it("Ctrl-C (SIGINT) mid-search stops the run within about a second: exit 130, user_abort", async () => {
    const dir = workspace();
    const run = startCli(["run", "--json", "--model", slowGrep(dir), "x"], { cwd: dir });
    await run.waitFor('"type":"tool_start"');
    // Let the search get going, then interrupt it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const interrupted = performance.now();
    run.child.kill("SIGINT");
    const result = await run.done;
    expect(performance.now() - interrupted).toBeLessThan(2_500);
    expect(result.code).toBe(130);
    expect(lastEvent(result.stdout)).toMatchObject({ type: "turn_end", reason: "user_abort" });
  });

  it("--timeout 1 ends the run at its deadline: exit 5, timeout", async () => {
    const dir = workspace();
    const run = startCli(["run", "--json", "--timeout", "1", "--model", slowGrep(dir), "x"], { cwd: dir });
    await run.waitFor('"type":"tool_start"');
    const searching = performance.now();
    const result = await run.done;
    // The deadline is 1 s after the run started, which is before the search did.
    expect(performance.now() - searching).toBeLessThan(2_500);
    expect(result.code).toBe(5);
    expect(lastEvent(result.stdout)).toMatchObject({ type: "turn_end", reason: "timeout" });
  });
});

describe("statecraft run: a trace path that can't be created is a usage error, at once", { timeout: 60_000 }, () => {
  it.each([
    ["under /proc, where mkdir -p would spin forever", () => "/proc/1/nope/x"],
    ["deeper under /proc", () => "/proc/self/nope/a/b/trace.jsonl"],
    ["below a file", (dir: string) => (writeFileSync(join(dir, "plain"), "a file"), join(dir, "plain", "sub", "trace.jsonl"))],
    ["a folder in place of the file", (dir: string) => dir],
  ])("%s", async (_name, target) => {
    const dir = workspace();
    writeFileSync(join(dir, "case.json"), JSON.stringify([{ text: "hi" }]));
    const file = target(dir);
    const started = performance.now();
    const result = await runCli(["run", "--model", "script:case.json", "--trace", file, "x"], { cwd: dir });
    expect(performance.now() - started).toBeLessThan(15_000);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`cannot write the trace to ${file}`);
    expect(result.stderr).toContain("--no-trace");
    // Nothing ran.
    expect(result.stdout).toBe("");
  });

  it("the default trace, and a project's own choice, when .agent is a file", async () => {
    const dir = workspace();
    writeFileSync(join(dir, "case.json"), JSON.stringify([{ text: "hi" }]));
    writeFileSync(join(dir, ".agent"), "a file where the folder should be");
    const byDefault = await runCli(["run", "--model", "script:case.json", "x"], { cwd: dir });
    expect(byDefault.code).toBe(2);
    expect(byDefault.stderr).toContain(`cannot write the trace to ${join(dir, ".agent", "trace.jsonl")}`);
    expect(byDefault.stderr).toContain("is a file, not a folder");
    writeFileSync(join(dir, "statecraft.config.json"), JSON.stringify({ trace: ".agent/runs/trace.jsonl" }));
    const byConfig = await runCli(["run", "--model", "script:case.json", "x"], { cwd: dir });
    expect(byConfig.code).toBe(2);
    expect(byConfig.stderr).toContain(`cannot write the trace to ${join(dir, ".agent", "runs", "trace.jsonl")}`);
  });

  it("chat checks it too", async () => {
    const dir = workspace();
    writeFileSync(join(dir, "case.json"), JSON.stringify([{ text: "hi" }]));
    const result = await startCli(["chat", "--model", "script:case.json", "--trace", "/proc/1/nope/x"], { cwd: dir, keepStdinOpen: true }).done;
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("cannot write the trace to /proc/1/nope/x");
  });
});
