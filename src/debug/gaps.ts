import type { AnyTraceLine } from "../record/format.js";

/**
 * A session's lines as one story across the gaps of a durable run (docs/durable.md). A process that died went on
 * writing lines after its last checkpoint (a model's streamed text, say); the resumed run goes on from that checkpoint,
 * so those lines are not part of the story: the `resumed` line of a recovered run names the checkpoint's seq
 * (`checkpoint`), and the lines from it up to the `resumed` line are dropped.
 */
export function liveLines(lines: readonly AnyTraceLine[]): AnyTraceLine[] {
  const dead: Array<[number, number]> = [];
  for (const line of lines) {
    const checkpoint = (line as { checkpoint?: unknown }).checkpoint;
    if (line.kind === "resumed" && (line as { recovered?: unknown }).recovered === true && typeof checkpoint === "number" && checkpoint < line.seq) dead.push([checkpoint, line.seq]);
  }
  if (dead.length === 0) return [...lines];
  return lines.filter((line) => !dead.some(([from, to]) => line.seq >= from && line.seq < to));
}

/**
 * Marks, in live lines, the state line by which a resumed run re-enters the state it stopped in (`suspended` …
 * `resumed`, or a crash and its `resumed`, then that state again), which a run never stopped enters once.
 */
export function reentries(lines: readonly AnyTraceLine[]): Set<AnyTraceLine> {
  const out = new Set<AnyTraceLine>();
  let lastState: AnyTraceLine | undefined;
  let reentering = false;
  for (const line of lines) {
    if (line.kind === "resumed") reentering = true;
    if (line.kind !== "state") continue;
    const state = (line as { state?: unknown }).state;
    if (reentering && lastState && (lastState as { state?: unknown }).state === state) out.add(line);
    else lastState = line;
    reentering = false;
  }
  return out;
}

/**
 * A run's lines with each gap closed: the dead process's lines after its checkpoint and the re-entered state's
 * repeated line dropped. Replay compares the run on these; the `suspended` and `resumed` lines themselves are not
 * compared anyway. A recovered run reports on its re-entry line the results of calls that finished before the crash
 * (the dead process never reached the line after the batch that would have had them): they go on to the next state
 * line, where a run never stopped reports them, ahead of that line's own.
 */
export function withoutGaps(lines: readonly AnyTraceLine[]): AnyTraceLine[] {
  const live = liveLines(lines);
  const repeated = reentries(live);
  const out: AnyTraceLine[] = [];
  let carried: unknown[] = [];
  for (const line of live) {
    const details = (line as { details?: { results?: unknown } }).details;
    if (repeated.has(line)) {
      if (Array.isArray(details?.results)) carried = [...carried, ...details.results];
      continue;
    }
    if (carried.length > 0 && line.kind === "state") {
      const own = Array.isArray(details?.results) ? details.results : [];
      out.push({ ...line, details: { ...details, results: [...carried, ...own] } } as AnyTraceLine);
      carried = [];
      continue;
    }
    out.push(line);
  }
  return out;
}
