import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events.js";
import { replies, startOpenAIServer, type OpenAIServer } from "../support/openai-server.js";
import { makeTempDir, removeDir, runCli } from "../cli/helpers/cli-process.js";

const BUILTIN_TOOLS = ["bash", "edit_file", "glob", "grep", "list_dir", "read_file", "write_file"];
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function workspace(): string {
  const dir = makeTempDir("statecraft-openai-");
  cleanups.push(() => removeDir(dir));
  return dir;
}

async function server(): Promise<OpenAIServer> {
  const s = await startOpenAIServer();
  cleanups.push(() => s.close());
  return s;
}

/** Every file under `.agent/` (trace, transcript, audit) as one text. */
function agentFiles(dir: string): string {
  const root = join(dir, ".agent");
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(entry.parentPath, entry.name), "utf8"))
    .join("\n");
}

/**
 * A local server as Ollama, llama.cpp and vLLM are: `GET /v1/models` lists `models`, a chat request gets a streamed
 * answer; the model each chat request named is kept.
 */
async function localServer(models: string[]): Promise<{ baseURL: string; chatModels: string[] }> {
  const chatModels: string[] = [];
  const local: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => {
      if (request.method === "GET" && request.url === "/v1/models") {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ object: "list", data: models.map((id) => ({ id, object: "model" })) }));
        return;
      }
      chatModels.push((JSON.parse(Buffer.concat(chunks).toString("utf8")) as { model: string }).model);
      response.writeHead(200, { "content-type": "text/event-stream" });
      const lines = (replies.text("local answer") as { lines: string[] }).lines;
      response.end(lines.map((line) => `${line}\n\n`).join(""));
    });
  });
  await new Promise<void>((resolve) => local.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise<void>((resolve) => local.close(() => resolve())));
  return { baseURL: `http://127.0.0.1:${(local.address() as AddressInfo).port}/v1`, chatModels };
}

