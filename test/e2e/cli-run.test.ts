import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events.js";
import { CLI, cliEnv, makeTempDir, removeDir, runCli, startCli } from "../cli/helpers/cli-process.js";

const temps: string[] = [];
function workspace(): string {
  const dir = makeTempDir("statecraft-run-");
  temps.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of temps.splice(0)) removeDir(dir);
});

function script(dir: string, steps: unknown[], name = "case.json"): string {
  writeFileSync(join(dir, name), JSON.stringify(steps));
  return `script:${name}`;
}

function traceLines(file: string): Array<{ kind: string; state?: string; details?: Record<string, unknown> }> {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l));
}

const lastTraceLine = (dir: string) => {
  const lines = traceLines(join(dir, ".agent", "trace.jsonl"));
  return lines[lines.length - 1];
};

const listDir = { toolCalls: [{ name: "list_dir", input: { path: "." } }] };

describe("statecraft run: no model", { timeout: 60_000 }, () => {
  it("exits 2 at once, without waiting for stdin, naming every way to configure a model", async () => {
    const dir = workspace();
    const result = await startCli(["run", "fix it"], { cwd: dir, keepStdinOpen: true }).done;
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    for (const name of ["OPENAI_API_KEY", "OPENAI_BASE_URL", "STATECRAFT_MODEL", "--model script:<file>", "statecraft demo"]) {
      expect(result.stderr).toContain(name);
    }
    // Nothing was started: no .agent folder.
    expect(readdirSync(dir)).toEqual([]);
  });

  it("the same for a prompt on stdin, and for chat", async () => {
    const dir = workspace();
    const piped = await runCli(["run"], { cwd: dir, input: "fix it" });
    expect(piped.code).toBe(2);
    expect(piped.stderr).toContain("statecraft demo");
    const chat = await startCli(["chat"], { cwd: dir, keepStdinOpen: true }).done;
    expect(chat.code).toBe(2);
    expect(chat.stderr).toContain("OPENAI_BASE_URL");
  });
});

