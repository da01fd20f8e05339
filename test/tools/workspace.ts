import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ToolContext, ToolDefinition, ToolOutput } from "../../src/tools/define-tool.js";

/** A real temp folder per test, removed afterwards. */
export function makeTempDir(prefix = "statecraft-tools-"): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

export function removeDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

export function writeFiles(root: string, files: Record<string, string | Buffer>): void {
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(root, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
}

export function contextFor(cwd: string, signal: AbortSignal = new AbortController().signal): ToolContext {
  return { cwd, signal, sessionId: "test-session", toolCallId: "call-1" };
}

export interface RunOutcome {
  text: string;
  isError: boolean;
}

/** Validates the input as the engine does (coercion, defaults), then executes. */
export async function run<I>(tool: ToolDefinition<I>, input: Record<string, unknown>, context: ToolContext): Promise<RunOutcome> {
  const check = tool.validateInput(input);
  if (!check.ok) throw new Error(`input rejected: ${check.message}`);
  const output: ToolOutput = await tool.execute(check.value as I, context);
  return typeof output === "string" ? { text: output, isError: false } : { text: output.content, isError: output.isError === true };
}
