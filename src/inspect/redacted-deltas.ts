import { redactText } from "../record/redact.js";

/**
 * Streamed text (`text_delta`, `thinking_delta`) as the inspector's records carry it, redacted: a secret the model
 * writes arrives split across deltas, none of which looks like a secret alone. Text is held back until a line ends
 * (until the END line, inside a PEM private key) and each run of whole lines is redacted as one; the rest is let out
 * by `flush()` when the stream ends. The page shows streamed text a line at a time.
 */
export class RedactedDeltas {
  private held = "";

  constructor(private readonly secrets: readonly string[]) {}

  /** A delta came: the redacted text it completes, or "" while its line is open. */
  push(text: string): string {
    this.held += text;
    const end = this.held.lastIndexOf("\n");
    if (end < 0 || insideKey(this.held.slice(0, end + 1))) return "";
    const lines = this.held.slice(0, end + 1);
    this.held = this.held.slice(end + 1);
    return redactText(lines, this.secrets);
  }

  /** The stream ended: the redacted rest. */
  flush(): string {
    const rest = this.held;
    this.held = "";
    return rest === "" ? "" : redactText(rest, this.secrets);
  }
}

/** Whether text opens a private key it does not close yet (its body lines look like nothing alone). */
function insideKey(text: string): boolean {
  const begin = text.lastIndexOf("-----BEGIN ");
  return begin >= 0 && text.includes("PRIVATE KEY", begin) && !text.includes("-----END ", begin);
}
