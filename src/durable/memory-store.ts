import { AgentError } from "../errors/agent-error.js";
import type { LineSink } from "../record/jsonl-writer.js";
import type { RunStore, StoredRun } from "./run-store.js";

/** Lines kept in an array instead of a file: what `store: "memory"` writes the trace, transcript and audit to. */
export class MemoryLines implements LineSink {
  readonly lines: string[] = [];
  writeLine(line: string): void {
    this.lines.push(line);
  }
  flush(): void {}
  close(): void {}
}

/**
 * A run store in this process's memory. A run is kept as its JSON text, as a file store would keep it: what is
 * loaded is a copy, never the object the running engine goes on changing.
 */
export function memoryRunStore(): RunStore {
  const runs = new Map<string, string>();
  const locked = new Set<string>();
  return {
    async save(run) {
      runs.set(run.sessionId, JSON.stringify(run));
    },
    async load(sessionId) {
      const text = runs.get(sessionId);
      return text === undefined ? undefined : (JSON.parse(text) as StoredRun);
    },
    async list() {
      return [...runs.values()].map((text) => JSON.parse(text) as StoredRun);
    },
    async delete(sessionId) {
      runs.delete(sessionId);
    },
    async lock(sessionId) {
      if (locked.has(sessionId)) throw new AgentError("RUN_BUSY", `the run of session ${sessionId} is already going on in this process (running, or being resumed); wait for it to end`);
      locked.add(sessionId);
      return async () => void locked.delete(sessionId);
    },
  };
}

/** What `store: "memory"` keeps for as long as the process lives: the runs left to resume, each session's conversation. */
export interface MemoryStore {
  readonly runs: RunStore;
  /** The transcript lines of a session of a workspace (created empty on first use). */
  transcript(cwd: string, sessionId: string): MemoryLines;
  /** Whether the session has a conversation kept in memory. */
  hasTranscript(cwd: string, sessionId: string): boolean;
}

let processMemory: MemoryStore | undefined;

/** The process's one memory store: every `store: "memory"` run and session shares it, so sessions continue across runs. */
export function processMemoryStore(): MemoryStore {
  if (processMemory) return processMemory;
  const transcripts = new Map<string, MemoryLines>();
  const key = (cwd: string, sessionId: string) => `${cwd}\0${sessionId}`;
  processMemory = {
    runs: memoryRunStore(),
    transcript(cwd, sessionId) {
      let lines = transcripts.get(key(cwd, sessionId));
      if (!lines) transcripts.set(key(cwd, sessionId), (lines = new MemoryLines()));
      return lines;
    },
    hasTranscript: (cwd, sessionId) => transcripts.has(key(cwd, sessionId)),
  };
  return processMemory;
}
