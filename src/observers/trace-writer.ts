import type { InternalObserver } from "./observe.js";
import { TRACE_VERSION } from "../record/format.js";
import { JsonlWriter, type LineSink } from "../record/jsonl-writer.js";
import { TraceDetails } from "./details.js";
import type { TracedRunOptions } from "../record/settings-record.js";
import { isoTime } from "../record/iso-time.js";
import { mayHoldSecret, redactLine, redactOwnPart } from "../record/redact.js";
import { reportingBlobs, type BlobStore } from "../record/blobs.js";

export interface TraceWriterOptions {
  file: string;
  sessionId: string;
  /** The run's options as recorded on the build_context line. */
  runOptions: TracedRunOptions;
  secrets: readonly string[];
  parentSession?: string;
  forkedAt?: { sessionId: string; seq: number };
  onError: (error: Error) => void;
  /** A folder the file must really be inside (the workspace's `.agent/` for the engine's own files). */
  inside?: string;
  /**
   * A resumed run (docs/durable.md): its lines go on from `seq`, and its first line is a `resumed` line with these
   * fields instead of the build_context it passes through on its way back to ask_permission.
   */
  resumed?: { seq: number; fields: Record<string, unknown> };
  /** Where the lines go instead of `file` (statecraft/dbos writes them to PostgreSQL). */
  out?: LineSink;
  /** Where images and files go (`.agent/blobs/`), the lines naming them by hash; without it they are written inline. */
  blobs?: BlobStore;
}

/**
 * Appends one line per state entered (and one per retry) to the trace file, redacting secrets.
 *
 * A line is the JSON of `{ v, sessionId, seq, parentSession?, time, kind, …fields }` (format.ts), written as text:
 * the fields every line shares are serialised once per run, the rest per line, which gives the same text as
 * serialising the whole object without building it.
 */
export function traceWriter(options: TraceWriterOptions): InternalObserver & { close(): void; nextSeq(): number; flush(): void } {
  const out = options.out ?? new JsonlWriter(options.file, options.onError, options.inside === undefined ? {} : { inside: options.inside });
  const details = new TraceDetails(options.runOptions, options.blobs ? reportingBlobs(options.blobs, options.onError) : undefined);
  const { secrets, forkedAt } = options;
  const head = `{"v":${JSON.stringify(TRACE_VERSION)},"sessionId":${JSON.stringify(options.sessionId)},"seq":`;
  const parent = options.parentSession !== undefined ? `,"parentSession":${JSON.stringify(options.parentSession)}` : "";
  const stateNames = new Map<string, string>();
  // The text every state line shares is scanned for secrets once per run; each line then only scans its details.
  const sharedHolds = mayHoldSecret(head) || mayHoldSecret(parent) || mayHoldSecret(`,"time":"","kind":"state","state":,"turn":,"details":`);
  let namesHold = false;
  let seq = options.resumed?.seq ?? 0;
  let turn = 0;
  let resuming = options.resumed !== undefined;
  /** The line's opening up to its kind, taking the next seq. */
  const open = (time: string, kind: string) => `${head}${seq++}${parent},"time":"${time}","kind":"${kind}"`;
  /** A line of a rarer kind: its own fields serialised as an object and spliced after the shared ones. */
  const other = (kind: string, fields: object) => {
    const text = JSON.stringify(fields);
    out.writeLine(redactLine(`${open(isoTime(), kind)},${text.slice(1)}`, secrets));
  };
  return {
    state(entered) {
      turn = entered.context.turn;
      if (resuming) {
        resuming = false;
        other("resumed", { turn, ...options.resumed!.fields });
        if (entered.state === "build_context") return;
      }
      const first = seq === 0;
      let state = stateNames.get(entered.state);
      if (state === undefined) {
        stateNames.set(entered.state, (state = JSON.stringify(entered.state)));
        namesHold ||= mayHoldSecret(state);
      }
      const own = JSON.stringify(details.of(entered));
      let line = `${open(isoTime(entered.time), "state")},"state":${state},"turn":${turn},"details":${own}`;
      if (first && forkedAt) line += `,"forkedAt":${JSON.stringify(forkedAt)}`;
      line += "}";
      // The run's first line (its options, where it was forked from) is scanned whole, like a line whose shared text
      // could hold a secret.
      out.writeLine(first || sharedHolds || namesHold ? redactLine(line, secrets) : redactOwnPart(line, own, secrets));
      if (entered.state === "done") out.flush();
    },
    emitted(event) {
      if (event.type === "compaction") other("compaction", { turn, tokensBefore: event.tokensBefore, tokensAfter: event.tokensAfter });
      else if (event.type === "retry") other("retry", { turn, attempt: event.attempt, delayMs: event.delayMs, error: event.error });
      else if (event.type === "suspended") {
        other("suspended", { turn, runId: event.runId, pending: event.pending });
        out.flush();
      }
    },
    close: () => out.close(),
    nextSeq: () => seq,
    flush: () => out.flush(),
  };
}
