import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Command } from "commander";
import { AgentError, defineTool, query, type AgentEvent, type QueryOptions, type RunResult } from "../../src/index.js";
import type { TraceLine } from "../../src/record/format.js";
import { registerTraceCommands } from "../../src/cli/commands/trace-actions.js";
import { Capture } from "../cli/helpers/capture.js";

export const echo = defineTool({
  name: "echo",
  description: "Echoes its text.",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
  risk: "read",
  execute: (input: { text: string }) => `echo: ${input.text}`,
});

export const count = defineTool({
  name: "count",
  description: "Counts to n.",
  inputSchema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
  risk: "read",
  execute: (input: { n: number }) => Array.from({ length: input.n }, (_, i) => String(i + 1)).join(" "),
});

export const writeNote = defineTool({
  name: "write_note",
  description: "Writes a note.",
  inputSchema: { type: "object", properties: { note: { type: "string" } }, required: ["note"] },
  risk: "write",
  execute: (input: { note: string }) => `wrote ${input.note}`,
});

export const broken = defineTool({
  name: "broken",
  description: "Always fails.",
  inputSchema: { type: "object" },
  risk: "read",
  execute: () => {
    throw new Error("disk on fire");
  },
});

export const fatal = defineTool({
  name: "fatal",
  description: "Fails so that the run must stop.",
  inputSchema: { type: "object" },
  risk: "read",
  execute: () => {
    throw new AgentError("TOOL_FATAL", "the database is gone");
  },
});

/** Waits until the run's signal fires (an abort or the deadline). */
export const stuck = defineTool({
  name: "stuck",
  description: "Never finishes on its own.",
  inputSchema: { type: "object" },
  risk: "read",
  execute: (_input, { signal }) => new Promise<string>((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
});

/** Takes longer than its own time limit. */
export const sleepy = defineTool({
  name: "sleepy",
  description: "Sleeps past its own limit.",
  inputSchema: { type: "object" },
  risk: "read",
  timeoutMs: 20,
  execute: (_input, { signal }) => new Promise<string>((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
});

/** Keeps the process busy (no event loop) for `ms`: the run's deadline passes while it works. */
export const busy = defineTool({
  name: "busy",
  description: "Works synchronously for a while.",
  inputSchema: { type: "object", properties: { ms: { type: "integer" } }, required: ["ms"] },
  risk: "read",
  execute: (input: { ms: number }) => {
    const until = Date.now() + input.ms;
    while (Date.now() < until) {
      // busy on purpose: nothing else runs meanwhile
    }
    return "worked";
  },
});

export const ALL_TOOLS = [echo, count, writeNote, broken, fatal, stuck, sleepy, busy];

export interface Recorded {
  sessionId: string;
  file: string;
  events: AgentEvent[];
  result: RunResult;
}

/** Runs query() to its end (calling `onEvent` for each event, which may abort) and returns where the trace is. */
export async function record(
  cwd: string,
  prompt: string,
  options: Omit<QueryOptions, "cwd">,
  onEvent?: (event: AgentEvent, abort: () => void) => void,
): Promise<Recorded> {
  const run = query(prompt, { cwd, ...options });
  const events: AgentEvent[] = [];
  for (;;) {
    const next = await run.next();
    if (next.done) return { sessionId: run.sessionId, file: traceFileOf(cwd, options), events, result: next.value };
    events.push(next.value);
    onEvent?.(next.value, () => run.abort());
  }
}

export function traceFileOf(cwd: string, options: Pick<QueryOptions, "traceFile"> = {}): string {
  return typeof options.traceFile === "string" ? options.traceFile : join(cwd, ".agent", "trace.jsonl");
}

export function readLines(file: string): TraceLine[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as TraceLine);
}

export function writeLines(file: string, lines: readonly unknown[]): void {
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
}

export const stateOf = (line: TraceLine): string => ((line as { state?: string }).state ?? line.kind);

export interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
  error?: unknown;
}

/** Runs `statecraft <args>` through commander in this process, with the trace commands registered. */
export async function traceCli(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliOutcome> {
  const stdout = new Capture();
  const stderr = new Capture();
  const context = { io: { stdout, stderr, cwd, env }, exitCode: 0 };
  // Like the real program: --no-color is a global option there.
  const program = new Command("statecraft")
    .option("--no-color", "no colours")
    .exitOverride()
    .configureOutput({ writeOut: (text) => stdout.write(text), writeErr: (text) => stderr.write(text) });
  registerTraceCommands(program, context);
  let error: unknown;
  try {
    await program.parseAsync(args, { from: "user" });
  } catch (e) {
    error = e;
  }
  await new Promise((resolve) => setImmediate(resolve));
  return { code: error ? 2 : context.exitCode, stdout: stdout.text, stderr: stderr.text, ...(error ? { error } : {}) };
}
