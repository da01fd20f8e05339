import type { EngineObserver } from "../machine/observe.js";
import { TRACE_VERSION, type RetryTraceLine, type StateTraceLine } from "./format.js";
import { JsonlWriter } from "./jsonl-writer.js";
import { TraceDetails } from "./details.js";
import { redactLine } from "./redact.js";

export interface TraceWriterOptions {
  file: string;
  sessionId: string;
  /** The run's options as recorded on the build_context line. */
  runOptions: Record<string, unknown>;
  secrets: readonly string[];
  parentSession?: string;
  forkedAt?: { sessionId: string; seq: number };
  onError: (error: Error) => void;
}

/** Appends one line per state entered (and one per retry) to the trace file, redacting secrets. */
export function traceWriter(options: TraceWriterOptions): EngineObserver & { close(): void } {
  const out = new JsonlWriter(options.file, options.onError);
  const details = new TraceDetails(options.runOptions);
  let seq = 0;
  let turn = 0;
  const base = () => ({
    v: TRACE_VERSION,
    sessionId: options.sessionId,
    seq: seq++,
    ...(options.parentSession !== undefined ? { parentSession: options.parentSession } : {}),
  });
  const write = (line: object) => out.writeLine(redactLine(JSON.stringify(line), options.secrets));
  return {
    state(entered) {
      turn = entered.context.turn;
      const first = seq === 0;
      const line: StateTraceLine = {
        ...base(),
        time: new Date(entered.time).toISOString(),
        kind: "state",
        state: entered.state,
        turn,
        details: details.of(entered),
        ...(first && options.forkedAt ? { forkedAt: options.forkedAt } : {}),
      };
      write(line);
      if (entered.state === "done") out.flush();
    },
    emitted(event) {
      if (event.type === "compaction") {
        write({ ...base(), time: new Date().toISOString(), kind: "compaction", turn, tokensBefore: event.tokensBefore, tokensAfter: event.tokensAfter });
        return;
      }
      if (event.type !== "retry") return;
      const line: RetryTraceLine = {
        ...base(),
        time: new Date().toISOString(),
        kind: "retry",
        turn,
        attempt: event.attempt,
        delayMs: event.delayMs,
        error: event.error,
      };
      write(line);
    },
    close: () => out.close(),
  };
}
