import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeTempDir, removeDir, runCli } from "../cli/helpers/cli-process.js";
import { replies, startOpenAIServer, type OpenAIServer } from "../support/openai-server.js";

// `statecraft resume` with no model flags talks to the model name and server the run recorded, and sends the user's
// key only where the run had sent it. Real processes (the built CLI), real local servers that record each request's
// Authorization header, real files.

const KEY = "sk-test-resume-0123456789abcdefghij";
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function server(): Promise<OpenAIServer> {
  const s = await startOpenAIServer();
  cleanups.push(() => s.close());
  return s;
}

/** A workspace with a file to edit, and a user config folder of its own (where the session key is made). */
function workspace(): { dir: string; env: Record<string, string> } {
  const root = makeTempDir("statecraft-resume-model-");
  cleanups.push(() => removeDir(root));
  const dir = join(root, "project");
  const home = join(root, "home");
  for (const d of [dir, home]) mkdirSync(d, { recursive: true });
  writeFileSync(join(dir, "greeting.txt"), "hello\n");
  return { dir, env: { HOME: home, XDG_CONFIG_HOME: join(root, "config") } };
}


const EDIT = { name: "edit_file", arguments: { path: "greeting.txt", old_string: "hello", new_string: "hi" } };

/** Runs against server A until the run suspends at its edit (exit 10); the session and the pending call's id. */
async function suspendAt(a: OpenAIServer, dir: string, env: Record<string, string>, args: string[]): Promise<{ session: string; callId: string }> {
  a.enqueue(replies.toolCalls([EDIT], { text: "Editing." }));
  const run = await runCli(["run", ...args, "--on-ask", "suspend", "say hi"], { cwd: dir, env });
  expect(run.code, run.stderr).toBe(10);
  const match = /statecraft resume (\S+) --allow (\S+)/.exec(run.stdout);
  expect(match, run.stdout).not.toBeNull();
  return { session: match![1]!, callId: match![2]! };
}

const storedFile = (dir: string, session: string) => join(dir, ".agent", "runs", `${session}.json`);

