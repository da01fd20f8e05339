import { describe, expect, it } from "vitest";
import { mayHoldSecret, redactLine, redactOwnPart, secretValues } from "../../src/record/redact.js";

// Lines shaped like the trace's state lines: fixed text, then a part of their own (the details).
const head = `{"v":1,"sessionId":"s-1","seq":7,"time":"2026-12-01T14:00:48.932Z","kind":"state","state":"execute_tool","turn":2,"details":`;
const owns = [
  `{"run":["call_92fc0a0c26c34742b217"]}`,
  `{"calls":[{"id":"c1","name":"bash","input":{"command":"curl -H 'Authorization: Bearer abcdefghijklmnop' https://x"}}]}`,
  `{"results":[{"content":"export API_TOKEN=\\"hunter2hunter2\\"","isError":false}]}`,
  `{"response":{"text":"see https://user:pa55word@example.com/repo","toolCalls":[]}}`,
  `{"text":"key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789 and ghp_abcdefghijklmnopqrstuvwxyz0123456789"}`,
  `{"text":"-----BEGIN RSA PRIVATE KEY-----\\nMIIEow\\n-----END RSA PRIVATE KEY-----"}`,
  `{"text":"the value is s3cr3t-value-from-env"}`,
  // A URL's start in the part, its @ only after it: the whole line is redacted as redactLine would.
  `{"text":"https://`,
];

describe("redactOwnPart", () => {
  const secrets = secretValues({ MY_SERVICE_TOKEN: "s3cr3t-value-from-env" });

  it("gives the same text as redactLine for a line whose fixed pieces hold nothing to redact", () => {
    expect(mayHoldSecret(head)).toBe(false);
    for (const own of owns) {
      const line = `${head}${own}}`;
      expect(redactOwnPart(line, own, secrets)).toBe(redactLine(line, secrets));
    }
    // A secret value found anywhere on the line, in the fixed pieces too.
    const withSecret = `{"v":1,"sessionId":"s3cr3t-value-from-env","seq":1,"details":{}}`;
    expect(redactOwnPart(withSecret, "{}", secrets)).toBe(redactLine(withSecret, secrets));
    expect(redactOwnPart(withSecret, "{}", secrets)).toContain("[REDACTED]");
  });

  it("redacts what the patterns find in the line's own part", () => {
    const own = owns[1];
    const out = redactOwnPart(`${head}${own}}`, own, []);
    expect(out).not.toContain("abcdefghijklmnop");
    expect(out).toContain("[REDACTED]");
  });

  it("is a prefilter that never misses a URL's credentials split from the part tested", () => {
    expect(mayHoldSecret(`{"text":"https://`)).toBe(true);
    expect(mayHoldSecret(`{"run":["call_92fc0a0c26c34742b217"]}`)).toBe(false);
  });
});
