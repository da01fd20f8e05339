import type pg from "pg";
import type { LineSink } from "../record/jsonl-writer.js";

/**
 * Which of a run's records a line belongs to: trace, transcript and audit lines as in files; `events`: its AgentEvents
 * (JSON), for watch(); `rule`: the allow rules its `allow_always` answers added, signed (src/dbos/session-rules.ts).
 */
export type LineStream = "trace" | "transcript" | "audit" | "events" | "rule";

/**
 * A run's lines, written to `statecraft.lines` instead of files. Each line is keyed by (run, part, stream, index): a
 * workflow replayed after a crash writes the same lines again with the same keys, so what was written stays as it
 * was (its original times) and what the dead worker had not flushed yet is filled in.
 */
export class PgLines {
  private pending: Array<{ stream: LineStream; idx: number; line: string }> = [];
  private readonly next: Record<LineStream, number> = { trace: 0, transcript: 0, audit: 0, events: 0, rule: 0 };
  private writing: Promise<void> = Promise.resolve();
  private scheduled = false;
  private failure: Error | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly key: { sessionId: string; runId: string; part: number },
    private readonly onError: (error: Error) => void,
  ) {}

  sink(stream: LineStream): LineSink {
    return {
      writeLine: (line) => {
        this.pending.push({ stream, idx: this.next[stream]++, line });
        this.schedule();
      },
      flush: () => this.flushSoon(),
      close: () => this.flushSoon(),
    };
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flushSoon());
  }

  private flushSoon(): void {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.writing = this.writing.then(() => this.insert(batch));
  }

  private async insert(batch: Array<{ stream: LineStream; idx: number; line: string }>): Promise<void> {
    const { sessionId, runId, part } = this.key;
    try {
      await this.pool.query(
        `INSERT INTO statecraft.lines (session_id, run_id, part, stream, idx, line)
         SELECT $1, $2, $3, s, i, l FROM unnest($4::text[], $5::int[], $6::text[]) AS t(s, i, l)
         ON CONFLICT (run_id, part, stream, idx) DO NOTHING`,
        [sessionId, runId, part, batch.map((b) => b.stream), batch.map((b) => b.idx), batch.map((b) => b.line)],
      );
    } catch (error) {
      if (!this.failure) {
        this.failure = error as Error;
        this.onError(new Error(`trace lines could not be written to PostgreSQL: ${(error as Error).message}`));
      }
    }
  }

  /** Resolves once every line written so far is in the database. */
  async drain(): Promise<void> {
    this.flushSoon();
    await this.writing;
    if (this.pending.length > 0) await this.drain();
  }
}
