import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineTool, type AgentEvent, type RunResult } from "../../src/index.js";
import type { QueryRun } from "../../src/query.js";

/** Drains a run: every event and the return value. */
export async function collect(run: QueryRun | AsyncGenerator<AgentEvent, RunResult>): Promise<{ events: AgentEvent[]; result: RunResult }> {
  const events: AgentEvent[] = [];
  for (;;) {
    const next = await run.next();
    if (next.done) return { events, result: next.value };
    events.push(next.value);
  }
}

/** A compact picture of an event sequence: `state:name`, `text`, `tool_start:name`, `tool_result:name:ok|error`, `turn_end:reason`. */
export function outline(events: readonly AgentEvent[]): string[] {
  const out: string[] = [];
  for (const e of events) {
    switch (e.type) {
      case "state":
        out.push(`state:${e.state}`);
        break;
      case "text_delta":
        if (out[out.length - 1] !== "text") out.push("text");
        break;
      case "tool_start":
        out.push(`tool_start:${e.call.name}`);
        break;
      case "tool_result":
        out.push(`tool_result:${e.call.name}:${e.result.isError ? "error" : "ok"}`);
        break;
      case "turn_end":
        out.push(`turn_end:${e.reason}`);
        break;
      default:
        out.push(e.type);
    }
  }
  return out;
}

export function textOf(events: readonly AgentEvent[]): string {
  return events.map((e) => (e.type === "text_delta" ? e.text : "")).join("");
}

export function tempDir(prefix = "statecraft-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export function readJsonl<T = Record<string, unknown>>(file: string): T[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as T);
}

/** A read-only tool the engine tests share: echoes its text. */
export const echoTool = defineTool({
  name: "echo",
  description: "Echoes its text.",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  risk: "read",
  execute: (input: { text: string }) => `echo: ${input.text}`,
});

/** A write tool the engine tests share: asked about in the default mode, so it can suspend a run. */
export const writeTool = defineTool({
  name: "write",
  description: "Writes its text.",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  risk: "write",
  execute: (input: { text: string }) => `wrote ${input.text}`,
});
