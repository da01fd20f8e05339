import type { InspectorHub } from "./hub.js";
import type { Json } from "./serialize.js";
import { redactLine, secretValues } from "../record/redact.js";

/**
 * Trace lines recorded elsewhere, shown as they arrive (`Inspector.addTraceLines`): each session becomes a run of the
 * page at its first line (a `run` record, with its request when that line has it), each line a `trace_line` record.
 * Lines are redacted again, as `/trace` redacts a file: they may come from a writer that knew other secrets.
 */
export class TraceFeed {
  private readonly known = new Set<string>();
  private readonly secrets = secretValues();

  constructor(
    private readonly hub: InspectorHub,
    private readonly chartId: string,
  ) {}

  add(lines: readonly string[]): void {
    let unreadable = 0;
    for (const text of lines) {
      if (text.trim() === "") continue;
      let line: Record<string, Json>;
      try {
        line = JSON.parse(redactLine(text, this.secrets)) as Record<string, Json>;
      } catch {
        unreadable++;
        continue;
      }
      if (!line || typeof line !== "object" || typeof line.sessionId !== "string" || typeof line.kind !== "string") {
        unreadable++;
        continue;
      }
      const sessionId = line.sessionId;
      if (!this.known.has(sessionId)) {
        this.known.add(sessionId);
        const input = (line.details as { input?: unknown } | undefined)?.input;
        this.hub.add({
          kind: "run",
          time: typeof line.time === "string" ? line.time : new Date().toISOString(),
          sessionId,
          chartId: this.chartId,
          ...(typeof input === "string" ? { input } : {}),
          ...(typeof line.parentSession === "string" ? { parentSession: line.parentSession } : {}),
        });
      }
      this.hub.add({ kind: "trace_line", sessionId, line });
    }
    if (unreadable > 0) this.hub.problem(`${unreadable} trace line${unreadable === 1 ? "" : "s"} could not be read (not JSON with a sessionId and a kind) and are not shown`);
  }
}