describe("statecraft run against a local OpenAI-compatible server", { timeout: 60_000 }, () => {
  it("OPENAI_BASE_URL + STATECRAFT_MODEL: a tool-using run, streamed, exit 0", async () => {
    const dir = workspace();
    writeFileSync(join(dir, "a.txt"), "alpha\n");
    const api = await server();
    api.enqueue(
      replies.toolCalls([{ name: "list_dir", arguments: { path: "." } }], { text: "Let me look.", usage: { prompt_tokens: 300, completion_tokens: 20 } }),
      replies.text("There is one file, a.txt.", { usage: { prompt_tokens: 400, completion_tokens: 12 } }),
    );
    const result = await runCli(["run", "what is here?"], { cwd: dir, env: { OPENAI_BASE_URL: api.baseURL, STATECRAFT_MODEL: "test-model" } });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Let me look\.\n {2}✓ list_dir \. · .* · \d+ms\nThere is one file, a\.txt\.\n/);
    expect(result.stdout).toContain("■ final_answer (done) · 2 turns · 1 tool call · 732 tokens (700 in, 32 out)");

    expect(api.chatRequests).toHaveLength(2);
    const [first, second] = api.chatRequests.map((r) => r.body);
    expect(first.model).toBe("test-model");
    expect(first.stream).toBe(true);
    expect(first.tools!.map((t) => t.function.name).sort()).toEqual(BUILTIN_TOOLS);
    expect(first.messages!.at(-1)).toMatchObject({ role: "user", content: "what is here?" });
    // The tool result went back to the server, right after the call it answers.
    const messages = second.messages!;
    const call = messages.find((m) => m.role === "assistant" && m.tool_calls)!;
    const result0 = messages[messages.indexOf(call) + 1];
    expect(result0).toMatchObject({ role: "tool", tool_call_id: call.tool_calls![0].id });
    expect(result0.content).toContain("a.txt");
  });

  it("sends OPENAI_API_KEY as the bearer token and never writes it anywhere", async () => {
    const dir = workspace();
    const api = await server();
    api.enqueue(replies.text("ok"));
    const key = "sk-test-DO-NOT-LEAK-4242";
    const result = await runCli(["run", "--log-level", "debug", "hello"], {
      cwd: dir,
      env: { OPENAI_BASE_URL: api.baseURL, STATECRAFT_MODEL: "test-model", OPENAI_API_KEY: key },
    });
    expect(result.code).toBe(0);
    expect(api.chatRequests[0].headers.authorization).toBe(`Bearer ${key}`);
    expect(result.stdout).not.toContain(key);
    expect(result.stderr).not.toContain(key);
    expect(agentFiles(dir)).not.toContain(key);
  });

  it("flags win over the environment: --base-url and --model", async () => {
    const dir = workspace();
    const api = await server();
    api.enqueue(replies.text("from the flag's server"));
    const result = await runCli(["run", "--base-url", api.baseURL, "--model", "flag-model", "hi"], {
      cwd: dir,
      // A server that is not there: using it would fail the run.
      env: { OPENAI_BASE_URL: "http://127.0.0.1:9/v1", STATECRAFT_MODEL: "env-model" },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("from the flag's server");
    expect(api.chatRequests[0].body.model).toBe("flag-model");
  });

  it("the environment wins over statecraft.config.json", async () => {
    const dir = workspace();
    const api = await server();
    api.enqueue(replies.text("ok"), replies.text("ok"));
    writeFileSync(join(dir, "statecraft.config.json"), JSON.stringify({ model: "config-model", baseUrl: api.baseURL }));
    expect((await runCli(["run", "hi"], { cwd: dir })).code).toBe(0);
    expect(api.chatRequests[0].body.model).toBe("config-model");
    expect((await runCli(["run", "hi"], { cwd: dir, env: { STATECRAFT_MODEL: "env-model" } })).code).toBe(0);
    expect(api.chatRequests[1].body.model).toBe("env-model");
  });

  it("--json against the server: every line an AgentEvent, the last turn_end", async () => {
    const dir = workspace();
    const api = await server();
    api.enqueue(replies.text("streamed answer"));
    const result = await runCli(["run", "--json", "hi"], { cwd: dir, env: { OPENAI_BASE_URL: api.baseURL, STATECRAFT_MODEL: "m" } });
    expect(result.code).toBe(0);
    const events = result.stdout.trimEnd().split("\n").map((l) => JSON.parse(l) as AgentEvent);
    expect(events.filter((e) => e.type === "text_delta").map((e) => (e as { text: string }).text).join("")).toBe("streamed answer");
    expect(events.at(-1)).toMatchObject({ type: "turn_end", reason: "final_answer", usage: { input: 10, output: 5 } });
  });

  it("a retried request shows the retry; the run still succeeds", async () => {
    const dir = workspace();
    const api = await server();
    api.enqueue(replies.error(503, "overloaded", { type: "server_error" }), replies.text("after the retry"));
    const result = await runCli(["run", "hi"], { cwd: dir, env: { OPENAI_BASE_URL: api.baseURL, STATECRAFT_MODEL: "m" } });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/↻ model request failed \(.*overloaded.*\); retry 1 in [\d.]+m?s\n/);
    expect(result.stdout).toContain("after the retry");
  });

  it("401 ends model_error (exit 8) with what to fix", async () => {
    const dir = workspace();
    const api = await server();
    api.enqueue(replies.error(401, "Incorrect API key provided", { code: "invalid_api_key" }));
    const result = await runCli(["run", "hi"], { cwd: dir, env: { OPENAI_BASE_URL: api.baseURL, STATECRAFT_MODEL: "m", OPENAI_API_KEY: "sk-wrong" } });
    expect(result.code).toBe(8);
    expect(result.stdout).toContain("■ model_error");
    expect(result.stdout).toMatch(/error: .*OPENAI_API_KEY/);
  });

  it("a server with no model named: the default name when the server has no model list (GET /models is 404)", async () => {
    const dir = workspace();
    const api = await server();
    api.enqueue(replies.text("ok"));
    const result = await runCli(["run", "hi"], { cwd: dir, env: { OPENAI_BASE_URL: api.baseURL } });
    expect(result.code).toBe(0);
    expect(api.chatRequests[0].body.model).toBe("gpt-4o-mini");
    expect(api.requests[0]).toMatchObject({ method: "GET", path: "/v1/models" });
  });

  it("a server with no model named whose model list is empty: a usage error naming the server and how to choose a model", async () => {
    const dir = workspace();
    const local = await localServer([]);
    const result = await runCli(["run", "hi"], { cwd: dir, env: { OPENAI_BASE_URL: local.baseURL } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`the server at ${local.baseURL} lists no models`);
    expect(result.stderr).toContain("--model <name>   or   STATECRAFT_MODEL=<name>");
    expect(local.chatModels).toEqual([]); // no request for a model it does not have
  });

  it("a server with no model named: its first listed model (as Ollama, llama.cpp and vLLM list theirs)", async () => {
    const dir = workspace();
    const local = await localServer(["qwen2.5:7b", "other"]);
    const result = await runCli(["run", "hi"], { cwd: dir, env: { OPENAI_BASE_URL: local.baseURL } });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("local answer");
    expect(local.chatModels).toEqual(["qwen2.5:7b"]);
  });
});
