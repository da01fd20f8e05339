import type { Style } from "./colors.js";
import type { OutputStream } from "./io.js";
import { formatDuration } from "./format.js";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const INTERVAL_MS = 80;

/**
 * A one-line activity indicator for a terminal: a turning frame, a label and the time spent so far. It owns the
 * current line while it spins; `stop()` clears that line so the next output starts on a clean one.
 */
export class Spinner {
  private timer: NodeJS.Timeout | undefined;
  private label = "";
  private startedAt = 0;
  private frame = 0;

  constructor(
    private readonly stream: OutputStream,
    private readonly style: Style,
    private readonly now: () => number = Date.now,
  ) {}

  get spinning(): boolean {
    return this.timer !== undefined;
  }

  /** Starts spinning with `label`, or changes the label (keeping the start time) when already spinning. */
  start(label: string): void {
    this.label = label;
    if (this.timer) {
      this.draw();
      return;
    }
    this.startedAt = this.now();
    this.frame = 0;
    this.draw();
    this.timer = setInterval(() => this.draw(), INTERVAL_MS);
    // The spinner only decorates: it must never keep the process alive on its own.
    this.timer.unref();
  }

  stop(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.stream.write("\r\u001b[2K");
  }

  private draw(): void {
    const elapsed = formatDuration(this.now() - this.startedAt);
    const frame = FRAMES[this.frame++ % FRAMES.length];
    const width = Math.max(20, (this.stream.columns ?? 80) - 1);
    let line = `${frame} ${this.label} ${elapsed}`;
    if (line.length > width) line = `${line.slice(0, width - 1)}…`;
    const [head, ...rest] = line.split(" ");
    this.stream.write(`\r\u001b[2K${this.style.cyan(head)} ${this.style.dim(rest.join(" "))}`);
  }
}
