/** A delay no real timer uses: how the clock tells the run's deadline timer from the others (as replay.ts does). */
const DEADLINE_MARKER = 2_000_000_029;

/**
 * The time a hosted run's machine sees: the recorded time of its steps while a workflow replays them, then real time
 * going on from there once it runs live. The deadline (`timeoutMs`) and the `timedOut` guard read it, so a replayed
 * workflow takes the same path, and the time a dead worker's run spent waiting to be taken up again is not run time
 * (as for a crash-resumed run in docs/durable.md).
 *
 * Steps report what they record (`recorded`) and when one runs live (`live`); a step the deadline cut short is
 * recorded as cut, and its replay fires the deadline at the same point (`expire`).
 */
export class RunClock {
  private base: number;
  private liveSince: number | undefined;
  private deadline: number | undefined;
  private timer: { fire: () => void; real?: ReturnType<typeof setTimeout> } | undefined;

  constructor(origin: number) {
    this.base = origin;
  }

  now(): number {
    return this.liveSince === undefined ? this.base : this.base + (Date.now() - this.liveSince);
  }

  /** A replayed step: time stands at what it recorded. */
  recorded(at: number): void {
    if (this.liveSince !== undefined) return;
    this.base = Math.max(this.base, at);
  }

  /** A step runs for real: time goes on from the recorded one, and the deadline timer is set from it. */
  live(): void {
    if (this.liveSince !== undefined) return;
    this.liveSince = Date.now();
    this.arm();
  }

  /** Fires the deadline now: the replay of a step the deadline cut short. */
  expire(): void {
    const timer = this.timer;
    if (!timer) return;
    if (timer.real !== undefined) clearTimeout(timer.real);
    this.timer = undefined;
    timer.fire();
  }

  /** What the machine is given: its deadline delay and guard read this clock, and its timers go through it. */
  machineOptions() {
    return {
      guards: { timedOut: ({ context }: { context: { run: { deadline: number } } }) => this.now() >= context.run.deadline },
      delays: {
        runDeadline: ({ context }: { context: { run: { deadline: number } } }) => {
          this.deadline = context.run.deadline;
          return DEADLINE_MARKER;
        },
      },
    };
  }

  actorClock() {
    return {
      setTimeout: (fn: (...args: unknown[]) => void, ms: number): unknown => {
        if (ms !== DEADLINE_MARKER) return setTimeout(fn, ms);
        const timer = { fire: () => fn() };
        this.timer = timer;
        // While replaying, the deadline waits: recorded time moves only with the steps, and a step the deadline cut
        // fires it (expire). Live, it is a real timer for the time left.
        if (this.liveSince !== undefined) this.arm();
        return timer;
      },
      clearTimeout: (id: unknown) => {
        const timer = this.timer;
        if (timer !== undefined && timer === id) {
          if (timer.real !== undefined) clearTimeout(timer.real);
          this.timer = undefined;
        } else clearTimeout(id as ReturnType<typeof setTimeout>);
      },
    };
  }

  private arm(): void {
    const timer = this.timer;
    if (!timer || this.deadline === undefined) return;
    if (timer.real !== undefined) clearTimeout(timer.real);
    timer.real = setTimeout(() => {
      if (this.timer === timer) this.timer = undefined;
      timer.fire();
    }, Math.max(0, this.deadline - this.now()));
  }
}
