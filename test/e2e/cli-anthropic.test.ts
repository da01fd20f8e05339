import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeTempDir, removeDir, runCli } from "../cli/helpers/cli-process.js";
import { anthropicReplies, startAnthropicServer, type AnthropicServer } from "../support/anthropic-server.js";

// `statecraft run` and `statecraft resume` with Claude over the Messages API: the built CLI in real processes, a
// real local server speaking the Anthropic wire, real files.

const KEY = "sk-ant-api03-cli-test-0123456789";
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function server(): Promise<AnthropicServer> {
  const s = await startAnthropicServer();
  cleanups.push(() => s.close());
  return s;
}

function workspace(config?: Record<string, unknown>): { dir: string; env: Record<string, string> } {
  const root = makeTempDir("statecraft-anthropic-cli-");
  cleanups.push(() => removeDir(root));
  const dir = join(root, "project");
  const home = join(root, "home");
  for (const d of [dir, home]) mkdirSync(d, { recursive: true });
  writeFileSync(join(dir, "greeting.txt"), "hello\n");
  if (config) writeFileSync(join(dir, "statecraft.config.json"), JSON.stringify(config));
  return { dir, env: { HOME: home, XDG_CONFIG_HOME: join(root, "config") } };
}

describe("statecraft with --provider anthropic", { timeout: 120_000 }, () => {
  it("run --model anthropic:<name> talks the Messages API with ANTHROPIC_API_KEY, prompt caching on", async () => {
    const { dir, env } = workspace();
    const s = await server();
    s.enqueue(anthropicReplies.fixture("docs-basic-text"));
    const run = await runCli(["run", "--model", "anthropic:claude-sonnet-4-5", "--json", "say hello"], {
      cwd: dir,
      env: { ...env, ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: s.baseUrl, OPENAI_API_KEY: "sk-openai-not-this-one" },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(s.requests).toHaveLength(1);
    const [request] = s.requests;
    expect(request.path).toBe("/v1/messages");
    expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request.body.model).toBe("claude-sonnet-4-5");
    expect(request.body.max_tokens).toBe(8192);
    expect(JSON.stringify(request.body)).toContain('"cache_control":{"type":"ephemeral"}');
    const events = run.stdout.trim().split("\n").map((l) => JSON.parse(l) as { type: string; reason?: string; text?: string });
    expect(events.filter((e) => e.type === "text_delta").map((e) => e.text).join("")).toBe("Hello!");
    expect(events[events.length - 1]).toMatchObject({ type: "turn_end", reason: "final_answer" });
  });

  it("STATECRAFT_PROVIDER=anthropic with STATECRAFT_MODEL and --base-url", async () => {
    const { dir, env } = workspace();
    const s = await server();
    s.enqueue(anthropicReplies.text("Hi from Claude."));
    const run = await runCli(["run", "--base-url", s.baseUrl, "say hello"], { cwd: dir, env: { ...env, STATECRAFT_PROVIDER: "anthropic", STATECRAFT_MODEL: "claude-haiku-4-5", ANTHROPIC_API_KEY: KEY } });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("Hi from Claude.");
    expect(s.requests[0].body.model).toBe("claude-haiku-4-5");
  });

  it("an untrusted project's provider and baseUrl never get ANTHROPIC_API_KEY: refused before any request (exit 2)", async () => {
    const s = await server();
    const { dir, env } = workspace({ provider: "anthropic", baseUrl: s.baseUrl });
    const run = await runCli(["run", "say hello"], { cwd: dir, env: { ...env, ANTHROPIC_API_KEY: KEY } });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("ANTHROPIC_API_KEY is set: statecraft won't send your key to it.");
    expect(s.requests).toHaveLength(0);
  });

  it("a suspended run records its provider; resume with no model flags talks to the same server over the same wire, with the key", async () => {
    const { dir, env } = workspace();
    const s = await server();
    s.enqueue(anthropicReplies.toolUse([{ name: "edit_file", input: { path: "greeting.txt", old_string: "hello", new_string: "hi" }, id: "toolu_edit1" }], "Editing."));
    const keyed = { ...env, ANTHROPIC_API_KEY: KEY };
    const run = await runCli(["run", "--model", "anthropic:claude-sonnet-4-5", "--base-url", s.baseUrl, "--on-ask", "suspend", "say hi"], { cwd: dir, env: keyed });
    expect(run.code, run.stderr).toBe(10);
    const match = /statecraft resume (\S+) --allow (\S+)/.exec(run.stdout);
    expect(match, run.stdout).not.toBeNull();
    const [, session, callId] = match!;
    const stored = JSON.parse(readFileSync(join(dir, ".agent", "runs", `${session}.json`), "utf8")) as { settings: Record<string, unknown> };
    expect(stored.settings).toMatchObject({ provider: "anthropic", model: "claude-sonnet-4-5", baseUrl: s.baseUrl, keySent: true });

    s.enqueue(anthropicReplies.text("Done: it says hi."));
    // OPENAI_* in the environment play no part: the run was an anthropic one.
    const resumed = await runCli(["resume", session!, "--allow", callId!, "--json"], { cwd: dir, env: { ...keyed, OPENAI_API_KEY: "sk-openai", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" } });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(s.requests).toHaveLength(2);
    const second = s.requests[1];
    expect(second.path).toBe("/v1/messages");
    expect(second.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(second.body.model).toBe("claude-sonnet-4-5");
    const turns = second.body.messages;
    expect(turns[1].content).toContainEqual({ type: "tool_use", id: "toolu_edit1", name: "edit_file", input: { path: "greeting.txt", old_string: "hello", new_string: "hi" } });
    expect(turns[2].content[0]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_edit1" });
    expect(readFileSync(join(dir, "greeting.txt"), "utf8")).toBe("hi\n");
  });
});
