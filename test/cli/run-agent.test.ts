import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { AgentError } from "../../src/errors/agent-error.js";
import { createStyle } from "../../src/cli/colors.js";
import { createLogger } from "../../src/cli/logger.js";
import { HumanRenderer } from "../../src/cli/render.js";
import { executeRun, traceFileOf, type RunParameters } from "../../src/cli/run-agent.js";
import { UsageError } from "../../src/cli/usage-error.js";
import { scriptedModel } from "../../src/models/scripted.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { Capture } from "./helpers/capture.js";
import { makeTempDir, removeDir } from "./helpers/cli-process.js";

// executeRun drives the real engine; these cover what the built CLI can't reach with its built-in tools.

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) removeDir(dir);
});

function setup() {
  const cwd = makeTempDir("statecraft-exec-");
  temps.push(cwd);
  const stdout = new Capture();
  const stderr = new Capture();
  const io = { stdin: new PassThrough(), stdout, stderr, env: {}, cwd };
  const style = createStyle(false);
  const params: RunParameters = { cwd, traceFile: false, permissions: { allow: [], ask: [], deny: [] } };
  const base = {
    io,
    params,
    renderer: new HumanRenderer(stdout, { style, spinner: false, thinking: false }),
    json: false,
    errStyle: style,
    promptStyle: style,
    logger: createLogger("silent"),
  };
  return { cwd, stdout, stderr, base };
}

const fatalTool = defineTool({
  name: "deploy",
  description: "deploys",
  inputSchema: { type: "object", properties: {} },
  risk: "read",
  execute: () => {
    throw new AgentError("TOOL_FATAL", "the deploy target is gone");
  },
});

describe("executeRun", () => {
  it("a fatal tool error ends the run tool_error: exit code 7", async () => {
    const { base, stdout } = setup();
    const outcome = await executeRun({
      ...base,
      prompt: "deploy",
      model: scriptedModel([{ toolCalls: [{ name: "deploy", input: {} }] }]),
      tools: [fatalTool],
    });
    expect(outcome.reason).toBe("tool_error");
    expect(outcome.exitCode).toBe(7);
    expect(stdout.text).toContain("■ tool_error");
    expect(stdout.text).toContain("the deploy target is gone");
  });

  it("answers permission requests with the given policy (the demo's way) and shows nothing of the terminal question", async () => {
    const { base, stdout } = setup();
    const asked: string[] = [];
    const writeTool = defineTool({
      name: "note",
      description: "writes a note",
      inputSchema: { type: "object", properties: {} },
      risk: "write",
      execute: () => "noted",
    });
    const outcome = await executeRun({
      ...base,
      prompt: "note",
      model: scriptedModel([{ toolCalls: [{ name: "note", input: {} }] }, { text: "done" }]),
      tools: [writeTool],
      answer: (request) => {
        asked.push(request.call.name);
        return "allow";
      },
    });
    expect(outcome.exitCode).toBe(0);
    expect(asked).toEqual(["note"]);
    expect(stdout.text).not.toContain("Allow?");
    expect(stdout.text).toContain("✓ note {} · noted");
  });

  it("invalid options from the engine are usage errors", async () => {
    const { base } = setup();
    await expect(
      executeRun({ ...base, params: { ...base.params, sessionId: "../x" }, prompt: "x", model: scriptedModel([{ text: "a" }]), tools: [] }),
    ).rejects.toBeInstanceOf(UsageError);
  });

  it("traceFileOf: the engine's default, a given file, or none", () => {
    expect(traceFileOf({ cwd: "/w" })).toBe("/w/.agent/trace.jsonl");
    expect(traceFileOf({ cwd: "/w", traceFile: "/t.jsonl" })).toBe("/t.jsonl");
    expect(traceFileOf({ cwd: "/w", traceFile: false })).toBe(false);
  });
});
