import { describe, expect, it } from "vitest";
import { isSecretName, REDACTED, redactLine, redactText, redactValue, secretValues } from "../../src/record/redact.js";
import { escapings, leaks, SECRET_PAYLOADS } from "../support/secrets.js";

/** The payload's text as the sinks hold it: a JSON string, a JSON string inside one (call arguments), and deeper. */
function nestings(text: string): string[] {
  const once = JSON.stringify({ content: text });
  const twice = JSON.stringify({ arguments: JSON.stringify({ text }) });
  const thrice = JSON.stringify({ content: JSON.stringify({ output: JSON.stringify({ text }) }) });
  const atStart = JSON.stringify([text, `\n${text}`, `\t${text}`]);
  return [once, twice, thrice, atStart];
}

describe("redactLine: every payload, however deep in JSON", () => {
  for (const payload of SECRET_PAYLOADS) {
    it(payload.name, () => {
      const secrets = secretValues(payload.env ?? {});
      for (const line of nestings(payload.text)) {
        const redacted = redactLine(line, secrets);
        expect(leaks(redacted, payload), redacted).toEqual([]);
        expect(redacted).toContain(REDACTED);
        // Still JSON, and what was not secret is still there.
        expect(() => JSON.parse(redacted)).not.toThrow();
      }
      const text = redactText(payload.text, secrets);
      expect(leaks(text, payload), text).toEqual([]);
      expect(text).toContain(REDACTED);
      expect(leaks(JSON.stringify(redactValue({ deep: [{ text: payload.text }] }, secrets)), payload)).toEqual([]);
    });
  }

  it("keeps what is not secret: the rest of a URL, a header's name, the PEM armour, a variable's name", () => {
    const secrets: string[] = [];
    expect(redactText("git clone https://alice:pw-123456@git.example.test/team/repo.git", secrets)).toBe(`git clone https://${REDACTED}@git.example.test/team/repo.git`);
    expect(redactText("x\nAuthorization: Basic YWxpY2U6cHc=\ny", secrets)).toBe(`x\nAuthorization: Basic ${REDACTED}\ny`);
    expect(redactText("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIB\n-----END EC PRIVATE KEY-----\nok", secrets)).toBe(
      `-----BEGIN EC PRIVATE KEY-----${REDACTED}-----END EC PRIVATE KEY-----\nok`,
    );
    expect(redactText("DB_PASS=hunter22 next", secrets)).toBe(`DB_PASS=${REDACTED} next`);
    expect(redactLine('{"c":"{\\"password\\":\\"a b c\\",\\"user\\":\\"bob\\"}"}', secrets)).toBe(`{"c":"{\\"password\\":\\"${REDACTED}\\",\\"user\\":\\"bob\\"}"}`);
  });

  it("leaves ordinary lines alone (no false alarms on words, numbers under secret-looking keys, plain URLs)", () => {
    const secrets = secretValues({ HOME: "/home/someone", PWD: "/work/project", OLDPWD: "/work", PATH: "/usr/bin:/bin" });
    expect(secrets).toEqual([]);
    const lines = [
      '{"v":1,"seq":3,"state":"call_model","details":{"messages":4}}',
      '{"kind":"compaction","turn":2,"tokensBefore":9000,"tokensAfter":1200}',
      '{"options":{"maxTokens":100,"maxToolCalls":12}}',
      '{"token":5,"password":null,"secret":{"nested":true},"api_key":["a"]}',
      JSON.stringify({ content: "see https://example.test/path?x=1 or mail user@example.test; ssh://git@github.com/a/b" }),
      JSON.stringify({ content: "the keyboard and the monkey passed 3 tests; author: bob; PWD=/work/project" }),
      JSON.stringify({ content: "401 Unauthorized: missing authorization; run the task-runner with sk-learn" }),
      JSON.stringify({ content: "ask for the password, then type it" }),
      '{"out":"bearer abcdefghijklmnop"}',
    ];
    for (const line of lines) expect(redactLine(line, secrets)).toBe(line);
  });

  it("secret variable names: DB_PASS, MYSQL_PWD, *_CREDENTIALS, *_PASSWD and kin; not PWD, OLDPWD, BYPASS", () => {
    for (const name of ["DB_PASS", "MYSQL_PWD", "AWS_CREDENTIALS", "SMTP_PASSWD", "GITHUB_TOKEN", "OPENAI_API_KEY", "SSH_PRIVATE_KEY", "PGPASSWORD", "APP_SECRET", "NPM_AUTH", "db_password", "API_KEY", "TOKEN"]) {
      expect(isSecretName(name), name).toBe(true);
    }
    for (const name of ["PWD", "OLDPWD", "BYPASS", "PATH", "HOME", "KEYBOARD", "MONKEY", "PASSED", "TOKENS", "AUTHOR"]) expect(isSecretName(name), name).toBe(false);
    const values = secretValues({ DB_PASS: 'a"b\\c-d', SHORT_PASS: "abc", PWD: "/work/project" });
    // As it appears in JSON, in JSON inside JSON, and one level deeper; a short value is not taken (too many false hits).
    expect(values).toEqual(escapings('a"b\\c-d').slice(1).reverse());
  });

  it("a value right after an escape (\\n then the secret starting with n) leaves valid JSON", () => {
    const secrets = secretValues({ X_TOKEN: "nightly-token-1" });
    const line = JSON.stringify({ content: "a\nnightly-token-1" });
    const redacted = redactLine(line, secrets);
    expect(redacted).not.toContain("nightly-token-1");
    expect(() => JSON.parse(redacted)).not.toThrow();
  });
});
