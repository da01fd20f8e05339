import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { defineTool, scriptedModel } from "../../src/index.js";
import { redactLine, secretValues } from "../../src/record/redact.js";
import { loadSession } from "../../src/debug/session.js";
import { replay } from "../../src/debug/replay.js";
import { buildTimeline, formatTimeline } from "../../src/debug/timeline.js";
import { removeDir, tempDir } from "../support/engine.js";
import { record } from "./helpers.js";

const SECRETS = {
  STATECRAFT_TEST_API_KEY: "key-value-0123456789",
  STATECRAFT_TEST_TOKEN: "token-value-abcdefgh",
  STATECRAFT_TEST_SECRET: "secret-value-XYZ987",
};
const OPENAI_STYLE = `sk-proj-${"Q".repeat(44)}`;
const BASIC = "dXNlcjpwYXNzd29yZA==";

let cwd: string;
beforeEach(() => {
  cwd = tempDir();
  Object.assign(process.env, SECRETS);
});
afterEach(() => {
  for (const name of Object.keys(SECRETS)) delete process.env[name];
  removeDir(cwd);
});

describe("secrets never reach the trace", () => {
  it("tool inputs and outputs: environment secrets, Authorization headers, API keys; the redacted trace still replays identical", async () => {
    const http = defineTool({
      name: "http",
      description: "Calls a URL with headers.",
      inputSchema: { type: "object", properties: { url: { type: "string" }, headers: { type: "object" } }, required: ["url"] },
      risk: "read",
      execute: (input: { url: string; headers?: Record<string, string> }) =>
        [
          `GET ${input.url}`,
          `> Authorization: Basic ${BASIC}`,
          `> X-Api-Key: ${process.env.STATECRAFT_TEST_API_KEY}`,
          `< {"token": "${process.env.STATECRAFT_TEST_TOKEN}", "echo": ${JSON.stringify(input.headers ?? {})}}`,
          `config: OPENAI_API_KEY=${OPENAI_STYLE}`,
        ].join("\n"),
    });
    const model = scriptedModel([
      {
        text: `Using ${SECRETS.STATECRAFT_TEST_SECRET} as told.`,
        toolCalls: [{ name: "http", input: { url: "https://example.test/", headers: { authorization: `token ${SECRETS.STATECRAFT_TEST_TOKEN}`, "x-key": SECRETS.STATECRAFT_TEST_API_KEY } } }],
      },
      { text: "Done." },
    ]);
    const recorded = await record(cwd, `call it with ${SECRETS.STATECRAFT_TEST_SECRET}`, { model, tools: [http] });
    const trace = readFileSync(recorded.file, "utf8");
    const audit = readFileSync(join(cwd, ".agent", "audit.jsonl"), "utf8");
    for (const text of [trace, audit]) {
      for (const secret of [...Object.values(SECRETS), OPENAI_STYLE, BASIC]) expect(text).not.toContain(secret);
      expect(text).toContain("[REDACTED]");
    }
    expect(trace).toContain("Authorization: Basic [REDACTED]");
    const session = await loadSession(recorded.file, recorded.sessionId);
    expect((await replay(session)).divergence).toBeUndefined();
    const shown = formatTimeline(buildTimeline(session));
    for (const secret of Object.values(SECRETS)) expect(shown).not.toContain(secret);
  });

  it("redactLine: header values of any scheme, quoted, escaped or plain; well-known key formats; ordinary words stay", () => {
    const secrets = secretValues({ SOME_KEY: "abcdef123456", SHORT_TOKEN: "abc", HOME: "/home/user-abcdef" });
    expect(secrets).toEqual(["abcdef123456"]);
    const cases: Array<[string, string]> = [
      [JSON.stringify({ c: 'curl -H "Authorization: Basic dXNlcjpwYXNz" x' }), '{"c":"curl -H \\"Authorization: Basic [REDACTED]\\" x"}'],
      [JSON.stringify({ c: JSON.stringify({ authorization: "token ghp_short" }) }), '{"c":"{\\"authorization\\":\\"token [REDACTED]\\"}"}'],
      ["Authorization: Bearer abcdefghijklmnop", "Authorization: Bearer [REDACTED]"],
      ["Proxy-Authorization: Basic abcdef123456", "Proxy-Authorization: Basic [REDACTED]"],
      [JSON.stringify({ headers: { Authorization: "plainvalue" } }), '{"headers":{"Authorization":"[REDACTED]"}}'],
      [`key ${"ghp_" + "b".repeat(36)} aws AKIAABCDEFGHIJKLMNOP slack xoxb-1234567890-abc`, "key [REDACTED] aws [REDACTED] slack [REDACTED]"],
      ["401 Unauthorized: missing authorization; run the task-runner with sk-learn", "401 Unauthorized: missing authorization; run the task-runner with sk-learn"],
      // Each pattern alone, whatever else the line holds (one scan decides whether the patterns run at all).
      ["PROXY-AUTHORIZATION=opaque-value-123", "PROXY-AUTHORIZATION=[REDACTED]"],
      ["Bearer abcdefghijklmnop", "Bearer [REDACTED]"],
      [`{"k":"${"AIza" + "c".repeat(35)}"}`, '{"k":"[REDACTED]"}'],
      [`github_pat_${"d".repeat(40)}`, "[REDACTED]"],
      [`sk-ant-api03-${"e".repeat(40)}`, "[REDACTED]"],
      ['{"v":1,"seq":3,"state":"call_model","details":{"messages":4}}', '{"v":1,"seq":3,"state":"call_model","details":{"messages":4}}'],
      ['{"out":"abcdef123456 and bearer abcdefghijklmnop"}', '{"out":"[REDACTED] and bearer abcdefghijklmnop"}'],
    ];
    for (const [line, expected] of cases) expect(redactLine(line, secrets)).toBe(expected);
  });
});
