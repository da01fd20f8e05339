import { resolve } from "node:path";
import { AgentError } from "../../errors/agent-error.js";
import { lastSessionId, loadSession, type TraceSession } from "../../debug/session.js";

/** The trace file when none is given, relative to where the command runs. */
export const DEFAULT_TRACE_FILE = ".agent/trace.jsonl";

/** The streams, environment and folder a trace command works with. */
export interface IO {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export function traceFile(streams: IO, file: string | undefined): string {
  return resolve(streams.cwd, file ?? DEFAULT_TRACE_FILE);
}

export function warner(streams: IO): (message: string) => void {
  return (message) => streams.stderr.write(`statecraft: ${message}\n`);
}

/** The session asked for, or the one that started last. */
export async function pickSession(streams: IO, file: string, id: string | undefined): Promise<TraceSession> {
  const onWarning = warner(streams);
  const sessionId = id ?? (await lastSessionId(file, { onWarning: () => {} }));
  if (sessionId === undefined) throw new AgentError("TRACE_SESSION_NOT_FOUND", `${file} holds no sessions`);
  return loadSession(file, sessionId, { onWarning });
}
