import type { EngineContext } from "../machine/context.js";
import type { InternalObserver, StateEntered } from "../observers/observe.js";
import { TraceDetails } from "../observers/details.js";
import { TRACE_VERSION, type AnyTraceLine } from "../record/format.js";

/** Writes the replayed run's lines the way the trace writer does (without a file), and follows its batches. */
export class ReplayRecorder implements InternalObserver {
  readonly lines: AnyTraceLine[] = [];
  details = new TraceDetails({});
  /** The replay's call ids → the model call (index) and position in its response. */
  readonly calls = new Map<string, { callIndex: number; position: number }>();
  modelCallIndex = -1;
  lastStateSeq = -1;
  finishedInBatch = 0;
  private running = new Set<string>();
  private seq = 0;
  private turn = 0;

  constructor(
    private readonly sessionId: string,
    private readonly onLine: (line: AnyTraceLine) => void,
    private readonly onFinished: () => void,
  ) {}

  state(entered: StateEntered<EngineContext>): void {
    this.turn = entered.context.turn;
    const { state, context } = entered;
    const line = {
      v: TRACE_VERSION,
      sessionId: this.sessionId,
      seq: this.seq++,
      time: new Date(entered.time).toISOString(),
      kind: "state",
      state,
      turn: this.turn,
      details: this.details.of(entered),
    } as AnyTraceLine;
    this.lines.push(line);
    this.lastStateSeq = line.seq;
    if (state === "call_model") this.modelCallIndex++;
    if (state === "parse_tool_call") context.batch.forEach((r, position) => this.calls.set(r.call.id, { callIndex: this.modelCallIndex, position }));
    if (state === "execute_tool") {
      this.running = new Set(context.batch.filter((r) => r.status === "allowed").map((r) => r.call.id));
      this.finishedInBatch = 0;
    }
    this.onLine(line);
  }

  emitted(event: Parameters<NonNullable<InternalObserver["emitted"]>>[0]): void {
    if (event.type === "retry") {
      const line = {
        v: TRACE_VERSION,
        sessionId: this.sessionId,
        seq: this.seq++,
        time: new Date().toISOString(),
        kind: "retry",
        turn: this.turn,
        attempt: event.attempt,
        delayMs: event.delayMs,
        error: event.error,
      } as AnyTraceLine;
      this.lines.push(line);
      this.onLine(line);
    } else if (event.type === "compaction") {
      const line = {
        v: TRACE_VERSION,
        sessionId: this.sessionId,
        seq: this.seq++,
        time: new Date().toISOString(),
        kind: "compaction",
        turn: this.turn,
        tokensBefore: event.tokensBefore,
        tokensAfter: event.tokensAfter,
      } as AnyTraceLine;
      this.lines.push(line);
      this.onLine(line);
    } else if (event.type === "tool_result" && this.running.has(event.call.id)) {
      this.finishedInBatch++;
      this.onFinished();
    }
  }
}
