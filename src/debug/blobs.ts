import { basename, dirname, resolve } from "node:path";
import { processMemoryStore } from "../durable/memory-store.js";
import { AGENT_DIR } from "../record/agent-folder.js";
import { blobSources, blobsFolder, fileBlobStore, type BlobStore } from "../record/blobs.js";
import { partsFromBlobs } from "../record/blob-parts.js";
import type { UserContent } from "../models/content.js";
import { analyseRun, type RecordedRun } from "./recording.js";
import { splitRuns, type TraceSession } from "./session.js";

/**
 * Where a recorded session's images and files are read back from: the `.agent/blobs/` next to its trace file, the
 * workspace the trace names, the folder given (a fork's), and this process's memory store (a `store: "memory"` run's
 * lines). Reading from the trace's own places is safe where running there would not be: every blob is checked
 * against the hash the line names.
 */
export function sessionBlobs(session: TraceSession, cwd?: string): BlobStore {
  const folders: string[] = [];
  if (session.file !== undefined) {
    const traceFolder = dirname(resolve(session.file));
    if (basename(traceFolder) === AGENT_DIR) folders.push(dirname(traceFolder));
  }
  const recorded = splitRuns(session.lines).map((lines, i) => analyseRun(lines, i).options?.cwd).find((c) => typeof c === "string");
  if (recorded !== undefined) folders.push(resolve(recorded));
  if (cwd !== undefined) folders.push(resolve(cwd));
  return blobSources([
    ...[...new Set(folders)].map((folder) => ({ store: fileBlobStore(folder), where: blobsFolder(folder) })),
    { store: processMemoryStore().allBlobs, where: 'this process\'s memory (store: "memory")' },
  ]);
}

/** The run's request as the engine had it: its text, or its parts with their bytes read back. */
export function requestOf(run: RecordedRun, blobs: BlobStore): UserContent {
  if (run.inputParts === undefined) return run.input;
  return partsFromBlobs(run.inputParts, blobs, `the request of run ${run.index + 1}`) as UserContent;
}

/** Whether the run added a request of its own (a fork given no prompt adds none). */
export function hasRequest(run: RecordedRun): boolean {
  const forked = (run.lines[0] as { forkedAt?: unknown } | undefined)?.forkedAt !== undefined;
  return !(forked && run.input === "" && run.inputParts === undefined);
}
