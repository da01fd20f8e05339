import type { AgentEvent } from "./events.js";

/**
 * The most events the bridge holds for a caller slower than the engine (an instant model, a consumer that awaits
 * per event): past it the next model call waits until the caller has taken half of them, so the backlog stays
 * bounded however long the run (without it, about two events a step piled up).
 */
export const MAX_BACKLOG = 1024;

/**
 * Carries a run's events from its observers (which push, synchronously, as the machine runs) to the generator the
 * caller pulls from, and holds the engine back while the caller lags (`pace`).
 */
export class EventBridge {
  private queue: AgentEvent[] = [];
  private head = 0;
  private wake: (() => void) | undefined;
  private caughtUp: { promise: Promise<void>; resolve: () => void } | undefined;

  push(event: AgentEvent): void {
    this.queue.push(event);
    this.wake?.();
  }

  /** Wakes the generator waiting in `waitForMore` (the run ended). */
  poke(): void {
    this.wake?.();
  }

  /** The next undelivered event, if any. */
  next(): AgentEvent | undefined {
    if (this.head >= this.queue.length) return undefined;
    const event = this.queue[this.head];
    this.queue[this.head++] = undefined as unknown as AgentEvent; // let delivered events be collected
    if (this.caughtUp && this.queue.length - this.head <= MAX_BACKLOG / 2) this.catchUp();
    return event;
  }

  /** Everything delivered: the queue starts over rather than grow with the run, and a held-back engine goes on. */
  drained(): void {
    this.queue.length = 0;
    this.head = 0;
    this.catchUp();
  }

  async waitForMore(): Promise<void> {
    await new Promise<void>((resolve) => (this.wake = resolve));
    this.wake = undefined;
  }

  /** Lets a held-back engine go on (the caller caught up, or the run is over). */
  catchUp(): void {
    const waiting = this.caughtUp;
    this.caughtUp = undefined;
    waiting?.resolve();
  }

  /** The engine's back-pressure hook (`deps.pace`): a promise to wait on while the caller lags, else undefined. */
  readonly pace = (signal: AbortSignal): Promise<void> | undefined => {
    if (this.queue.length - this.head <= MAX_BACKLOG) return undefined;
    if (!this.caughtUp) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.caughtUp = { promise, resolve };
    }
    const waiting = this.caughtUp.promise;
    return new Promise<void>((resolve) => {
      const aborted = () => resolve();
      signal.addEventListener("abort", aborted, { once: true });
      // Removed once caught up: the work's signal may serve the next piece of work, which must find no listener.
      void waiting.then(() => {
        signal.removeEventListener("abort", aborted);
        resolve();
      });
    });
  };
}
