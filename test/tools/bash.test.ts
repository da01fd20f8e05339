import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bashTool } from "../../src/tools/builtin/index.js";
import { processGroupExists, runInProcessGroup } from "../../src/tools/process.js";
import { isRunning, killIfRunning, waitForFile, waitUntilGone } from "./processes.js";
import { resolveSandbox, runSandbox, withRunSandbox } from "../../src/sandbox/index.js";
import type { ToolContext, ToolDefinition } from "../../src/tools/define-tool.js";
import { contextFor, makeTempDir, removeDir, run as runTool } from "./workspace.js";

// These tests watch the process group by its host PIDs, which a sandboxed command (its own PID namespace) does not
// see: they run unsandboxed. test/sandbox/processes.test.ts shows the same ends inside the sandbox.
const off = (cwd: string) => runSandbox(resolveSandbox("off"), cwd, () => undefined);
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const run = (tool: ToolDefinition<any>, input: Record<string, unknown>, context: ToolContext) => withRunSandbox(off(context.cwd), () => runTool(tool, input, context));

let ws: string;
beforeEach(() => {
  ws = makeTempDir("statecraft-bash-");
});
afterEach(() => removeDir(ws));

function pidFrom(text: string, label = "PID"): number {
  const match = new RegExp(`${label}=(\\d+)`).exec(text);
  if (!match) throw new Error(`no ${label} in output:\n${text}`);
  return Number(match[1]);
}

describe("bash", () => {
  it("runs in cwd and reports exit code and stdout", async () => {
    const out = await run(bashTool(), { command: "pwd; echo hello" }, contextFor(ws));
    expect(out).toEqual({ isError: false, text: `exit code: 0\nstdout:\n${ws}\nhello` });
  });

  it("reports stdout and stderr separately; a non-zero exit is an error result, not a throw", async () => {
    const out = await run(bashTool(), { command: "echo out; echo err >&2; exit 3" }, contextFor(ws));
    expect(out).toEqual({ isError: true, text: "exit code: 3\nstdout:\nout\nstderr:\nerr" });
  });

  it("says when there is no output", async () => {
    expect(await run(bashTool(), { command: "true" }, contextFor(ws))).toEqual({ isError: false, text: "exit code: 0\n(no output)" });
  });

  it("reports a shell killed by a signal as 128 + signal number", async () => {
    const out = await run(bashTool(), { command: "kill -9 $$" }, contextFor(ws));
    expect(out.isError).toBe(true);
    expect(out.text).toContain("exit code: 137\nsignal: SIGKILL");
  });

  it("kills what the command leaves running when it exits", async () => {
    // One background job holds the output pipe, one doesn't: both must go.
    const command = "echo GROUP=$$; sleep 1000 & echo PID=$!; sleep 1000 >/dev/null 2>&1 & echo QUIET=$!";
    const out = await run(bashTool(), { command }, contextFor(ws));
    expect(out.isError).toBe(false);
    // The call returns only once its process group is empty: nothing is left at that moment.
    expect(processGroupExists(pidFrom(out.text, "GROUP"))).toBe(false);
    expect(isRunning(pidFrom(out.text))).toBe(false);
    expect(isRunning(pidFrom(out.text, "QUIET"))).toBe(false);
  });

  it("on timeout kills the whole group, grandchildren included, and says it timed out", async () => {
    const pidFile = path.join(ws, "pid.txt");
    const command = `echo $$ > ${pidFile}.group; sleep 1000 & echo $! > ${pidFile}; sleep 1000`;
    const out = await run(bashTool(), { command, timeoutMs: "300" }, contextFor(ws));
    const pid = Number(await waitForFile(pidFile));
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/^command timed out after 300 ms; it and every process it started were killed\nexit code: 143\nsignal: SIGTERM/);
    expect(isRunning(pid)).toBe(false);
    expect(processGroupExists(Number(await waitForFile(`${pidFile}.group`)))).toBe(false);
  });

  it("on abort kills the whole group, grandchildren included", async () => {
    const pidFile = path.join(ws, "pid.txt");
    const controller = new AbortController();
    const pending = run(bashTool(), { command: `sleep 1000 & echo $! > ${pidFile}; wait` }, contextFor(ws, controller.signal));
    const pid = Number(await waitForFile(pidFile));
    expect(isRunning(pid)).toBe(true);
    controller.abort();
    const out = await pending;
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/^command was aborted; it and every process it started were killed\nexit code: 143/);
    expect(isRunning(pid)).toBe(false);
  });

  it("SIGKILLs processes that ignore SIGTERM", async () => {
    const pidFile = path.join(ws, "pid.txt");
    const outcome = await runInProcessGroup(`trap '' TERM; sleep 1000 & echo $! > ${pidFile}; wait`, { cwd: ws, timeoutMs: 300, killGraceMs: 200, sandbox: off(ws) });
    const pid = Number(await waitForFile(pidFile));
    expect(outcome.timedOut).toBe(true);
    // SIGKILL is sent before the call returns; the kernel finishes it asynchronously.
    expect(await waitUntilGone(pid)).toBe(true);
    expect(processGroupExists(outcome.pid)).toBe(false);
  });

  it("returns even when a process escaped the group while holding the output pipe", async () => {
    const outcome = await runInProcessGroup("setsid sleep 1000 & echo PID=$!", { cwd: ws, killGraceMs: 200, sandbox: off(ws) });
    const pid = pidFrom(outcome.stdout);
    killIfRunning(pid);
    expect(outcome.exitCode).toBe(0);
  });

  it("caps huge stdout and stderr, keeping both ends and saying how much was dropped", async () => {
    const command = "head -c 3000000 /dev/zero | tr '\\0' a; echo; echo END-OUT; head -c 2000000 /dev/zero | tr '\\0' b >&2; echo END-ERR >&2";
    const out = await run(bashTool(), { command }, contextFor(ws));
    expect(out.isError).toBe(false);
    expect(out.text.length).toBeLessThan(30_000);
    expect(out.text).toMatch(/^exit code: 0\nstdout:\naaaa/);
    expect(out.text).toMatch(/… \[\d+ bytes of stdout omitted\] …/);
    expect(out.text).toMatch(/… \[\d+ bytes of stderr omitted\] …/);
    expect(out.text).toContain("END-OUT\nstderr:\nbbbb");
    expect(out.text.endsWith("END-ERR")).toBe(true);
    const dropped = Number(/(\d+) bytes of stdout omitted/.exec(out.text)![1]);
    const kept = out.text.slice(out.text.indexOf("stdout:\n") + 8, out.text.indexOf("\nstderr:")).replace(/\n… \[\d+ bytes of stdout omitted\] …\n/, "");
    expect(dropped + Buffer.byteLength(kept)).toBe(3_000_000 + 1 + "END-OUT".length);
  });

  it("rejects a timeout above the maximum through its schema", () => {
    const check = bashTool().validateInput({ command: "true", timeoutMs: 10_000_000 });
    expect(check.ok).toBe(false);
  });

  it("reports a missing workspace as a real failure", async () => {
    await expect(run(bashTool(), { command: "true" }, contextFor(path.join(ws, "missing")))).rejects.toThrow(/could not start the shell/);
    expect(fs.existsSync(path.join(ws, "missing"))).toBe(false);
  });
});
