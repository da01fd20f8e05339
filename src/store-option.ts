import { AgentError } from "./errors/agent-error.js";
import { fileRunStore } from "./durable/file-run-store.js";
import { MemoryLines, processMemoryStore, type MemoryStore } from "./durable/memory-store.js";
import type { RunStore } from "./durable/run-store.js";
import type { BlobStore } from "./record/blobs.js";
import type { QueryOptions } from "./options.js";

/** Where a run keeps what it records, from its `store`, `runStore` and `traceFile` options. */
export interface RunPlace {
  /** `"memory"`: nothing goes to disk; the lines go to `memory` and the runs to the process's memory store. */
  kind: "file" | "memory";
  /** Where the run is kept for resume(). */
  runs: RunStore;
  memory?: MemoryStore;
}

/** What a run kept in memory recorded: read back through `run.trace()`, `run.transcript()`, `run.audit()`. */
export interface RunMemory {
  trace: MemoryLines;
  audit: MemoryLines;
  transcript: MemoryLines;
  /** Where the lines' images and files are kept (the session's blobs in the memory store). */
  blobs: BlobStore;
}

/** Whether a value has a RunStore's methods (save, load, list, delete): what `store` and `runStore` are checked with. */
export const isRunStore = (store: unknown): store is RunStore =>
  store !== null && typeof store === "object" && (["save", "load", "list", "delete"] as const).every((name) => typeof (store as Record<string, unknown>)[name] === "function");

/** Refuses a `store` or `observers` option that can't work, naming it and what to give instead. */
export function checkStoreOptions(options: Pick<QueryOptions, "store" | "runStore" | "traceFile" | "observers">): void {
  const fail = (message: string) => new AgentError("INVALID_OPTIONS", message);
  const { store } = options;
  if (store !== undefined && store !== "file" && store !== "memory" && !isRunStore(store)) {
    throw fail(`options.store must be "file", "memory" or a RunStore (an object with async save, load, list and delete), got ${JSON.stringify(store)}`);
  }
  if (store !== undefined && store !== "file" && options.runStore !== undefined) {
    throw fail(`options.store and options.runStore both say where runs are kept; give one (store: "memory" keeps them in memory, store: aRunStore or runStore: aRunStore keeps them in your store)`);
  }
  if (store === "memory" && typeof options.traceFile === "string") {
    throw fail(`options.traceFile ${JSON.stringify(options.traceFile)} writes a file, and store: "memory" writes nothing: drop traceFile (read the trace with run.trace()) or use store: "file"`);
  }
  if (options.observers === undefined) return;
  if (!Array.isArray(options.observers)) throw fail("options.observers must be an array of observers ({ state?, emitted?, finished? })");
  options.observers.forEach((observer: unknown, i) => {
    if (observer === null || typeof observer !== "object") throw fail(`options.observers[${i}] must be an object with state, emitted or finished methods, got ${JSON.stringify(observer)}`);
    for (const name of ["state", "emitted", "finished"] as const) {
      const method = (observer as Record<string, unknown>)[name];
      if (method !== undefined && typeof method !== "function") throw fail(`options.observers[${i}].${name} must be a function, got ${typeof method}`);
    }
  });
}

/** Where a run of `cwd` is kept. */
export function placeOf(options: Pick<QueryOptions, "store" | "runStore">, cwd: string): RunPlace {
  const { store } = options;
  if (store === "memory") {
    const memory = processMemoryStore();
    return { kind: "memory", runs: memory.runs, memory };
  }
  return { kind: "file", runs: isRunStore(store) ? store : (options.runStore ?? fileRunStore(cwd)) };
}
