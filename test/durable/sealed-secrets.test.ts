import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defineTool, fileRunStore, query, resume, scriptedModel } from "../../src/index.js";
import { secretSealer } from "../../src/record/sealed-secrets.js";
import { readFileTool } from "../../src/tools/builtin/index.js";
import { collect, removeDir, tempDir } from "../support/engine.js";

// Hole 4: secrets sat unredacted in `.agent/runs/<id>.json`, where a later run's read_file found them. A stored run
// now keeps every secret redaction would hide sealed (AES-256-GCM under a key from the session key), and resume
// gets the exact values back.

const ENV_SECRET = "env-secret-value-4242";
/** Secrets of every class redaction knows, as a call's input and a tool's output would carry them. */
const SECRETS = [
  ENV_SECRET,
  "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123456789",
  "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij0123",
  "AKIAABCDEFGHIJKLMNOP",
  "hunter2-db-password",
  "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
  "user:p4ssw0rd-in-url",
  "bearer-token-abcdefgh12345",
];
const COMMAND = [
  `export API_TOKEN="${SECRETS[0]}"`,
  `OPENAI_API_KEY=${SECRETS[1]}`,
  `git push https://${SECRETS[2]}@github.com/x/y`,
  `aws --key ${SECRETS[3]}`,
  `PGPASSWORD='${SECRETS[4]}' psql`,
  `curl -H "Authorization: Bearer ${SECRETS[7]}" -d '${SECRETS[5]}' https://${SECRETS[6]}@db.example`,
  "echo [SEALED:] and [SEALED:00ff] are text",
].join(" && ");

let cwd: string;
const saved = process.env.DEPLOY_TOKEN;
beforeEach(() => {
  cwd = tempDir();
  process.env.DEPLOY_TOKEN = ENV_SECRET;
});
afterEach(() => {
  removeDir(cwd);
  if (saved === undefined) delete process.env.DEPLOY_TOKEN;
  else process.env.DEPLOY_TOKEN = saved;
});

const runs: string[] = [];
const shell = defineTool({
  name: "deploy",
  description: "Runs a deploy command.",
  inputSchema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  risk: "exec",
  execute: (input: { command: string }) => {
    runs.push(input.command);
    return "deployed";
  },
});

const storedText = () => readdirSync(join(cwd, ".agent", "runs")).filter((f) => f.endsWith(".json")).map((f) => readFileSync(join(cwd, ".agent", "runs", f), "utf8")).join("\n");

describe("a stored run keeps its secrets sealed, and resumes exactly", () => {
  it("no secret is in the file (several classes), the conversation's too; resume runs the exact command", async () => {
    runs.length = 0;
    const model = scriptedModel([{ text: `I was given ${SECRETS[1]}`, toolCalls: [{ name: "deploy", input: { command: COMMAND } }] }]);
    const { result } = await collect(query(`deploy with DB_PASSWORD=${SECRETS[4]}`, { model, tools: [shell], cwd, permissions: { whenUnanswered: "suspend" } }));
    if (result.status !== "suspended") throw new Error("not suspended");
    const text = storedText();
    const through = SECRETS.filter((s) => text.includes(s));
    expect(through).toEqual([]);
    expect(text).toContain("[SEALED:");
    // The agent's own read_file of the stored run finds no secret either.
    const reader = scriptedModel([{ toolCalls: [{ name: "read_file", input: { path: `.agent/runs/${result.sessionId}.json` } }] }, { text: "done" }]);
    const read = await collect(query("look", { model: reader, tools: [readFileTool()], cwd, permissions: { mode: "bypassPermissions" } }));
    const seen = JSON.stringify(read.events.filter((e) => e.type === "tool_result"));
    expect(SECRETS.filter((s) => seen.includes(s))).toEqual([]);
    // Loaded back: exact.
    const loaded = await fileRunStore(cwd).load(result.sessionId);
    expect(loaded?.pending[0].input).toEqual({ command: COMMAND });
    expect(JSON.stringify(loaded?.messages)).toContain(SECRETS[1]);
    const resumed = await collect(resume(result.sessionId, { model: scriptedModel([{ text: "done" }]), tools: [shell], cwd, answers: { [result.pending[0].callId]: "allow" } }));
    expect(resumed.result.status).toBe("completed");
    expect(runs).toEqual([COMMAND]);
  });

  it("a token edited, moved to another run, or made with another key is RUN_DAMAGED", async () => {
    const model = () => scriptedModel([{ toolCalls: [{ name: "deploy", input: { command: `export API_TOKEN="${ENV_SECRET}x"` } }] }]);
    const a = await collect(query("a", { model: model(), tools: [shell], cwd, permissions: { whenUnanswered: "suspend" }, sessionId: "a" }));
    await collect(query("b", { model: model(), tools: [shell], cwd, permissions: { whenUnanswered: "suspend" }, sessionId: "b" }));
    expect(a.result.status).toBe("suspended");
    const file = (s: string) => join(cwd, ".agent", "runs", `${s}.json`);
    const tokenOf = (s: string) => /\[SEALED:[0-9a-f]+\]/.exec(readFileSync(file(s), "utf8"))![0];
    const original = readFileSync(file("a"), "utf8");
    const foreign = secretSealer(Buffer.alloc(32, 9), ["x"]).seal(`"API_TOKEN=${ENV_SECRET}"`);
    const edits: Array<[string, string]> = [
      ["a token's bytes changed", original.replace(/\[SEALED:([0-9a-f]{10})/, (_m, hex: string) => `[SEALED:${hex.slice(0, -1)}${hex.at(-1) === "0" ? "1" : "0"}`)],
      ["a token of another run", original.replace(tokenOf("a"), tokenOf("b"))],
      ["a token made with another key", original.replace(tokenOf("a"), /\[SEALED:[0-9a-f]+\]/.exec(foreign)![0])],
      ["a token cut short", original.replace(tokenOf("a"), "[SEALED:abcd]")],
    ];
    const through: string[] = [];
    for (const [name, text] of edits) {
      writeFileSync(file("a"), text);
      let code: string | undefined;
      try {
        await fileRunStore(cwd).load("a");
      } catch (error) {
        code = (error as { code?: string }).code;
      }
      if (code !== "RUN_DAMAGED") through.push(name);
    }
    expect(through).toEqual([]);
    writeFileSync(file("a"), original);
    expect((await fileRunStore(cwd).load("a"))?.pending[0].input).toEqual({ command: `export API_TOKEN="${ENV_SECRET}x"` });
    expect(existsSync(file("b"))).toBe(true);
  });

  it("the sealer gives back any text exactly, tokens and lookalikes included", () => {
    const sealer = secretSealer(Buffer.alloc(32, 1), ["scope"], [ENV_SECRET]);
    const texts = [COMMAND, JSON.stringify({ c: COMMAND }), JSON.stringify(JSON.stringify({ c: COMMAND })), "[SEALED:]]", "[SEALED:", "API_KEY=[SEALED:ab]", "no secret here"];
    for (const text of texts) {
      const sealed = sealer.seal(text);
      expect(sealer.unseal(sealed)).toBe(text);
      for (const secret of SECRETS) expect(sealed.includes(secret), `${secret} in ${sealed}`).toBe(false);
    }
  });
});
