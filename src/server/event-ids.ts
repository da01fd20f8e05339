import { closeSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { agentFolder, openAppendInside } from "../record/agent-folder.js";

/**
 * The id of each suspended run's `suspended` event, kept where the run is kept, so that a server started again on the
 * folder numbers the run's events on from it: ids stay unique and increasing across restarts, and a client's
 * `Last-Event-ID` from before the restart still means the same event.
 */
export interface EventIds {
  /** The id the run's `suspended` event was sent with. */
  suspendedAt(runId: string): number | undefined;
  remember(runId: string, id: number): void;
}

/** Runs kept in this process's memory (`store: "memory"`) outlive a server, not the process. */
const inMemory = new Map<string, number>();

export function eventIds(cwd: string, store: "file" | "memory", warn: (message: string) => void): EventIds {
  if (store === "memory") {
    return {
      suspendedAt: (runId) => inMemory.get(`${cwd}\u0000${runId}`),
      remember: (runId, id) => void inMemory.set(`${cwd}\u0000${runId}`, id),
    };
  }
  const folder = agentFolder(cwd);
  const file = join(folder, "server-event-ids.jsonl");
  return {
    suspendedAt(runId) {
      let text: string;
      try {
        text = readFileSync(file, "utf8");
      } catch {
        return undefined;
      }
      let found: number | undefined;
      for (const line of text.split("\n")) {
        try {
          const entry = JSON.parse(line) as { runId?: unknown; id?: unknown };
          if (entry.runId === runId && Number.isSafeInteger(entry.id) && (entry.id as number) > 0) found = entry.id as number;
        } catch {
          // A line cut short by a crash, or not ours: the run's other lines still count.
        }
      }
      return found;
    },
    remember(runId, id) {
      // Appended as the engine appends its own files: never through a link planted in the workspace.
      try {
        const fd = openAppendInside(folder, file);
        try {
          writeSync(fd, `${JSON.stringify({ runId, id })}\n`);
        } finally {
          closeSync(fd);
        }
      } catch (error) {
        warn(`the event id of suspended run ${runId} could not be kept in ${file} (${(error as Error).message}); after a restart its stream numbers from 1`);
      }
    },
  };
}
