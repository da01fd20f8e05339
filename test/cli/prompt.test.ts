import { describe, expect, it } from "vitest";
import { createStyle } from "../../src/cli/colors.js";
import { answerForKey, createTerminalPrompter, describeRequest } from "../../src/cli/prompt.js";
import { denialNotice, shellQuote } from "../../src/cli/denial-notice.js";
import { Capture, FakeTerminalInput } from "./helpers/capture.js";

const plain = createStyle(false);
const request = (name: string, input: unknown) => ({ call: { id: "c1", name, input }, reason: `${name} needs asking` });

describe("describeRequest shows exactly what will run", () => {
  it("bash: the whole command", () => {
    expect(describeRequest(request("bash", { command: "npm test && echo 'ok'\nrm -rf build" }), plain)).toEqual([
      "? bash npm test && echo 'ok'⏎rm -rf build — bash needs asking",
      "    $ npm test && echo 'ok'",
      "    $ rm -rf build",
    ]);
  });

  it("edit_file: the lines removed and added", () => {
    expect(describeRequest(request("edit_file", { path: "a.js", old_string: "x = 1", new_string: "x = 2\ny = 3", replace_all: true }), plain)).toEqual([
      "? edit_file a.js — edit_file needs asking",
      "    edit a.js (every occurrence)",
      "    - x = 1",
      "    + x = 2",
      "    + y = 3",
    ]);
  });

  it("write_file: the whole content (45 lines, every one shown)", () => {
    const content = Array.from({ length: 45 }, (_, i) => `line ${i + 1}`).join("\n");
    const lines = describeRequest(request("write_file", { path: "big.txt", content }), plain);
    expect(lines[1]).toBe("    write big.txt (45 lines)");
    expect(lines[2]).toBe("    + line 1");
    expect(lines[46]).toBe("    + line 45");
    expect(lines).toHaveLength(47);
  });

  it("any other tool: its input as JSON", () => {
    expect(describeRequest(request("deploy", { env: "prod" }), plain)).toEqual([
      '? deploy {"env":"prod"} — deploy needs asking',
      "    {",
      '      "env": "prod"',
      "    }",
    ]);
  });
});

describe("answerForKey", () => {
  it("y allows once, a always, n / Enter / Escape deny, Ctrl-C interrupts, other keys are not an answer", () => {
    expect(answerForKey("y")).toBe("allow");
    expect(answerForKey("A")).toBe("allow_always");
    expect(answerForKey("n")).toBe("deny");
    expect(answerForKey("\r")).toBe("deny");
    expect(answerForKey("\u001b")).toBe("deny");
    expect(answerForKey("\u0003")).toBe("interrupt");
    expect(answerForKey("x")).toBeUndefined();
  });
});

describe("createTerminalPrompter", () => {
  // Questions are queued, so one is written a tick after ask().
  const tick = () => new Promise((resolve) => setImmediate(resolve));
  const setup = () => {
    const input = new FakeTerminalInput();
    const output = new Capture(true);
    let interrupted = 0;
    let before = 0;
    const prompter = createTerminalPrompter({
      input,
      output,
      style: plain,
      beforeAsk: () => before++,
      onInterrupt: () => interrupted++,
    });
    return { input, output, prompter, interrupted: () => interrupted, before: () => before };
  };

  it("reads one key in raw mode, ignores keys that are not answers, and restores the terminal", async () => {
    const t = setup();
    const answer = t.prompter.ask(request("bash", { command: "ls" }));
    await tick();
    t.input.press("x");
    t.input.press("a");
    await expect(answer).resolves.toBe("allow_always");
    expect(t.input.rawModes).toEqual([true, false]);
    expect(t.before()).toBe(1);
    expect(t.output.text).toContain("? bash ls — bash needs asking\n    $ ls\n");
    expect(t.output.text).toContain("Allow? [y/a/n] y: yes, once · a: always (this session) · n: no › allowed for the rest of this session\n");
    expect(t.input.isPaused()).toBe(true);
  });

  it("asks one question at a time, in order", async () => {
    const t = setup();
    const first = t.prompter.ask(request("bash", { command: "one" }));
    const second = t.prompter.ask(request("bash", { command: "two" }));
    await tick();
    expect(t.output.text).toContain("$ one");
    expect(t.output.text).not.toContain("$ two");
    t.input.press("y");
    await expect(first).resolves.toBe("allow");
    await tick();
    expect(t.output.text).toContain("$ two");
    t.input.press("n");
    await expect(second).resolves.toBe("deny");
  });

  it("Ctrl-C while asking denies and interrupts the run", async () => {
    const t = setup();
    const answer = t.prompter.ask(request("bash", { command: "ls" }));
    await tick();
    t.input.press("\u0003");
    await expect(answer).resolves.toBe("deny");
    expect(t.interrupted()).toBe(1);
    expect(t.input.rawModes).toEqual([true, false]);
  });

  it("cancel() ends a waiting question as deny and answers later ones deny without asking", async () => {
    const t = setup();
    const answer = t.prompter.ask(request("bash", { command: "ls" }));
    await tick();
    t.prompter.cancel();
    await expect(answer).resolves.toBe("deny");
    expect(t.input.rawModes).toEqual([true, false]);
    await expect(t.prompter.ask(request("bash", { command: "later" }))).resolves.toBe("deny");
    expect(t.output.text).not.toContain("later");
  });
});

describe("denialNotice", () => {
  it("names the tool, what it would have done, and the flags that would allow it", () => {
    expect(denialNotice({ name: "bash", input: { command: "npm test" } }, "exec")).toBe(
      [
        "statecraft: denied bash npm test: it needs permission and there is no terminal to ask (stdin is not a TTY).",
        "  to allow it, run again with one of:",
        "    --allow 'bash(npm test)' (this exact call)",
        "    --allow bash (every bash call)",
        "    --permission-mode bypassPermissions (everything, use with care)",
      ].join("\n"),
    );
    const edit = denialNotice({ name: "edit_file", input: { path: "src/a.js", old_string: "a", new_string: "b" } }, "write");
    expect(edit).toContain("--allow 'edit_file(src/a.js)'");
    expect(edit).toContain("--permission-mode acceptEdits");
  });

  it("quotes for a POSIX shell", () => {
    expect(shellQuote("bash")).toBe("bash");
    expect(shellQuote("bash(echo 'hi')")).toBe(`'bash(echo '\\''hi'\\'')'`);
  });
});
