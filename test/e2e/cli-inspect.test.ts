import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeTempDir, removeDir, runCli, startCli } from "../cli/helpers/cli-process.js";

const temps: string[] = [];
const workspace = () => {
  const dir = makeTempDir("statecraft-cli-inspect-");
  temps.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of temps.splice(0)) removeDir(dir);
});

describe("statecraft inspect", { timeout: 60_000 }, () => {
  it("serves the inspector over a trace on 127.0.0.1, prints its address, and stops on Ctrl-C", async () => {
    const dir = workspace();
    writeFileSync(join(dir, "case.json"), JSON.stringify([{ text: "hello" }]));
    const recorded = await runCli(["run", "--model", "script:case.json", "say hello"], { cwd: dir });
    expect(recorded.code).toBe(0);
    const cli = startCli(["inspect", join(dir, ".agent", "trace.jsonl")], { cwd: dir });
    await cli.waitFor(/inspector: http:\/\/127\.0\.0\.1:\d+\/\n/);
    const url = cli.stdout.match(/inspector: (\S+)/)![1];
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("statecraft inspector");
    const trace = await fetch(new URL("/trace", url));
    expect(trace.status).toBe(200);
    expect(await trace.text()).toContain('"state":"done"');
    cli.child.kill("SIGINT");
    const result = await cli.done;
    expect(result.code).toBe(0);
    await expect(fetch(url)).rejects.toThrow();
  });

  it("a missing trace file or a bad port is a usage error", async () => {
    const dir = workspace();
    const missing = await runCli(["inspect", "nope.jsonl"], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("no trace file at");
    const port = await runCli(["inspect", "--port", "99999"], { cwd: dir });
    expect(port.code).toBe(2);
    expect(port.stderr).toContain("--port takes a port number");
  });
});

describe("statecraft run --inspect", { timeout: 60_000 }, () => {
  it("prints the inspector's address on stderr before the first model call, and the run goes on", async () => {
    const dir = workspace();
    writeFileSync(join(dir, "case.json"), JSON.stringify([{ text: "inspected answer" }]));
    const result = await runCli(["run", "--inspect", "--model", "script:case.json", "--json", "go"], { cwd: dir });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/inspector: http:\/\/127\.0\.0\.1:\d+\//);
    const events = result.stdout.trim().split("\n").map((l) => JSON.parse(l) as { type: string; state?: string });
    // The inspector comes first, before any state of the run.
    expect(events[0]).toEqual({ type: "inspector", url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/$/) });
    expect(events.findIndex((e) => e.type === "state" && e.state === "call_model")).toBeGreaterThan(0);
    expect(events.at(-1)?.type).toBe("turn_end");
  });

  it("--port without --inspect is a usage error", async () => {
    const dir = workspace();
    const result = await runCli(["run", "--port", "8080", "--model", "script:none.json", "x"], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--port goes with --inspect");
  });
});
