import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeTempDir, removeDir, startCliOnTerminal, type CliProcess } from "../cli/helpers/cli-process.js";

// These tests type on a real pseudo-terminal (util-linux `script`): the CLI sees a TTY, as it does for a person.

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function workspace(steps: unknown[]): string {
  const dir = makeTempDir("statecraft-tty-");
  cleanups.push(() => removeDir(dir));
  writeFileSync(join(dir, "case.json"), JSON.stringify(steps));
  return dir;
}

function onTerminal(args: string[], dir: string, env: Record<string, string> = { NO_COLOR: "1" }): CliProcess {
  const cli = startCliOnTerminal(args, { cwd: dir, env });
  cleanups.push(() => {
    if (!cli.exited) cli.child.kill("SIGKILL");
  });
  return cli;
}

const count = (text: string, needle: string) => text.split(needle).length - 1;
const bash = (command: string) => ({ toolCalls: [{ name: "bash", input: { command } }] });

describe("the permission prompt on a terminal", { timeout: 60_000 }, () => {
  const steps = [{ text: "Creating the file.", ...bash("echo hi > made.txt") }, { text: "Made it." }];

  it("shows exactly what will run; y allows it once", async () => {
    const dir = workspace(steps);
    const cli = onTerminal(["run", "--model", "script:case.json", "make a file"], dir);
    await cli.waitFor("n: no ›");
    expect(cli.screen).toMatch(/\? bash echo hi > made\.txt — .*\n {4}\$ echo hi > made\.txt\n {2}Allow\? \[y\/a\/n\] y: yes, once · a: always \(this session\) · n: no ›/);
    expect(existsSync(join(dir, "made.txt"))).toBe(false); // nothing runs before the answer
    cli.write("y");
    const result = await cli.done;
    expect(result.code).toBe(0);
    expect(cli.screen).toContain("allowed once");
    expect(cli.screen).toMatch(/✓ bash echo hi > made\.txt · exit 0/);
    expect(cli.screen).toContain("■ final_answer");
    expect(readFileSync(join(dir, "made.txt"), "utf8")).toBe("hi\n");
    const audit = readFileSync(join(dir, ".agent", "audit.jsonl"), "utf8");
    expect(JSON.parse(audit.trim().split("\n")[0])).toMatchObject({ tool: "bash", permission: { decision: "allow", by: "human" }, ok: true });
  });

  it("n denies: the command never runs and the run ends permission_denied (exit 6)", async () => {
    const dir = workspace(steps);
    const cli = onTerminal(["run", "--model", "script:case.json", "make a file"], dir);
    await cli.waitFor("n: no ›");
    cli.write("n");
    const result = await cli.done;
    expect(result.code).toBe(6);
    expect(cli.screen).toMatch(/n: no › denied/);
    expect(cli.screen).toContain("■ permission_denied");
    expect(existsSync(join(dir, "made.txt"))).toBe(false);
  });

  it("a allows the same call for the rest of the session: asked once, run twice", async () => {
    const dir = workspace([bash("echo a >> log.txt"), bash("echo a >> log.txt"), { text: "Twice." }]);
    const cli = onTerminal(["run", "--model", "script:case.json", "append twice"], dir);
    await cli.waitFor("n: no ›");
    cli.write("a");
    const result = await cli.done;
    expect(result.code).toBe(0);
    expect(count(cli.screen, "Allow?")).toBe(1);
    expect(cli.screen).toContain("allowed for the rest of this session");
    expect(readFileSync(join(dir, "log.txt"), "utf8")).toBe("a\na\n");
  });

  it("keys that are not an answer are ignored; Ctrl-C at the question aborts the run (exit 130)", async () => {
    const dir = workspace(steps);
    const cli = onTerminal(["run", "--model", "script:case.json", "make a file"], dir);
    await cli.waitFor("n: no ›");
    cli.write("x");
    cli.write("\u0003");
    const result = await cli.done;
    expect(result.code).toBe(130);
    expect(cli.screen).toContain("■ user_abort");
    expect(existsSync(join(dir, "made.txt"))).toBe(false);
  });
});

describe("Ctrl-C and the spinner on a terminal", { timeout: 60_000 }, () => {
  it("a spinner shows while waiting for the model; Ctrl-C aborts the run: user_abort, exit 130, in the trace", async () => {
    const dir = workspace([{ delayMs: 60_000, text: "too late" }]);
    const cli = onTerminal(["run", "--model", "script:case.json", "wait"], dir);
    await cli.waitFor(/thinking \d/);
    cli.write("\u0003");
    const result = await cli.done;
    expect(result.code).toBe(130);
    expect(cli.screen).toContain("interrupted: stopping the run");
    expect(cli.screen).toContain("■ user_abort (aborted)");
    const trace = readFileSync(join(dir, ".agent", "trace.jsonl"), "utf8").trim().split("\n");
    expect(JSON.parse(trace[trace.length - 1])).toMatchObject({ state: "done", details: { reason: "user_abort" } });
  });

  it("colours on a terminal when NO_COLOR is not set", async () => {
    const dir = workspace([{ text: "hello" }]);
    const cli = onTerminal(["run", "--model", "script:case.json", "hi"], dir, {});
    expect((await cli.done).code).toBe(0);
    expect(cli.stdout).toContain("\u001b[32m■ final_answer\u001b[39m");
  });
});

