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

describe("mayHoldSecret's scan", () => {
  // The prefilter as it was written before its words were grouped by first letter: the grouped one must match exactly
  // the same texts (a text it missed would go unredacted).
  const FLAT =
    /bearer|authoriz|:\/\/[^\s/]*@|private key|key|token|secret|pass|pwd|credential|auth|sk-|gh[pousr]_|github_pat_|glpat-|xox|AKIA|ASIA|AIza|k_live_|k_test_|whsec_|npm_|hf_|eyJ/i;
  const WORDS = ["bearer", "authoriz", "://u@", "://", "private key", "key", "token", "secret", "pass", "pwd", "credential", "auth", "sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox", "AKIA", "ASIA", "AIza", "k_live_", "k_test_", "whsec_", "npm_", "hf_", "eyJ"];
  // Near misses: each word's first letters without its end, and letters the grouped branches start with.
  const NEAR = ["bear", "autho", "au", "ke", "tok", "secre", "pas", "pw", "credentia", "sk", "gh_", "ghx_", "github_pa", "glpat", "xo", "AKI", "ASI", "AIz", "k_liv", "k_tes", "whsec", "npm", "hf", "ey", ":/", "a", "g", "k", "p", "s", "https:/"];
  const mixCase = (word: string, seed: number) => [...word].map((c, i) => ((seed >> i % 16) & 1 ? c.toUpperCase() : c.toLowerCase())).join("");

  it("matches exactly the texts the flat list of words matched, in any case, at any place", () => {
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648);
    const filler = ['{"run":["call_92fc0a0c26c34742b217"]}', " ", '","', "x", "\\n", "0", "é", ""];
    let matched = 0;
    const differ: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      let text = filler[random() % filler.length];
      const parts = 1 + (random() % 3);
      for (let p = 0; p < parts; p++) {
        const pool = random() % 3 === 0 ? WORDS : NEAR;
        text += mixCase(pool[random() % pool.length], random()) + filler[random() % filler.length];
      }
      const expected = FLAT.test(text) || text.includes("://");
      if (expected) matched++;
      if (mayHoldSecret(text) !== expected) differ.push(text);
    }
    expect(differ).toEqual([]);
    // Both kinds were tried many times.
    expect(matched).toBeGreaterThan(3_000);
    expect(matched).toBeLessThan(17_000);
  });

  it("still sends a line with a URL's credentials to the patterns, and leaves one with a bare URL alone", () => {
    expect(redactLine(`{"text":"clone https://deploy:pa55word@example.com/repo"}`, [])).toBe(`{"text":"clone https://[REDACTED]@example.com/repo"}`);
    expect(redactLine(`{"text":"see https://example.com/docs, or mail x@y.z"}`, [])).toBe(`{"text":"see https://example.com/docs, or mail x@y.z"}`);
  });
});
