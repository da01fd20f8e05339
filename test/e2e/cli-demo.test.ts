import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { delimiter, dirname, isAbsolute, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events.js";
import { makeTempDir, removeDir, runCli, startCliOnTerminal } from "../cli/helpers/cli-process.js";

const temps: string[] = [];
function temp(prefix: string): string {
  const dir = makeTempDir(prefix);
  temps.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of temps.splice(0)) removeDir(dir);
});

/** A PATH with node and the system's tools only: no `statecraft` on it (as after `npm ci` in a clone). */
const PATH_WITHOUT = [dirname(process.execPath), "/usr/bin", "/bin"].join(delimiter);

/** The same PATH with a folder holding an executable `statecraft` first (as after `npm install -g statecraft`). */
function pathWithStatecraft(): string {
  const bin = join(temp("statecraft-demo-bin-"), "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "statecraft"), "#!/bin/sh\nexit 0\n");
  chmodSync(join(bin, "statecraft"), 0o755);
  return `${bin}${delimiter}${PATH_WITHOUT}`;
}

interface TraceLine {
  kind: string;
  state?: string;
  seq: number;
  details?: Record<string, unknown>;
}

const readTrace = (file: string): TraceLine[] =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as TraceLine);

describe("statecraft demo", { timeout: 60_000 }, () => {
  it("runs offline with no key, fixes the sample in a new folder under TMPDIR, and points at its trace", async () => {
    const tmp = temp("statecraft-demo-tmp-");
    const here = temp("statecraft-demo-cwd-");
    const result = await runCli(["demo"], { cwd: here, env: { TMPDIR: tmp, PATH: PATH_WITHOUT } });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);

    // The person's folder is untouched; the demo worked in a fresh folder under TMPDIR.
    expect(readdirSync(here)).toEqual([]);
    const [demoDir] = readdirSync(tmp);
    expect(demoDir).toMatch(/^statecraft-demo-/);
    expect(readdirSync(tmp)).toHaveLength(1);

    const out = result.stdout;
    const traceLine = out.split("\n").find((l) => l.startsWith("trace: "));
    expect(traceLine).toBeDefined();
    const trace = traceLine!.slice("trace: ".length);
    expect(isAbsolute(trace)).toBe(true);
    expect(trace).toBe(join(tmp, demoDir, ".agent", "trace.jsonl"));
    // statecraft is not on PATH: the hints say how to run it from the project (npx finds node_modules/.bin).
    expect(out).toContain(`\n  npx statecraft trace show ${trace}\n`);
    expect(out).toContain(`\n  npx statecraft inspect ${trace}\n`);

    // The trace ends in done(final_answer) and went through every kind of step the demo promises.
    const lines = readTrace(trace);
    const last = lines[lines.length - 1];
    expect(last).toMatchObject({ kind: "state", state: "done" });
    expect(last.details).toMatchObject({ reason: "final_answer" });
    const states = new Set(lines.map((l) => l.state));
    for (const state of ["build_context", "call_model", "validate_tool", "ask_permission", "execute_tool", "recover", "done"]) {
      expect(states).toContain(state);
    }

    // What the person saw: the looking around, the mistaken call, the edit request answered by the demo's policy, the test run.
    expect(out).toMatch(/✓ list_dir \./);
    expect(out).toMatch(/✓ read_file test\/slugify\.test\.js/);
    expect(out).toMatch(/✓ grep export function in src/);
    expect(out).toMatch(/✗ read_file \{"file":"src\/slugify\.js"\} · .*path.* · not run/);
    expect(out).toMatch(/\? edit_file src\/slugify\.js — .*\n {4}edit src\/slugify\.js\n {4}- .*replace\(" ", "-"\);\n {4}\+ .*replace\(\/\\s\+\/g, "-"\);/);
    expect(out).toMatch(/demo policy: allowed once \(file edits stay inside the demo's copy; statecraft run would ask you: y\/a\/n\)/);
    expect(out).toMatch(/demo policy: allowed once \(it is the sample's test command/);
    expect(out).toMatch(/✓ bash node test\/slugify\.test\.js · exit 0/);
    expect(out).toMatch(/■ final_answer \(done\) · 7 turns · 6 tool calls · [\d,]+ tokens/);
    expect(out).not.toContain("\u001b["); // not a terminal: no colours

    // The command the demo points at works on its trace.
    const show = await runCli(["trace", "show", trace], { cwd: here });
    expect(show.code).toBe(0);
    expect(show.stdout).toContain("The tests of this project fail.");
    const replayed = await runCli(["trace", "replay", trace], { cwd: here });
    expect(replayed.stdout).toContain("identical");
    expect(replayed.code).toBe(0);

    // The fix is real: the sample's tests pass in the demo's folder.
    const test = spawnSync(process.execPath, ["test/slugify.test.js"], { cwd: join(tmp, demoDir), encoding: "utf8" });
    expect(test.status).toBe(0);
  });

  it("--json prints only AgentEvents on stdout, ending with turn_end; the trace line goes to stderr", async () => {
    const tmp = temp("statecraft-demo-tmp-");
    const result = await runCli(["demo", "--json"], { cwd: tmp, env: { TMPDIR: tmp } });
    expect(result.code).toBe(0);
    const events = result.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as AgentEvent);
    expect(events[events.length - 1]).toMatchObject({ type: "turn_end", reason: "final_answer", turns: 7, toolCalls: 6 });
    expect(events.filter((e) => e.type === "permission_request").map((e) => (e as { call: { name: string } }).call.name)).toEqual([
      "edit_file",
      "bash",
    ]);
    expect(result.stderr).toMatch(/^trace: \/.*\.agent\/trace\.jsonl$/m);
    expect(result.stderr).toContain("demo policy");
  });

  it("on a terminal: colours, unless NO_COLOR is set", async () => {
    const tmp = temp("statecraft-demo-tmp-");
    const coloured = startCliOnTerminal(["demo"], { cwd: tmp, env: { TMPDIR: tmp } });
    const done = await coloured.done;
    expect(done.code).toBe(0);
    expect(coloured.stdout).toContain("\u001b[32m■ final_answer\u001b[39m");
    expect(coloured.screen).toMatch(/trace: \/.*trace\.jsonl/);

    const plain = startCliOnTerminal(["demo"], { cwd: tmp, env: { TMPDIR: tmp, NO_COLOR: "1" } });
    const plainDone = await plain.done;
    expect(plainDone.code).toBe(0);
    expect(plain.stdout).not.toMatch(/\u001b\[3\dm/);
    expect(plain.screen).toContain("■ final_answer (done)");
    expect(existsSync(tmp)).toBe(true);
  });

  it("prints what docs/cli.md's transcript shows (apart from times, paths and ids), with plain `statecraft` when it is on PATH", async () => {
    const tmp = temp("statecraft-demo-tmp-");
    const result = await runCli(["demo"], { cwd: tmp, env: { TMPDIR: tmp, PATH: pathWithStatecraft() } });
    expect(result.stdout).toMatch(/\n {2}statecraft trace show \S+\n {2}statecraft inspect \S+\n/);
    expect(result.code).toBe(0);
    const doc = readFileSync(new URL("../../docs/cli.md", import.meta.url), "utf8");
    const transcript = /```text\n\$ statecraft demo\n([\s\S]*?)\n```/.exec(doc)![1];
    const normalise = (text: string, tempRoot: string) =>
      text
        .split(tempRoot)
        .join("<tmp>")
        .replace(/statecraft-demo-\w{6}/g, "statecraft-demo-<id>")
        .replace(/\b\d+(\.\d+)?m?s\b/g, "<time>")
        .replace(/session [0-9a-f-]{36}/g, "session <id>")
        .trimEnd();
    expect(normalise(result.stdout, tmp)).toBe(normalise(transcript, "/tmp"));
  });

  it("a TMPDIR that can't be used is a clear usage error (exit 2), not a crash", async () => {
    const here = temp("statecraft-demo-cwd-");
    const result = await runCli(["demo"], { cwd: here, env: { TMPDIR: join(here, "missing") } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`can't create the demo's folder under ${join(here, "missing")}`);
    expect(result.stderr).toContain("TMPDIR");
  });
});