describe("statecraft chat on a terminal", { timeout: 60_000 }, () => {
  it("multi-turn in one session; Ctrl-C during a run returns to the prompt; /help, /session, /exit", async () => {
    const dir = workspace([{ text: "first answer" }, { delayMs: 60_000, text: "never shown" }, { text: "third answer" }]);
    const cli = onTerminal(["chat", "--model", "script:case.json"], dir);
    await cli.waitFor("› ");
    let mark = cli.mark();
    cli.write("hello there\r");
    await cli.waitFor(/■ final_answer.*\n[\s\S]*› $/, { since: mark });
    expect(cli.screen.slice(mark)).toContain("first answer");

    mark = cli.mark();
    cli.write("/session\r");
    await cli.waitFor(/session ([\w-]+)\n/, { since: mark });
    const sessionId = /session ([\w-]+)\n/.exec(cli.screen.slice(mark))![1];

    mark = cli.mark();
    cli.write("a slow one\r");
    await cli.waitFor(/thinking \d/, { since: mark });
    cli.write("\u0003");
    await cli.waitFor(/■ user_abort.*\n[\s\S]*› $/, { since: mark });

    mark = cli.mark();
    cli.write("and again\r");
    await cli.waitFor(/■ final_answer.*\n[\s\S]*› $/, { since: mark });
    expect(cli.screen.slice(mark)).toContain("third answer");
    expect(cli.screen.slice(mark)).toContain(`session ${sessionId}`);

    mark = cli.mark();
    cli.write("/help\r");
    await cli.waitFor("/exit", { since: mark });
    cli.write("/exit\r");
    const result = await cli.done;
    expect(result.code).toBe(0);
    expect(cli.screen).toContain(`continue it with: statecraft chat --session ${sessionId}`);

    // One session: the transcript holds all three requests, the aborted one included.
    const users = readFileSync(join(dir, ".agent", "sessions", `${sessionId}.jsonl`), "utf8")
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { message?: { role: string; content: string } }).message)
      .filter((m) => m?.role === "user")
      .map((m) => m!.content);
    expect(users).toEqual(["hello there", "a slow one", "and again"]);
  });

  it.each([
    ["Ctrl-C", "\u0003"],
    ["Ctrl-D", "\u0004"],
  ])("%s at the prompt leaves (exit 0)", async (_key, key) => {
    const dir = workspace([{ text: "unused" }]);
    const cli = onTerminal(["chat", "--model", "script:case.json"], dir);
    await cli.waitFor("› ");
    cli.write(key);
    const result = await cli.done;
    expect(result.code).toBe(0);
  });

  it("asks permission in the chat too", async () => {
    const dir = workspace([{ text: "Creating.", ...bash("echo hi > made.txt") }, { text: "Made." }]);
    const cli = onTerminal(["chat", "--model", "script:case.json"], dir);
    await cli.waitFor("› ");
    cli.write("make it\r");
    await cli.waitFor("n: no ›");
    cli.write("y");
    await cli.waitFor(/■ final_answer.*\n[\s\S]*› $/);
    expect(readFileSync(join(dir, "made.txt"), "utf8")).toBe("hi\n");
    cli.write("/exit\r");
    expect((await cli.done).code).toBe(0);
  });
});

describe("a prompt piped on stdin while a person is at the terminal", { timeout: 60_000 }, () => {
  it("asks the permission question on the controlling terminal", async () => {
    const dir = workspace([{ text: "Creating.", ...bash("echo hi > made.txt") }, { text: "Made." }]);
    // `script` gives the shell a terminal; the CLI's stdin is a pipe from echo.
    const { spawn } = await import("node:child_process");
    const { CLI, cliEnv, CliProcess } = await import("../cli/helpers/cli-process.js");
    const command = `echo 'make a file' | '${process.execPath}' '${CLI}' run --model script:case.json`;
    const cli = new CliProcess(spawn("script", ["-qfec", command, "/dev/null"], { cwd: dir, env: cliEnv({ NO_COLOR: "1" }), stdio: "pipe" }));
    cleanups.push(() => {
      if (!cli.exited) cli.child.kill("SIGKILL");
    });
    await cli.waitFor("n: no ›");
    cli.write("y");
    const result = await cli.done;
    expect(result.code).toBe(0);
    expect(readFileSync(join(dir, "made.txt"), "utf8")).toBe("hi\n");
    expect(readFileSync(join(dir, ".agent", "trace.jsonl"), "utf8")).toContain('"input":"make a file"');
  });
});
