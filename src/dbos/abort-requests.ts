import type pg from "pg";
import type { Logger } from "../logger.js";

/**
 * The runs a worker is executing, watched for abort requests (`statecraft.aborts`, written by abortRun from any
 * process). One query per poll covers all of them, and none is made while the worker runs nothing.
 */
export class AbortRequests {
  private readonly runs = new Map<string, Set<() => void>>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private polling = false;
  private failing = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly everyMs: number,
    private readonly logger?: Logger,
  ) {}

  /** Calls `abort` once when the run's abort is requested (already, or later); the returned function stops watching. */
  watch(runId: string, abort: () => void): () => void {
    let once = false;
    const fire = () => {
      if (once) return;
      once = true;
      abort();
    };
    const set = this.runs.get(runId) ?? new Set();
    set.add(fire);
    this.runs.set(runId, set);
    this.timer ??= setInterval(() => void this.poll(), this.everyMs);
    return () => {
      set.delete(fire);
      if (set.size === 0 && this.runs.get(runId) === set) this.runs.delete(runId);
      if (this.runs.size === 0) this.stop();
    };
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async poll(): Promise<void> {
    if (this.polling || this.runs.size === 0) return;
    this.polling = true;
    try {
      const found = await this.pool.query<{ run_id: string }>("SELECT run_id FROM statecraft.aborts WHERE run_id = ANY($1)", [[...this.runs.keys()]]);
      this.failing = false;
      for (const row of found.rows) for (const fire of [...(this.runs.get(row.run_id) ?? [])]) fire();
    } catch (error) {
      // Asked again at the next poll: a database that is briefly away delays an abort, it does not lose it.
      if (!this.failing) this.logger?.warn({ err: (error as Error).message }, "statecraft: could not read abort requests (runs are not aborted until it can); trying again");
      this.failing = true;
    } finally {
      this.polling = false;
    }
  }
}
