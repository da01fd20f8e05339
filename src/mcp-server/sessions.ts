import { existsSync } from "node:fs";
import { readTrace } from "../record/reader.js";
import type { TraceLine } from "../record/format.js";

/** The resources' addresses: `statecraft://sessions/{id}/trace` (JSONL) and `…/summary` (JSON). */
export const TRACE_TEMPLATE = "statecraft://sessions/{id}/trace";
export const SUMMARY_TEMPLATE = "statecraft://sessions/{id}/summary";

export interface SessionListing {
  sessionId: string;
  startedAt: string;
  /** The first run's prompt, shortened: what a host shows in a list. */
  firstPrompt: string;
}

/** The sessions of a trace file, in the order they started; none when there is no file yet. */
export async function listSessions(traceFile: string | false): Promise<SessionListing[]> {
  if (traceFile === false || !existsSync(traceFile)) return [];
  const seen = new Map<string, SessionListing>();
  for await (const line of readTrace(traceFile, { onWarning: () => undefined })) {
    if (seen.has(line.sessionId)) continue;
    const input = line.kind === "state" && line.state === "build_context" ? (line.details.input ?? "") : "";
    seen.set(line.sessionId, { sessionId: line.sessionId, startedAt: line.time, firstPrompt: input.length > 80 ? `${input.slice(0, 80)}…` : input });
  }
  return [...seen.values()];
}

/** A session's trace lines, one JSON object a line; undefined when the trace holds none of it. */
export async function sessionTrace(traceFile: string | false, sessionId: string): Promise<string | undefined> {
  const lines = await readSession(traceFile, sessionId);
  return lines.length === 0 ? undefined : lines.map((line) => JSON.stringify(line)).join("\n") + "\n";
}

/** What each run of a session asked and how it ended; undefined when the trace holds none of it. */
export async function sessionSummary(traceFile: string | false, sessionId: string): Promise<Record<string, unknown> | undefined> {
  const lines = await readSession(traceFile, sessionId);
  if (lines.length === 0) return undefined;
  const runs: Array<Record<string, unknown>> = [];
  let current: Record<string, unknown> | undefined;
  for (const line of lines) {
    if (line.kind === "state" && line.state === "build_context" && line.details.input !== undefined) {
      current = { prompt: line.details.input, startedAt: line.time };
      runs.push(current);
    } else if (line.kind === "state" && line.state === "done") {
      const { reason, turns, toolCalls, usage, durationMs, text, error } = line.details;
      Object.assign(current ?? (runs[runs.push({}) - 1] as Record<string, unknown>), { endedAt: line.time, reason, turns, toolCalls, usage, durationMs, text, ...(error ? { error } : {}) });
    } else if (line.kind === "suspended") {
      Object.assign(current ?? {}, { suspendedAt: line.time, pending: line.pending });
    }
  }
  return { sessionId, ...(lines[0].parentSession ? { parentSession: lines[0].parentSession } : {}), runs };
}

async function readSession(traceFile: string | false, sessionId: string): Promise<TraceLine[]> {
  if (traceFile === false || !existsSync(traceFile)) return [];
  const lines: TraceLine[] = [];
  for await (const line of readTrace(traceFile, { sessionId, onWarning: () => undefined })) if (line.sessionId === sessionId) lines.push(line);
  return lines;
}
