import { describe, expect, it } from "vitest";
import { exitCodeOf, formatDuration, formatUsage, oneLine, toolOutcome, toolSubject } from "../../src/cli/format.js";
import { EXIT_CODES, exitCodeFor } from "../../src/cli/exit-codes.js";
import { STOP_REASONS } from "../../src/machine/stop-reasons.js";
import { colorsEnabled, createStyle, stripAnsi } from "../../src/cli/colors.js";
import { Capture } from "./helpers/capture.js";

describe("exit codes", () => {
  it("map every stop reason to the documented code", () => {
    expect(Object.fromEntries(STOP_REASONS.map((r) => [r, exitCodeFor(r)]))).toEqual({
      final_answer: 0,
      max_turns: 3,
      max_tool_calls: 4,
      timeout: 5,
      user_abort: 130,
      permission_denied: 6,
      tool_error: 7,
      model_error: 8,
    });
    expect(EXIT_CODES.usage).toBe(2);
    expect(EXIT_CODES.crash).toBe(1);
  });
});

describe("colours", () => {
  it("are on for a terminal only, off with NO_COLOR or --no-color, forced with FORCE_COLOR", () => {
    expect(colorsEnabled(new Capture(true), {})).toBe(true);
    expect(colorsEnabled(new Capture(false), {})).toBe(false);
    expect(colorsEnabled(new Capture(true), { NO_COLOR: "1" })).toBe(false);
    expect(colorsEnabled(new Capture(true), { NO_COLOR: "" })).toBe(true);
    expect(colorsEnabled(new Capture(true), {}, true)).toBe(false);
    expect(colorsEnabled(new Capture(false), { FORCE_COLOR: "1" })).toBe(true);
    expect(colorsEnabled(new Capture(false), { FORCE_COLOR: "0" })).toBe(false);
    expect(colorsEnabled(new Capture(false), { FORCE_COLOR: "1", NO_COLOR: "1" })).toBe(false);
  });

  it("a disabled style returns text unchanged; an enabled one wraps it in escapes stripAnsi removes", () => {
    expect(createStyle(false).red("x")).toBe("x");
    const red = createStyle(true).red("x");
    expect(red).toBe("\u001b[31mx\u001b[39m");
    expect(stripAnsi(red)).toBe("x");
  });
});

describe("format", () => {
  it("durations", () => {
    expect(formatDuration(0)).toBe("0ms");
    expect(formatDuration(999)).toBe("999ms");
    expect(formatDuration(1234)).toBe("1.2s");
    expect(formatDuration(125_000)).toBe("2m 05s");
  });

  it("usage with cached and reasoning only when reported", () => {
    expect(formatUsage({ input: 1000, output: 234, cached: 0, reasoning: 0 })).toBe("1,234 tokens (1,000 in, 234 out)");
    expect(formatUsage({ input: 1, output: 0, cached: 1, reasoning: 0 })).toBe("1 token (1 in, 0 out, 1 cached)");
    expect(formatUsage({ input: 0, output: 5, cached: 0, reasoning: 3 })).toBe("5 tokens (0 in, 5 out, 3 reasoning)");
  });

  it("oneLine flattens newlines and cuts long text", () => {
    expect(oneLine("a\nb", 10)).toBe("a⏎b");
    expect(oneLine("abcdefghij", 5)).toBe("abcd…");
  });

  it("the subject of a tool call is the argument that matters", () => {
    expect(toolSubject("bash", { command: "npm test" })).toBe("npm test");
    expect(toolSubject("read_file", { path: "a.ts", offset: 3 })).toBe("a.ts");
    expect(toolSubject("edit_file", { path: "b.ts", old_string: "x", new_string: "y" })).toBe("b.ts");
    expect(toolSubject("list_dir", {})).toBe(".");
    expect(toolSubject("list_dir", { path: "src" })).toBe("src");
    expect(toolSubject("grep", { pattern: "TODO", path: "src", glob: "*.ts" })).toBe("TODO in src (*.ts)");
    expect(toolSubject("glob", { pattern: "**/*.md" })).toBe("**/*.md");
    // A mistaken input or another tool: what the model actually sent.
    expect(toolSubject("read_file", { file: "x.js" })).toBe('{"file":"x.js"}');
    expect(toolSubject("weather", { city: "Oslo" })).toBe('{"city":"Oslo"}');
    expect(toolSubject("bash", "{not json")).toBe("{not json");
  });

  it("the outcome of a tool call: exit code, short message, line count or the error's first line", () => {
    expect(exitCodeOf("out\nexit code: 3\n")).toBe(3);
    expect(exitCodeOf("no code here")).toBeUndefined();
    expect(toolOutcome("bash", { content: "ok\nexit code: 0", isError: false })).toBe("exit 0");
    expect(toolOutcome("bash", { content: "boom\nexit code: 1", isError: true })).toBe("exit 1");
    expect(toolOutcome("edit_file", { content: "edited a.ts (1 replacement)", isError: false })).toBe("edited a.ts (1 replacement)");
    expect(toolOutcome("edit_file", { content: "Edited a.ts: replaced 1 occurrence.\n  1\tx\n  2\ty", isError: false })).toBe(
      "Edited a.ts: replaced 1 occurrence.",
    );
    expect(toolOutcome("read_file", { content: "1\n2\n3\n", isError: false })).toBe("3 lines");
    expect(toolOutcome("grep", { content: "a.ts:1:x\nb.ts:2:y", isError: false })).toBe("2 lines");
    expect(toolOutcome("read_file", { content: "", isError: false })).toBe("no output");
    expect(toolOutcome("nope", { content: "\nunknown tool nope; available: a, b\nmore", isError: true })).toBe("unknown tool nope; available: a, b");
  });
});
