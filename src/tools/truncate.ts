/**
 * Cuts text longer than `max` characters in the middle, keeping its head and tail (where errors and summaries
 * usually are), with a note saying how much was left out.
 */
export function truncateMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const omitted = text.length - max;
  const note = `\n… [${omitted} characters omitted] …\n`;
  const keep = Math.max(0, max - note.length);
  const head = Math.ceil(keep / 2);
  const tail = keep - head;
  return text.slice(0, head) + note + (tail > 0 ? text.slice(text.length - tail) : "");
}
