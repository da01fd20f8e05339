/** True when the run has made `maxTurns` model calls: one more would exceed the limit. */
export function turnsExhausted(context: { turn: number; maxTurns: number }): boolean {
  return context.turn >= context.maxTurns;
}
