/**
 * Listens for Ctrl-C (SIGINT) and SIGTERM while a run is going. The handler gets how many interrupts came so far,
 * so the first can stop the run gracefully and a second can leave at once. Returns the function that stops
 * listening (Node's default — exit at once — applies again after it).
 */
export function listenForInterrupts(handler: (count: number, signal: NodeJS.Signals) => void): () => void {
  let count = 0;
  const onSignal = (signal: NodeJS.Signals) => handler(++count, signal);
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return () => {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  };
}
