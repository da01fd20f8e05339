let lastMs = Number.NaN;
let lastText = "";

/**
 * `new Date(ms).toISOString()`, remembering the last answer: the lines of a run come many to a millisecond, so most
 * calls return the text already made instead of formatting a date again.
 */
export function isoTime(ms: number = Date.now()): string {
  if (ms !== lastMs) {
    lastText = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastText;
}
