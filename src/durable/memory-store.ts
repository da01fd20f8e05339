import { AgentError } from "../errors/agent-error.js";
import type { LineSink } from "../record/jsonl-writer.js";
import { MemoryBlobs, type BlobStore } from "../record/blobs.js";
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

/** A run as the memory store keeps it: its small state as JSON text, its conversation as the messages themselves. */
interface KeptRun {
  head: string;
  messages: unknown[];
}

/**
 * A run store in this process's memory. A checkpoint copies what changed, as the file store writes it: the run's
 * small state as JSON text, and only the conversation's new messages (a message is never changed once in the
 * conversation), so checkpoints cost what changed, not the whole conversation again. What is loaded is a copy, never
 * the objects the running engine holds.
 */
export function memoryRunStore(): RunStore {
  const runs = new Map<string, KeptRun>();
  const locked = new Set<string>();
  const copyOf = (kept: KeptRun) => ({ ...(JSON.parse(kept.head) as StoredRun), messages: JSON.parse(JSON.stringify(kept.messages)) as unknown[] }) as StoredRun;
  return {
    async save(run, hint) {
      const before = runs.get(run.sessionId);
      const unchanged = before && hint ? Math.min(hint.unchangedMessages, before.messages.length) : 0;
      const messages = unchanged > 0 ? before!.messages : [];
      messages.length = unchanged;
      for (let i = unchanged; i < run.messages.length; i++) messages.push(run.messages[i]);
      runs.set(run.sessionId, { head: JSON.stringify({ ...run, messages: [] }), messages });
    },
    async load(sessionId) {
      const kept = runs.get(sessionId);
      return kept === undefined ? undefined : copyOf(kept);
    },
    async list() {
      return [...runs.values()].map(copyOf);
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
  /** The transcript lines of a session of a workspace (created empty on first use; the session counts as used now). */
  transcript(cwd: string, sessionId: string): MemoryLines;
  /** Whether the session has a conversation kept in memory. */
  hasTranscript(cwd: string, sessionId: string): boolean;
  /** Where a session's lines keep their images and files: kept while the session is. */
  blobs(cwd: string, sessionId: string): BlobStore;
  /** Every blob kept, to read a record back (a replay of `run.trace()`'s lines). */
  readonly allBlobs: BlobStore;
}

/**
 * How many sessions the process's memory store keeps. A server that answers each request with a `store: "memory"`
 * run makes a new session per request: without a bound, every one of them would be kept until the process exits.
 */
export const MEMORY_SESSIONS = 1_000;

/**
 * A memory store that keeps the `limit` sessions used last: past it, the session used longest ago is forgotten, its
 * conversation and its stored run (a suspended one can then no longer be resumed) — unless its run is going on.
 */
export function boundedMemoryStore(limit: number): MemoryStore {
  const transcripts = new Map<string, { cwd: string; sessionId: string; lines: MemoryLines }>();
  const runs = memoryRunStore();
  const running = new Set<string>();
  const blobs = new MemoryBlobs();
  const key = (cwd: string, sessionId: string) => `${cwd}\0${sessionId}`;
  const forgetOldest = () => {
    for (const [k, kept] of transcripts) {
      if (transcripts.size <= limit) return;
      if (running.has(kept.sessionId)) continue;
      transcripts.delete(k);
      blobs.release(k);
      void runs.delete(kept.sessionId);
    }
  };
  const touch = (cwd: string, sessionId: string) => {
    const k = key(cwd, sessionId);
    const kept = transcripts.get(k) ?? { cwd, sessionId, lines: new MemoryLines() };
    // A Map keeps insertion order: moved to the end, the session is the one used last.
    transcripts.delete(k);
    transcripts.set(k, kept);
    forgetOldest();
    return kept.lines;
  };
  return {
    runs: {
      ...runs,
      async lock(sessionId) {
        const release = await runs.lock!(sessionId);
        running.add(sessionId);
        return async () => {
          running.delete(sessionId);
          await release();
        };
      },
    },
    transcript: touch,
    hasTranscript: (cwd, sessionId) => transcripts.has(key(cwd, sessionId)),
    blobs: (cwd, sessionId) => blobs.of(key(cwd, sessionId)),
    allBlobs: {
      put: () => {
        throw new Error("allBlobs only reads blobs; a session's lines write through blobs(cwd, sessionId)");
      },
      get: (hash) => blobs.get(hash),
    },
  };
}

let processMemory: MemoryStore | undefined;

/** The process's one memory store: every `store: "memory"` run and session shares it, so sessions continue across runs. */
export function processMemoryStore(): MemoryStore {
  processMemory ??= boundedMemoryStore(MEMORY_SESSIONS);
  return processMemory;
}
