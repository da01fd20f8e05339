/** Emitted on `process` when stdout's reader went away (`statecraft run --json | head -3`): a run stops as on Ctrl-C. */
export const OUTPUT_CLOSED = "statecraft:output-closed";

/**
 * Listens for Ctrl-C (SIGINT) and SIGTERM while a run is going. The handler gets how many interrupts came so far,
 * so the first can stop the run gracefully and a second can leave at once. Returns the function that stops
 * listening (Node's default — exit at once — applies again after it).
 */
export function listenForInterrupts(handler: (count: number, signal: NodeJS.Signals) => void): () => void {
  let count = 0;
  const onSignal = (signal: NodeJS.Signals) => handler(++count, signal);
  // The reader of stdout is gone for good: stop the run gracefully, once.
  const onOutputClosed = () => {
    if (count === 0) handler(++count, "SIGPIPE");
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  process.on(OUTPUT_CLOSED, onOutputClosed);
  return () => {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    process.off(OUTPUT_CLOSED, onOutputClosed);
  };
}
