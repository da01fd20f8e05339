import type { CallRecord } from "../machine/context.js";
import type { InternalObserver } from "./observe.js";
import { isoTime } from "../record/iso-time.js";
import { JsonlWriter, type LineSink } from "../record/jsonl-writer.js";
import { mayHoldSecret, redactLine, redactOwnPart } from "../record/redact.js";

/** One line of `.agent/audit.jsonl`: every tool call, run or not, success or failure (the seed's appendToolAudit). */
export interface AuditLine {
  time: string;
  sessionId: string;
  toolCallId: string;
  tool: string;
  input: unknown;
  /** The permission decision; null for a call refused before permission was asked (unknown tool, invalid input). */
  permission: { decision: string; by: string; rule?: string; answeredBy?: string } | null;
  ok: boolean;
  durationMs: number;
  error?: { code: string; message: string };
}

/** Writes an audit line for each call once its result is final (when its response's results join the conversation). */
export function auditWriter(options: {
  file: string;
  secrets: readonly string[];
  onError: (error: Error) => void;
  /** A folder the file must really be inside (the workspace's `.agent/` for the engine's own files). */
  inside?: string;
  /** Where the lines go instead of `file`. */
  out?: LineSink;
}): InternalObserver & { close(): void } {
  const out = options.out ?? new JsonlWriter(options.file, options.onError, options.inside === undefined ? {} : { inside: options.inside });
  // The batch as it was last audited. Records are values (replaced, never edited): a call whose result that batch
  // already held was audited then.
  let audited: readonly CallRecord[] = [];
  // A line is written as `{"time":…,"sessionId":…,` and the rest of its fields, which are serialised per line and are
  // all that is scanned for secrets when the run's session id holds nothing the patterns look for.
  let sessionId: string | undefined;
  let sessionHolds = false;
  return {
    state({ context, state }) {
      if (state !== "append_tool_result" && state !== "done") return;
      // Read once there is a line to stamp (done mostly has none): the same time for all of this state's lines.
      let time: string | undefined;
      const batch = context.batch;
      const seen = audited;
      audited = batch;
      for (let i = 0; batch !== seen && i < batch.length; i++) {
        const record = batch[i];
        if (!record.result || (seen[i]?.call.id === record.call.id && seen[i].result)) continue;
        if (sessionId === undefined) {
          sessionId = JSON.stringify(context.run.sessionId);
          sessionHolds = mayHoldSecret(`{"time":"","sessionId":${sessionId},`);
        }
        // Built by assignment (no spread of empty objects per call), in AuditLine's key order.
        const rest: Omit<AuditLine, "time" | "sessionId"> = {
          toolCallId: record.call.id,
          tool: record.call.name,
          input: record.call.input,
          permission: record.permission ? permissionOf(record.permission) : null,
          ok: !record.result.isError,
          durationMs: Math.round((record.durationMs ?? 0) * 1000) / 1000,
        };
        if (record.result.isError) rest.error = record.error ? record.error.toJSON() : { code: errorCode(record), message: record.result.content };
        // The same text as JSON.stringify of the whole AuditLine (time, sessionId, then these fields).
        const own = JSON.stringify(rest);
        const line = `{"time":"${(time ??= isoTime())}","sessionId":${sessionId},${own.slice(1)}`;
        out.writeLine(sessionHolds ? redactLine(line, options.secrets) : redactOwnPart(line, own, options.secrets));
      }
      if (state === "done") out.flush();
    },
    close: () => out.close(),
  };
}

function permissionOf(permission: NonNullable<CallRecord["permission"]>): NonNullable<AuditLine["permission"]> {
  const line: NonNullable<AuditLine["permission"]> = { decision: permission.decision, by: permission.by };
  if (permission.rule) line.rule = permission.rule;
  if (permission.answeredBy !== undefined) line.answeredBy = permission.answeredBy;
  return line;
}

function errorCode(record: CallRecord): string {
  if (record.status === "denied") return record.permission?.decision === "deny" ? "PERMISSION_DENIED" : "NOT_RUN";
  if (record.status === "over_limit") return "MAX_TOOL_CALLS";
  return "TOOL_ERROR";
}
