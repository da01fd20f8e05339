import { describe, expect, it } from "vitest";
import { RedactedDeltas } from "../../src/inspect/redacted-deltas.js";
import { REDACTED, secretValues } from "../../src/record/redact.js";
import { leaks, SECRET_PAYLOADS } from "../support/secrets.js";

/** What a page is sent for text streamed in pieces of `size` characters. */
function stream(text: string, size: number, secrets: readonly string[]): string[] {
  const deltas = new RedactedDeltas(secrets);
  const sent: string[] = [];
  for (let i = 0; i < text.length; i += size) {
    const out = deltas.push(text.slice(i, i + size));
    if (out !== "") sent.push(out);
  }
  const rest = deltas.flush();
  if (rest !== "") sent.push(rest);
  return sent;
}

describe("streamed text is redacted though a secret arrives split across deltas", () => {
  for (const payload of SECRET_PAYLOADS) {
    it(payload.name, () => {
      const secrets = secretValues(payload.env ?? {});
      const text = `Here it is:\n${payload.text}\nDone.`;
      for (const size of [1, 3, 7, 64]) {
        const sent = stream(text, size, secrets);
        // No piece and no join of pieces gives a secret away.
        expect(leaks(sent.join(""), payload), `pieces of ${size}`).toEqual([]);
        expect(sent.join("")).toContain(REDACTED);
        expect(sent.join("")).toContain("Here it is:\n");
      }
    });
  }

  it("lets whole lines out as they end, the rest when the stream ends", () => {
    const deltas = new RedactedDeltas([]);
    expect(deltas.push("one ")).toBe("");
    expect(deltas.push("line\ntwo")).toBe("one line\n");
    expect(deltas.flush()).toBe("two");
    expect(deltas.flush()).toBe("");
  });
});
