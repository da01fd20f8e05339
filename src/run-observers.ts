import { join, resolve } from "node:path";
import type { EngineObserver, InternalObserver } from "./observers/observe.js";
import { auditWriter } from "./observers/audit-writer.js";
import { runCheckpointer } from "./observers/run-checkpoint.js";
import { traceWriter } from "./observers/trace-writer.js";
import { transcriptWriter } from "./observers/transcript-writer.js";
import type { LineSink } from "./record/jsonl-writer.js";
import { agentFolder, isInside } from "./record/agent-folder.js";
import { MemoryLines } from "./durable/memory-store.js";
import { fileBlobStore, type BlobStore } from "./record/blobs.js";
import type { RunStore } from "./durable/run-store.js";
import { storedSettingsOf, tracedOptionsOf, type RunSettings } from "./run-settings.js";
import type { RunMemory } from "./store-option.js";

export type TraceObserver = ReturnType<typeof traceWriter>;

/** What a run's observers are built from, besides the prepared run. */
export interface RunObserverParts {
  /** The lines kept in memory instead of files (`store: "memory"`). */
  memory?: RunMemory;
  /** Where checkpoints go, when the run keeps them (a durable run that holds its lock). */
  checkpoints?: RunStore;
  secrets: readonly string[];
  onError: (error: Error) => void;
  /** The inspector's view of the run, when it is inspected. */
  inspected?: InternalObserver;
  /** The caller's own (`options.observers`), after the built-in ones. */
  own?: readonly EngineObserver[];
  /** The event bridge: last, so a caller sees an event once everything else has recorded it. */
  bridge: InternalObserver;
}

/** The observers of one run, in the order they hear each notification, and the writers among them to close. */
export interface RunObservers {
  all: InternalObserver[];
  trace?: TraceObserver;
  /** Closes the writers (what they hold is written first). */
  close(): void;
}

/** Builds the observers of a run: trace, transcript, audit, checkpoints, the inspector, the caller's, the bridge. */
export function runObservers(prepared: RunSettings, parts: RunObserverParts): RunObservers {
  const { input } = prepared;
  // Lines go to the host (statecraft/dbos), to memory, or to files under .agent/.
  const sinks: { trace: LineSink; transcript: LineSink; audit: LineSink } | undefined = prepared.hosted?.sinks ?? parts.memory;
  // Images and files are kept once, by hash: in the workspace's .agent/blobs/, in memory, or where the host says
  // (statecraft/dbos gives none: its lines hold them).
  const blobs: BlobStore | undefined = prepared.hosted ? prepared.hosted.blobs : parts.memory ? parts.memory.blobs : fileBlobStore(input.cwd);
  const trace = traceOf(prepared, sinks?.trace, parts, blobs);
  const { secrets, onError } = parts;
  const writers: Array<InternalObserver & { close(): void }> = [
    ...(trace ? [trace] : []),
    transcriptWriter({
      cwd: input.cwd,
      sessionId: input.sessionId,
      secrets,
      onError,
      ...(prepared.resumed?.recovered || prepared.givenHistory ? { reset: true } : {}),
      ...(sinks ? { out: sinks.transcript } : {}),
      // Lines kept in memory are the engine's alone: nothing to sign them against, and no key is made.
      ...(sinks?.transcript instanceof MemoryLines ? { signed: false } : {}),
      ...(blobs ? { blobs } : {}),
    }),
    auditWriter({ file: join(agentFolder(input.cwd), "audit.jsonl"), inside: agentFolder(input.cwd), secrets, onError, ...(sinks ? { out: sinks.audit } : {}) }),
  ];
  if (parts.checkpoints) {
    const riskOf = (name: string) => input.deps.tools.get(name)?.risk;
    writers.push(runCheckpointer({ store: parts.checkpoints, settings: storedSettingsOf(prepared), riskOf, ...(trace ? { trace } : {}), onError }));
  }
  return {
    all: [...writers, ...(parts.inspected ? [parts.inspected] : []), ...(parts.own ?? []), parts.bridge],
    ...(trace ? { trace } : {}),
    close: () => {
      for (const writer of writers) writer.close();
    },
  };
}

/** The trace writer of the run, if it keeps a trace: to its file, or to the host's or memory's lines. */
function traceOf(prepared: RunSettings, out: LineSink | undefined, parts: RunObserverParts, blobs: BlobStore | undefined): TraceObserver | undefined {
  const { input } = prepared;
  if (!prepared.traceFile && !prepared.hosted) return undefined;
  const file = out ? "" : prepared.traceFile || "";
  return traceWriter({
    ...(out ? { out } : {}),
    file,
    // A trace in the workspace's own .agent/ is written like the engine's other files there: never through a link.
    ...(file && isInside(agentFolder(input.cwd), resolve(input.cwd, file)) ? { inside: agentFolder(input.cwd) } : {}),
    sessionId: input.sessionId,
    runOptions: tracedOptionsOf(prepared),
    secrets: parts.secrets,
    onError: parts.onError,
    ...(input.loop.parentSession !== undefined ? { parentSession: input.loop.parentSession } : {}),
    ...(prepared.forkedAt ? { forkedAt: prepared.forkedAt } : {}),
    ...(prepared.resumed ? { resumed: { seq: prepared.resumed.seq, fields: prepared.resumed.fields } } : {}),
    ...(blobs ? { blobs } : {}),
  });
}
