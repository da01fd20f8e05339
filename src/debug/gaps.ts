import type { AnyTraceLine } from "../record/format.js";

/**
 * A run's lines with each suspension gap closed (docs/durable.md): a resumed run re-enters the state it suspended in
 * (`suspended` … `resumed`, then that state again), which a run that was never suspended enters once. Replay compares
 * the run without the repeated state line; the `suspended` and `resumed` lines themselves are not compared anyway.
 */
export function withoutGaps(lines: readonly AnyTraceLine[]): AnyTraceLine[] {
  const out: AnyTraceLine[] = [];
  let lastState: AnyTraceLine | undefined;
  let reentering = false;
  for (const line of lines) {
    if (line.kind === "resumed" && (line as { recovered?: unknown }).recovered !== true) reentering = true;
    if (line.kind === "state") {
      const state = (line as { state?: unknown }).state;
      if (reentering && lastState && (lastState as { state?: unknown }).state === state) {
        reentering = false;
        continue;
      }
      reentering = false;
      lastState = line;
    }
    out.push(line);
  }
  return out;
}