describe("statecraft resume uses the model and server the run recorded", { timeout: 120_000 }, () => {
  it("with no model flags, a new process talks to the recorded server with the recorded name and the user's key", async () => {
    const { dir, env } = workspace();
    const a = await server();
    const elsewhere = await server();
    const { session, callId } = await suspendAt(a, dir, { ...env, OPENAI_API_KEY: KEY }, ["--base-url", a.baseURL, "--model", "model-a"]);
    expect(a.chatRequests).toHaveLength(1);
    expect(a.chatRequests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);

    a.enqueue(replies.text("Done: it says hi."));
    // The environment names another server and model: the run's recorded ones win (flags would win over them).
    const resumed = await runCli(["resume", session, "--allow", callId, "--json"], {
      cwd: dir,
      env: { ...env, OPENAI_API_KEY: KEY, OPENAI_BASE_URL: elsewhere.baseURL, STATECRAFT_MODEL: "other-model" },
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(a.chatRequests).toHaveLength(2);
    expect(a.chatRequests[1]!.body.model).toBe("model-a");
    expect(a.chatRequests[1]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(elsewhere.requests).toHaveLength(0);
    expect(readFileSync(join(dir, "greeting.txt"), "utf8")).toBe("hi\n");
    const events = resumed.stdout.trim().split("\n").map((l) => JSON.parse(l) as { type: string; reason?: string });
    expect(events.filter((e) => e.type === "turn_end")).toEqual([expect.objectContaining({ reason: "final_answer" })]);
  });

  it("--base-url B overrides the recorded server (B gets the key and the recorded name); --model overrides the name", async () => {
    const { dir, env } = workspace();
    const a = await server();
    const b = await server();
    const second = await suspendAt(a, dir, { ...env, OPENAI_API_KEY: KEY }, ["--base-url", a.baseURL, "--model", "model-a"]);
    b.enqueue(replies.text("Done."));
    const toB = await runCli(["resume", second.session, "--allow", second.callId, "--base-url", b.baseURL], { cwd: dir, env: { ...env, OPENAI_API_KEY: KEY } });
    expect(toB.code, toB.stderr).toBe(0);
    expect(a.chatRequests).toHaveLength(1);
    expect(b.chatRequests).toHaveLength(1);
    expect(readFileSync(join(dir, "greeting.txt"), "utf8")).toBe("hi\n");
    expect(b.chatRequests[0]!.body.model).toBe("model-a");
    expect(b.chatRequests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);

    writeFileSync(join(dir, "greeting.txt"), "hello\n");
    const third = await suspendAt(a, dir, { ...env, OPENAI_API_KEY: KEY }, ["--base-url", a.baseURL, "--model", "model-a"]);
    a.enqueue(replies.text("Done."));
    const renamed = await runCli(["resume", third.session, "--allow", third.callId, "--model", "model-z"], { cwd: dir, env: { ...env, OPENAI_API_KEY: KEY } });
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(a.chatRequests.at(-1)!.body.model).toBe("model-z");
    expect(a.chatRequests.at(-1)!.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it("a bad --base-url is a usage error naming it, before any request", async () => {
    const { dir, env } = workspace();
    const a = await server();
    const { session, callId } = await suspendAt(a, dir, env, ["--base-url", a.baseURL, "--model", "model-a"]);
    for (const bad of ["ftp://127.0.0.1/v1", "not a url", "file:///etc/passwd"]) {
      const result = await runCli(["resume", session, "--allow", callId, "--base-url", bad], { cwd: dir, env });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/--base-url: .* is not an http\(s\) URL/);
    }
    expect(a.chatRequests).toHaveLength(1);
  });
});

describe("the user's key goes to a recorded server only when the run sent it there", { timeout: 120_000 }, () => {
  it("a run of an untrusted project's baseUrl made with no key: resume with OPENAI_API_KEY set does not send it there", async () => {
    const { dir, env } = workspace();
    const project = await server();
    writeFileSync(join(dir, "statecraft.config.json"), JSON.stringify({ baseUrl: project.baseURL, model: "project-model" }));
    // No key at run time: the project's server is used (it gets no key), as for run.
    const { session, callId } = await suspendAt(project, dir, env, []);
    expect(project.chatRequests[0]!.headers.authorization).not.toContain(KEY);

    project.enqueue(replies.text("Done."));
    const resumed = await runCli(["resume", session, "--allow", callId], { cwd: dir, env: { ...env, OPENAI_API_KEY: KEY } });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(project.chatRequests).toHaveLength(2);
    expect(project.chatRequests[1]!.body.model).toBe("project-model");
    for (const request of project.requests) expect(JSON.stringify(request.headers)).not.toContain(KEY);
    expect(resumed.stderr).toMatch(/without an API key; OPENAI_API_KEY is not sent to it now/);
    expect(resumed.stderr).toContain(`--base-url ${project.baseURL}`);
  });

  it("a tampered stored run is refused (its signature does not match): the planted server gets nothing, nor does the key", async () => {
    const { dir, env } = workspace();
    const a = await server();
    const attacker = await server();
    attacker.enqueue(replies.text("pwned"), replies.text("pwned"), replies.text("pwned"), replies.text("pwned"));
    const keyless = await suspendAt(a, dir, env, ["--base-url", a.baseURL, "--model", "model-a"]);
    const file = storedFile(dir, keyless.session);
    const original = readFileSync(file, "utf8");
    const stored = JSON.parse(original) as { settings: Record<string, unknown>; sig?: string };
    expect(stored.settings).toMatchObject({ baseUrl: a.baseURL, model: "model-a", keySent: false });
    const tampered: Array<(s: typeof stored) => void> = [
      (s) => (s.settings.baseUrl = attacker.baseURL),
      (s) => (s.settings.keySent = true),
      (s) => {
        s.settings.baseUrl = attacker.baseURL;
        s.settings.keySent = true;
        delete s.sig;
      },
      (s) => (s.settings.model = "attacker-model"),
    ];
    for (const tamper of tampered) {
      const copy = JSON.parse(original) as typeof stored;
      tamper(copy);
      writeFileSync(file, JSON.stringify(copy));
      const result = await runCli(["resume", keyless.session, "--allow", keyless.callId], { cwd: dir, env: { ...env, OPENAI_API_KEY: KEY } });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/can't be resumed: its signature does not match/);
    }
    expect(attacker.requests).toHaveLength(0);
    expect(a.chatRequests).toHaveLength(1);
    expect(readFileSync(join(dir, "greeting.txt"), "utf8")).toBe("hello\n");
  });
});