describe("statecraft: usage errors exit 2, help and version exit 0", { timeout: 60_000 }, () => {
  it.each([
    [["run", "--bogus", "x"], /unknown option '--bogus'/],
    [["run", "--max-turns", "abc", "x"], /--max-turns takes a whole number/],
    [["run", "--max-tool-calls", "0", "x"], /--max-tool-calls takes a whole number of 1 or more/],
    [["run", "--timeout", "-1", "x"], /--timeout takes a number of seconds greater than 0/],
    [["run", "--permission-mode", "yolo", "x"], /Allowed choices are default, acceptEdits, bypassPermissions, plan/],
    [["run", "--log-level", "loud", "x"], /Allowed choices are fatal, error, warn, info, debug, trace, silent/],
    [["run", "--model", "script:missing.json", "x"], /missing\.json does not exist/],
    [["run", "--model", "m", "--cwd", "no-such-folder", "x"], /--cwd: folder .*no-such-folder does not exist/],
    [["run", "--model", "m", "--session", "../escape", "x"], /sessionId "\.\.\/escape" is not valid/],
    [["frobnicate"], /unknown command 'frobnicate'/],
    [["run", "--model", "m", "--deny", "bash(rm *", "x"], /permissions\.deny\[0\] "bash\(rm \*" is not a valid rule/],
  ])("%j", async (args, message) => {
    const dir = workspace();
    const result = await runCli(args, { cwd: dir });
    expect(result.stderr).toMatch(message);
    expect(result.code).toBe(2);
  });

  it("an empty prompt and an invalid script file are usage errors", async () => {
    const dir = workspace();
    writeFileSync(join(dir, "bad.json"), JSON.stringify([{ txet: "typo" }]));
    const bad = await runCli(["run", "--model", "script:bad.json", "x"], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/step 0: unknown key "txet"/);
    const empty = await runCli(["run", "--model", script(dir, [{ text: "hi" }])], { cwd: dir, input: "  \n" });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/no prompt: stdin was empty/);
  });

  it("a broken statecraft.config.json is a usage error naming the file and the setting", async () => {
    const dir = workspace();
    writeFileSync(join(dir, "statecraft.config.json"), JSON.stringify({ model: "m", maxTurn: 3 }));
    const result = await runCli(["run", "x"], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${join(dir, "statecraft.config.json")}: unknown setting "maxTurn"`);
  });

  it.each([[["--help"]], [["run", "--help"]], [["chat", "--help"]], [["demo", "--help"]], [["help", "run"]]])("%j exits 0 with usage on stdout", async (args) => {
    const result = await runCli(args, { cwd: workspace() });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: statecraft/);
    expect(result.stderr).toBe("");
  });

  it("run --help lists every flag of the issue", async () => {
    const result = await runCli(["run", "--help"], { cwd: workspace() });
    for (const flag of [
      "--cwd",
      "--model",
      "--base-url",
      "--max-turns",
      "--max-tool-calls",
      "--timeout <seconds>",
      "--permission-mode",
      "--allow",
      "--deny",
      "--system-prompt",
      "--session",
      "--trace <file>",
      "--no-trace",
      "--json",
      "--log-level",
    ]) {
      expect(result.stdout).toContain(flag);
    }
  });

  it("--version prints the package version", async () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    const result = await runCli(["--version"], { cwd: workspace() });
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(pkg.version);
  });
});

describe("statecraft run --model script:<file>", { timeout: 60_000 }, () => {
  it("streams the answer, shows each tool call on one line, ends with a summary and exit 0", async () => {
    const dir = workspace();
    writeFileSync(join(dir, "notes.txt"), "one\ntwo\n");
    const model = script(dir, [
      { text: "Looking.", toolCalls: [{ name: "read_file", input: { path: "notes.txt" } }], usage: { input: 100, output: 10 } },
      { text: "The notes have two lines.", usage: { input: 150, output: 20 } },
    ]);
    const result = await runCli(["run", "--model", model, "summarise", "the", "notes"], { cwd: dir });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Looking\.\n {2}✓ read_file notes\.txt · 2 lines · \d+ms\nThe notes have two lines\.\n/);
    expect(result.stdout).toMatch(/■ final_answer \(done\) · 2 turns · 1 tool call · 280 tokens \(250 in, 30 out\) · [\d.]+m?s · session [\w-]+/);
    expect(result.stdout).toContain(`trace: ${join(dir, ".agent", "trace.jsonl")}`);
    const first = traceLines(join(dir, ".agent", "trace.jsonl"))[0];
    expect(first.details).toMatchObject({ input: "summarise the notes" });
    expect(lastTraceLine(dir)).toMatchObject({ state: "done", details: { reason: "final_answer" } });
  });

  it("reads the prompt from stdin when there is no argument", async () => {
    const dir = workspace();
    const result = await runCli(["run", "--model", script(dir, [{ text: "ok" }])], { cwd: dir, input: "what is in\nthis folder?\n" });
    expect(result.code).toBe(0);
    expect(traceLines(join(dir, ".agent", "trace.jsonl"))[0].details).toMatchObject({ input: "what is in\nthis folder?" });
  });

  it("--json: one AgentEvent per line on stdout and nothing else, the last one turn_end; logs go to stderr", async () => {
    const dir = workspace();
    const model = script(dir, [{ text: "Looking.", ...listDir }, { text: "Done." }]);
    const result = await runCli(["run", "--json", "--log-level", "debug", "--model", model, "go"], { cwd: dir });
    expect(result.code).toBe(0);
    const lines = result.stdout.split("\n");
    expect(lines.pop()).toBe("");
    const events = lines.map((line) => JSON.parse(line) as AgentEvent);
    const types = new Set(["state", "text_delta", "thinking_delta", "retry", "tool_start", "tool_result", "permission_request", "inspector", "turn_end"]);
    for (const event of events) expect(types).toContain(event.type);
    expect(events[events.length - 1]).toMatchObject({ type: "turn_end", reason: "final_answer", turns: 2, toolCalls: 1 });
    expect(events.filter((e) => e.type === "turn_end")).toHaveLength(1);
    expect(events.map((e) => e.type)).toContain("tool_result");
    // Debug logs are pino JSON lines on stderr.
    const logs = result.stderr.split("\n").filter(Boolean).map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.map((l) => l.msg)).toContain("run finished");
  });

  it("STATECRAFT_LOG_LEVEL sets the log level (stderr only); a bad value is a usage error", async () => {
    const dir = workspace();
    const model = script(dir, [{ text: "answer" }]);
    const result = await runCli(["run", "--model", model, "x"], { cwd: dir, env: { STATECRAFT_LOG_LEVEL: "info" } });
    expect(result.code).toBe(0);
    const logs = result.stderr.trim().split("\n").map((l) => JSON.parse(l) as { level: number; msg: string; name: string });
    expect(logs.map((l) => l.msg)).toEqual(expect.arrayContaining(["run started", "run finished"]));
    expect(logs.every((l) => l.name === "statecraft" && l.level >= 30)).toBe(true);
    expect(result.stdout).not.toContain('"msg"');
    const bad = await runCli(["run", "--model", model, "x"], { cwd: dir, env: { STATECRAFT_LOG_LEVEL: "chatty" } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('STATECRAFT_LOG_LEVEL: log level "chatty" is not one of');
  });

  it("--no-trace writes no trace; --trace writes it where asked", async () => {
    const dir = workspace();
    const none = await runCli(["run", "--no-trace", "--model", script(dir, [{ text: "a" }]), "x"], { cwd: dir });
    expect(none.code).toBe(0);
    expect(existsSync(join(dir, ".agent", "trace.jsonl"))).toBe(false);
    expect(none.stdout).not.toContain("trace:");
    const custom = await runCli(["run", "--trace", "runs/t.jsonl", "--model", script(dir, [{ text: "a" }]), "x"], { cwd: dir });
    expect(custom.code).toBe(0);
    const lines = traceLines(join(dir, "runs", "t.jsonl"));
    expect(lines[lines.length - 1]).toMatchObject({ state: "done", details: { reason: "final_answer" } });
  });

  it("passes limits, system prompt and permission settings to the run (as its trace records them)", async () => {
    const dir = workspace();
    const result = await runCli(
      [
        "run",
        "--model",
        script(dir, [{ text: "a" }]),
        "--max-turns",
        "4",
        "--max-tool-calls",
        "9",
        "--timeout",
        "30",
        "--system-prompt",
        "Be brief.",
        "--permission-mode",
        "acceptEdits",
        "--allow",
        "bash(npm test)",
        "--allow",
        "glob",
        "--deny",
        "bash(rm *)",
        "x",
      ],
      { cwd: dir },
    );
    expect(result.code).toBe(0);
    const options = traceLines(join(dir, ".agent", "trace.jsonl"))[0].details!.options;
    expect(options).toMatchObject({
      maxTurns: 4,
      maxToolCalls: 9,
      timeoutMs: 30_000,
      systemPrompt: "Be brief.",
      cwd: dir,
      permissions: { mode: "acceptEdits", allow: ["bash(npm test)", "glob"], deny: ["bash(rm *)"] },
    });
  });

  it("--cwd runs the agent in that folder and reads its statecraft.config.json", async () => {
    const here = workspace();
    const project = join(here, "project");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(project);
    writeFileSync(join(project, "statecraft.config.json"), JSON.stringify({ model: "script:case.json", maxTurns: 5 }));
    script(project, [{ text: "from the config's script" }]);
    const result = await runCli(["run", "--cwd", "project", "x"], { cwd: here });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("from the config's script");
    expect(traceLines(join(project, ".agent", "trace.jsonl"))[0].details).toMatchObject({ options: { maxTurns: 5, cwd: project } });
  });
});

describe("statecraft run: exit codes per stop reason", { timeout: 60_000 }, () => {
  it("3 max_turns", async () => {
    const dir = workspace();
    const result = await runCli(["run", "--max-turns", "2", "--model", script(dir, [listDir, listDir, listDir]), "x"], { cwd: dir });
    expect(result.code).toBe(3);
    expect(result.stdout).toContain("■ max_turns");
    expect(result.stdout).toMatch(/error: stopped after 2 model calls/);
    expect(lastTraceLine(dir).details).toMatchObject({ reason: "max_turns" });
  });

  it("4 max_tool_calls", async () => {
    const dir = workspace();
    const result = await runCli(["run", "--max-tool-calls", "1", "--model", script(dir, [listDir, listDir, { text: "x" }]), "x"], { cwd: dir });
    expect(result.code).toBe(4);
    expect(lastTraceLine(dir).details).toMatchObject({ reason: "max_tool_calls" });
  });

  it("5 timeout", async () => {
    const dir = workspace();
    const result = await runCli(["run", "--timeout", "0.5", "--model", script(dir, [{ delayMs: 30_000, text: "late" }]), "x"], { cwd: dir });
    expect(result.code).toBe(5);
    expect(lastTraceLine(dir).details).toMatchObject({ reason: "timeout" });
  });

  it("6 permission_denied without a terminal: stderr names the tool and the flags that would allow it", async () => {
    const dir = workspace();
    const steps = [{ toolCalls: [{ name: "bash", input: { command: "echo hi > made.txt" } }] }, { text: "done" }];
    const result = await runCli(["run", "--model", script(dir, steps), "x"], { cwd: dir });
    expect(result.code).toBe(6);
    expect(existsSync(join(dir, "made.txt"))).toBe(false);
    expect(result.stderr).toContain("denied bash echo hi > made.txt");
    expect(result.stderr).toContain("--allow 'bash(echo hi > made.txt)'");
    expect(result.stderr).toContain("--permission-mode");
    expect(lastTraceLine(dir).details).toMatchObject({ reason: "permission_denied" });
    // A person at the command line is pointed at the flags, not at the library's permissions.onAsk.
    expect(result.stdout).toContain("error: permission denied for bash: it needs permission and there is no terminal to ask; run again with one of the flags above");
    expect(result.stdout + result.stderr).not.toContain("onAsk");
    // Both streams into one (as in a terminal, or 2>&1): the flags come before the summary that points at them.
    const merged = spawnSync("sh", ["-c", 'exec "$0" "$@" 2>&1 </dev/null', process.execPath, CLI, "run", "--model", script(dir, steps), "x"], { cwd: dir, env: cliEnv(), encoding: "utf8" });
    expect(merged.status).toBe(6);
    expect(merged.stdout.indexOf("to allow it, run again with one of:")).toBeGreaterThan(-1);
    expect(merged.stdout.indexOf("to allow it, run again with one of:")).toBeLessThan(merged.stdout.indexOf("■ permission_denied"));

    // The suggested flags do allow it.
    const allowed = await runCli(["run", "--allow", "bash(echo hi > made.txt)", "--model", script(dir, steps), "x"], { cwd: dir });
    expect(allowed.stderr).toBe("");
    expect(allowed.code).toBe(0);
    expect(readFileSync(join(dir, "made.txt"), "utf8")).toBe("hi\n");
    const byMode = await runCli(["run", "--permission-mode", "bypassPermissions", "--model", script(dir, steps), "x"], { cwd: dir });
    expect(byMode.code).toBe(0);
  });

  it("6 for a deny rule too, without the no-terminal notice (no flag of this run would allow it)", async () => {
    const dir = workspace();
    const steps = [{ toolCalls: [{ name: "bash", input: { command: "rm -rf build" } }] }];
    const result = await runCli(["run", "--permission-mode", "bypassPermissions", "--deny", "bash(rm *)", "--model", script(dir, steps), "x"], { cwd: dir });
    expect(result.code).toBe(6);
    expect(result.stderr).not.toContain("no terminal");
    expect(result.stdout).toMatch(/permission denied for bash/);
  });

  it("8 model_error, with the model's error on the closing lines", async () => {
    const dir = workspace();
    const result = await runCli(["run", "--model", script(dir, [{ error: { status: 400, message: "bad request: messages too long" } }]), "x"], { cwd: dir });
    expect(result.code).toBe(8);
    expect(result.stdout).toContain("■ model_error");
    expect(result.stdout).toContain("bad request: messages too long");
  });

  it("130 user_abort on SIGINT (Ctrl-C) during a run, recorded in the trace", async () => {
    const dir = workspace();
    const run = startCli(["run", "--json", "--model", script(dir, [{ delayMs: 30_000, text: "late" }]), "x"], { cwd: dir });
    await run.waitFor('"state":"call_model"');
    run.child.kill("SIGINT");
    const result = await run.done;
    expect(result.code).toBe(130);
    const events = result.stdout.trim().split("\n").map((l) => JSON.parse(l) as AgentEvent);
    expect(events[events.length - 1]).toMatchObject({ type: "turn_end", reason: "user_abort" });
    expect(result.stderr).toContain("interrupted");
    expect(lastTraceLine(dir).details).toMatchObject({ reason: "user_abort" });
  });

  it("a reader that closes the pipe early (| head) stops the run gracefully: user_abort in the trace, no crash", async () => {
    const dir = workspace();
    const run = startCli(["run", "--json", "--model", script(dir, [{ text: "a", ...listDir }, { delayMs: 2_000, text: "b", ...listDir }, { text: "c" }]), "x"], {
      cwd: dir,
    });
    await run.waitFor('"state":"build_context"');
    run.child.stdout.destroy();
    const result = await run.done;
    expect(result.code).toBe(130);
    expect(result.stderr).toContain("output closed: stopping the run");
    expect(result.stderr).not.toContain("EPIPE");
    expect(lastTraceLine(dir).details).toMatchObject({ reason: "user_abort" });
  });

  it("--session continues a session: the second run carries on the first run's conversation", async () => {
    const dir = workspace();
    const first = await runCli(["run", "--json", "--model", script(dir, [{ text: "first answer" }]), "first question"], { cwd: dir });
    expect(first.code).toBe(0);
    const end = JSON.parse(first.stdout.trim().split("\n").pop()!) as { sessionId: string };
    const second = await runCli(["run", "--session", end.sessionId, "--model", script(dir, [{ text: "second answer" }]), "second question"], { cwd: dir });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(`session ${end.sessionId}`);
    const transcript = readFileSync(join(dir, ".agent", "sessions", `${end.sessionId}.jsonl`), "utf8")
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { message?: { role: string; content: string } }).message)
      .filter(Boolean)
      .map((m) => `${m!.role}: ${m!.content}`);
    expect(transcript).toEqual(["user: first question", "assistant: first answer", "user: second question", "assistant: second answer"]);
  });
});
