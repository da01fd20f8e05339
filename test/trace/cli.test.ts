import { afterEach, describe, expect, it } from "vitest";
import { cpSync, readdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import type { TraceLine } from "../../src/record/format.js";
import { CLI, makeTempDir, removeDir, runCli } from "../cli/helpers/cli-process.js";
import { readLines, stateOf, writeLines } from "./helpers.js";

const temps: string[] = [];
function temp(prefix: string): string {
  const dir = makeTempDir(prefix);
  temps.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of temps.splice(0)) removeDir(dir);
});

const SAMPLE = fileURLToPath(new URL("../../src/demo/sample/", import.meta.url));
const DEMO_REQUEST = "The tests of this project fail. Find out why and fix it.";

/** What a run did, without times, ids and durations. */
const calls = (lines: readonly TraceLine[]) =>
  lines
    .filter((l) => stateOf(l) === "validate_tool")
    .flatMap((l) => ((l as { details: { calls: Array<{ name: string; input: unknown }> } }).details.calls ?? []).map((c) => [c.name, c.input]));

describe("statecraft trace, spawned on the demo's trace", { timeout: 120_000 }, () => {
  it("list → show → replay → fork, and script reproduces the run", async () => {
    const tmp = temp("statecraft-trace-tmp-");
    const here = temp("statecraft-trace-cwd-");
    const demo = await runCli(["demo"], { cwd: here, env: { TMPDIR: tmp } });
    expect(demo.code, demo.stderr + demo.stdout).toBe(0);
    const trace = join(tmp, readdirSync(tmp)[0], ".agent", "trace.jsonl");
    const lines = readLines(trace);
    const sessionId = lines[0].sessionId;

    const list = await runCli(["trace", "list", trace], { cwd: here });
    expect(list.stderr).toBe("");
    expect(list.code, list.stderr + list.stdout).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`\\n${sessionId}\\s+\\S+ \\S+\\s+final_answer\\s+\\d+\\s+\\d+\\s+\\d+\\s+\\S+ m?s\\s+${DEMO_REQUEST.slice(0, 20)}`));

    const show = await runCli(["trace", "show", trace, "--last"], { cwd: here });
    expect(show.code, show.stderr + show.stdout).toBe(0);
    expect(show.stdout).toContain(`session ${sessionId}`);
    expect(show.stdout).toContain("edit_file: allow by human");
    expect(show.stdout).toMatch(/waiting for a human/);
    expect(show.stdout).toContain("tokens per turn:");

    const replay = await runCli(["trace", "replay", trace], { cwd: here });
    expect(replay.stderr).toBe("");
    expect(replay.code, replay.stderr + replay.stdout).toBe(0);
    expect(replay.stdout).toContain("identical");

    // A recording whose model output was changed replays to a divergence: exit 1.
    const tampered = join(here, "tampered.jsonl");
    const copy = structuredClone(lines);
    const firstParse = copy.find((l) => stateOf(l) === "parse_tool_call") as TraceLine & { details: { response: { toolCalls: Array<{ name: string }> } } };
    firstParse.details.response.toolCalls[0].name = "rm_rf";
    writeLines(tampered, copy);
    const diverged = await runCli(["trace", "replay", tampered], { cwd: here });
    expect(diverged.code, diverged.stderr + diverged.stdout).toBe(1);
    expect(diverged.stdout).toMatch(/^diverged at seq \d+: recorded ask_permission, replayed recover\n/);

    // Fork where the model first got a tool's input wrong, with another (scripted, offline) model.
    const recover = lines.find((l) => stateOf(l) === "recover")!.seq;
    const forkModel = join(here, "fork-model.json");
    writeFileSync(forkModel, JSON.stringify([{ text: "I would read src/slugify.js with the right argument first." }]));
    const forked = await runCli(["trace", "fork", trace, "--session", sessionId, "--at", String(recover), "--model", `script:${forkModel}`], { cwd: here });
    expect(forked.stderr).toBe("");
    expect(forked.code, forked.stderr + forked.stdout).toBe(0);
    const forkLines = readLines(trace).filter((l) => l.parentSession === sessionId);
    expect(forkLines.length).toBeGreaterThan(3);
    expect((forkLines[0] as { forkedAt?: unknown }).forkedAt).toEqual({ sessionId, seq: recover });
    expect(stateOf(forkLines.at(-1)!)).toBe("done");

    // trace script → run --model script:case.json "<same request>" on a fresh copy of the sample: the same run.
    const script = await runCli(["trace", "script", trace, "--session", sessionId], { cwd: here });
    expect(script.code, script.stderr + script.stdout).toBe(0);
    const caseFile = join(here, "case.json");
    writeFileSync(caseFile, script.stdout);
    const fresh = temp("statecraft-trace-sample-");
    cpSync(SAMPLE, fresh, { recursive: true });
    const again = join(here, "again.jsonl");
    // The demo answered its permission questions itself; here the same calls are allowed by rules.
    const rerun = await runCli(
      ["run", "--model", `script:${caseFile}`, "--cwd", fresh, "--trace", again, "--allow", "edit_file", "--allow", "bash(node test/slugify.test.js)", DEMO_REQUEST],
      { cwd: here },
    );
    expect(rerun.code, rerun.stderr + rerun.stdout).toBe(0);
    const rerunLines = readLines(again);
    expect(rerunLines.map(stateOf)).toEqual(lines.map(stateOf));
    expect(calls(rerunLines)).toEqual(calls(lines));
  });
});
