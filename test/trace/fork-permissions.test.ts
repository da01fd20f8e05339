import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { forkPermissions } from "../../src/debug/fork-permissions.js";
import { makeTempDir, removeDir, runCli } from "../cli/helpers/cli-process.js";
import { readLines, stateOf, writeLines } from "./helpers.js";

// A trace can come from anywhere (a repository, an issue attachment) and record `bypassPermissions`: `trace fork`
// must run with the command line's permissions, showing the recorded ones without applying them.

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) removeDir(dir);
});

interface Recording {
  root: string;
  project: string;
  /** A copy of the run's trace in another folder: the trace from elsewhere. */
  trace: string;
  sessionId: string;
  /** A seq inside the tool batch: forking there runs the recorded call again, live. */
  inBatch: number;
}

const touch = { name: "bash", input: { command: "touch pwned.txt" } };
const write = { name: "write_file", input: { path: "pwned.txt", content: "x" } };

function scriptFile(root: string, name: string, steps: unknown[]): string {
  const file = join(root, `${name}.json`);
  writeFileSync(file, JSON.stringify(steps));
  return `script:${file}`;
}

/** Records a real run of the built CLI that made `call` with `flags`, then copies its trace elsewhere. */
async function recordRun(flags: string[], call: { name: string; input: unknown }, expectedCode: number): Promise<Recording> {
  const root = makeTempDir("statecraft-fork-perms-");
  temps.push(root);
  const project = join(root, "project");
  mkdirSync(project);
  const env = { XDG_CONFIG_HOME: join(root, "user-config") };
  const recorded = await runCli(["run", ...flags, "--model", scriptFile(root, "recorded", [{ toolCalls: [call] }, { text: "done" }]), "do it"], { cwd: project, env });
  expect(recorded.code, recorded.stderr + recorded.stdout).toBe(expectedCode);
  rmSync(join(project, "pwned.txt"), { force: true });
  mkdirSync(join(root, "elsewhere"));
  const trace = join(root, "elsewhere", "trace.jsonl");
  cpSync(join(project, ".agent", "trace.jsonl"), trace);
  const lines = readLines(trace);
  return { root, project, trace, sessionId: lines[0].sessionId, inBatch: lines.find((l) => stateOf(l) === "parse_tool_call")!.seq };
}

function fork(r: Recording, extra: string[] = []) {
  const model = scriptFile(r.root, "fork", [{ text: "fork done" }]);
  return runCli(["trace", "fork", r.trace, "--session", r.sessionId, "--at", String(r.inBatch), "--model", model, "--no-color", ...extra], {
    // Forked from inside the project, as a person does: a fork works in the folder it is started in.
    cwd: r.project,
    env: { XDG_CONFIG_HOME: join(r.root, "user-config") },
  });
}

describe("statecraft trace fork never applies the recorded permission mode or allow rules", { timeout: 120_000 }, () => {
  it.each([
    ["recorded bypassPermissions, bash", ["--permission-mode", "bypassPermissions"], touch, 'mode "bypassPermissions"'],
    ["recorded acceptEdits, write_file", ["--permission-mode", "acceptEdits"], write, 'mode "acceptEdits"'],
    ["recorded allow bash", ["--allow", "bash"], touch, 'allow "bash"'],
    ["recorded allow bash(touch *)", ["--allow", "bash(touch *)"], touch, 'allow "bash(touch *)"'],
    ["recorded allow write_file", ["--allow", "write_file"], write, 'allow "write_file"'],
  ])("%s: the re-run call is not run (exit 6); the recorded setting is shown", async (_what, flags, call, shown) => {
    const r = await recordRun(flags, call, 0);
    const result = await fork(r);
    expect(result.code, result.stderr + result.stdout).toBe(6);
    expect(existsSync(join(r.project, "pwned.txt"))).toBe(false);
    expect(result.stdout).toContain("permissions default");
    expect(result.stdout).toContain(`the recorded run's permissions are not applied: ${shown}`);
  });

  it("a crafted trace whose options say bypassPermissions and allow bash is not obeyed either", async () => {
    const r = await recordRun([], touch, 6);
    const lines = readLines(r.trace) as unknown as Array<{ details?: { options?: { permissions?: Record<string, unknown> } } }>;
    lines[0].details!.options!.permissions = { mode: "bypassPermissions", allow: ["bash", "bash(*)"], ask: [], deny: [], onAsk: false };
    writeLines(r.trace, lines);
    const result = await fork(r);
    expect(result.code, result.stderr + result.stdout).toBe(6);
    expect(existsSync(join(r.project, "pwned.txt"))).toBe(false);
    expect(result.stdout).toContain('mode "bypassPermissions"');
    expect(result.stdout).toContain('allow "bash", "bash(*)"');
  });

  it("--permission-mode on the command line applies (the control)", async () => {
    const r = await recordRun(["--permission-mode", "bypassPermissions"], touch, 0);
    const result = await fork(r, ["--permission-mode", "bypassPermissions"]);
    expect(result.code, result.stderr + result.stdout).toBe(0);
    expect(existsSync(join(r.project, "pwned.txt"))).toBe(true);
    expect(result.stdout).toContain("permissions bypassPermissions");
    expect(result.stdout).not.toContain("not applied");
  });

  it("the fork's folder's untrusted config can't grant what the trace can't", async () => {
    const r = await recordRun(["--permission-mode", "bypassPermissions"], touch, 0);
    writeFileSync(join(r.project, "statecraft.config.json"), JSON.stringify({ permissions: { mode: "bypassPermissions", allow: ["bash"] } }));
    const result = await fork(r);
    expect(result.code, result.stderr + result.stdout).toBe(6);
    expect(existsSync(join(r.project, "pwned.txt"))).toBe(false);
    expect(result.stderr).toContain("ignored, because");
  });
});

describe("forkPermissions", () => {
  const recorded = { mode: "bypassPermissions", allow: ["bash"], ask: ["read_file"], deny: ["bash(rm *)"] };
  const none = { allow: [], ask: [], deny: [] };

  it("keeps only the recorded rules that restrict, and only when no permission flag is given", () => {
    expect(forkPermissions(none, {}, recorded).base).toEqual({ allow: [], ask: ["read_file"], deny: ["bash(rm *)"] });
    expect(forkPermissions({ ...none, allow: ["glob"] }, { allow: ["glob"] }, recorded).base).toEqual({ allow: ["glob"], ask: [], deny: [] });
  });

  it("quotes what the trace says, so its text can't drive the terminal", () => {
    const note = forkPermissions(none, {}, { ...recorded, mode: "plan\u001b]0;owned\u0007", allow: ["bash\u001b[2J"] }).recordedNote!;
    expect(note).not.toContain("\u001b");
    expect(note).toContain("\\u001b");
  });
});
