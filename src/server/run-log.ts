import type { AgentEvent } from "../events.js";
import type { PendingCall } from "../record/format.js";
import type { ErrorInfo } from "../errors/agent-error.js";

export type RunStatus = "running" | "suspended" | "finished";

/** What `GET /runs` lists of a run. */
export interface RunInfo {
  runId: string;
  sessionId: string;
  input: string;
  status: RunStatus;
  startedAt: string;
  /** The pending calls of a suspended run. */
  pending?: PendingCall[];
  /** How a finished run ended. */
  reason?: string;
  error?: ErrorInfo;
  /** Events so far (the id of the last one). */
  events: number;
}

/**
 * One run's events as the server keeps them, from its first to its last: the event with id N is
 * `events[N - firstId]`, so a client that got up to N (its `Last-Event-ID`) goes on from N + 1, and a late one from
 * the first. A resumed run's events are appended to the same log after its `suspended` event. A log started again
 * after a restart (from a stored suspended run) keeps the numbering: its `suspended` event has the id it had.
 */
export class RunLog {
  readonly events: AgentEvent[] = [];
  status: RunStatus = "running";
  pending: PendingCall[] | undefined;
  reason: string | undefined;
  error: ErrorInfo | undefined;
  /** The run failed without a last event (its resume was refused, its worker lost it): said to readers. */
  failure: ErrorInfo | undefined;
  private readonly waiters = new Set<() => void>();
  readonly startedAt = new Date().toISOString();

  constructor(
    readonly runId: string,
    readonly sessionId: string,
    readonly input: string,
    /** The id of the first event kept here (1 unless the log was started again after a restart). */
    readonly firstId = 1,
  ) {}

  /** The id of the last event so far (firstId - 1 before the first). */
  get lastId(): number {
    return this.firstId - 1 + this.events.length;
  }

  push(event: AgentEvent): void {
    this.events.push(event);
    if (event.type === "suspended") {
      this.status = "suspended";
      this.pending = event.pending;
    } else if (event.type === "turn_end") {
      this.status = "finished";
      this.pending = undefined;
      this.reason = event.reason;
      if (event.error) this.error = event.error;
    } else if (this.status === "suspended") {
      this.status = "running";
      this.pending = undefined;
    }
    this.wake();
  }

  /** The run ended without a `turn_end`: readers are told why, and the stream ends. */
  fail(error: ErrorInfo): void {
    this.failure = error;
    this.status = "finished";
    this.error = error;
    this.wake();
  }

  /** Whether nothing more comes: a finished run. A suspended one goes on when it is answered. */
  get ended(): boolean {
    return this.status === "finished";
  }

  info(): RunInfo {
    return {
      runId: this.runId,
      sessionId: this.sessionId,
      input: this.input,
      status: this.status,
      startedAt: this.startedAt,
      ...(this.pending ? { pending: this.pending } : {}),
      ...(this.reason !== undefined ? { reason: this.reason } : {}),
      ...(this.error ? { error: this.error } : {}),
      events: this.lastId,
    };
  }

  /**
   * The events after id `after` (0: from the start), as [id, event], waiting for more until the run ends, or until
   * `until` says a reader has had enough (a suspended run's stream for a chat ends at its question), or `signal` aborts.
   * An id before the first kept (given before a restart) reads from the first kept.
   */
  async *read(after: number, signal: AbortSignal, until?: (event: AgentEvent) => boolean): AsyncGenerator<[number, AgentEvent], void, undefined> {
    let next = Math.max(0, after - (this.firstId - 1));
    for (;;) {
      while (next < this.events.length) {
        const event = this.events[next]!;
        next += 1;
        yield [this.firstId - 1 + next, event];
        if (until?.(event)) return;
      }
      if (this.ended || signal.aborted) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          this.waiters.delete(done);
          signal.removeEventListener("abort", done);
          resolve();
        };
        this.waiters.add(done);
        signal.addEventListener("abort", done, { once: true });
      });
    }
  }

  /**
   * The events after id `from` up to the run's end or its next unanswered question (a chat's or an AG-UI run's part of it). A run
   * that failed without its last event makes it throw its error.
   */
  async *part(from: number, signal: AbortSignal, answered = 0): AsyncGenerator<AgentEvent, void, undefined> {
    // The first `answered` questions were answered already (a replay from the start): the part goes on past them.
    let questions = 0;
    for await (const [, event] of this.read(from, signal, (e) => e.type === "suspended" && ++questions > answered)) yield event;
    if (this.failure && !signal.aborted) throw new Error(`${this.failure.code}: ${this.failure.message}`);
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}
