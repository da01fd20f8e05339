import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { WebSocket } from "ws";
import { AgentError, defineTool, query, scriptedModel, startInspector, type AgentEvent, type RunResult } from "../../src/index.js";
import { transcriptPath } from "../../src/record/transcript.js";
import { REDACTED } from "../../src/record/redact.js";
import { openaiModel } from "../../src/models/openai/index.js";
import { removeDir, tempDir } from "../support/engine.js";
import { replies, startOpenAIServer } from "../support/openai-server.js";
import { leaks, SECRET_PAYLOADS, type SecretPayload } from "../support/secrets.js";

/**
 * Each payload is carried through a real run everywhere a secret can travel — the request, the model's text, a tool
 * call's input, the tool's output, a tool's error that ends the run — and then looked for in every sink: the trace,
 * the audit log, the transcript, the live inspector's records (over its WebSocket), the inspector's trace mode (over
 * HTTP), and the error the run ends with. Every sink must hold `[REDACTED]` and none of the payload's secrets.
 */

let cwd: string;
let envNames: string[] = [];
beforeEach(() => {
  cwd = tempDir("statecraft-secrets-");
});
afterEach(() => {
  for (const name of envNames) delete process.env[name];
  envNames = [];
  removeDir(cwd);
});

function setEnv(env: Record<string, string> | undefined): void {
  for (const [name, value] of Object.entries(env ?? {})) {
    process.env[name] = value;
    envNames.push(name);
  }
}

/** A page of the live inspector: every text the server sends it. */
function connectPage(url: string): Promise<{ texts: string[]; until(text: string): Promise<void>; close(): void }> {
  const ws = new WebSocket(url.replace(/^http/, "ws"));
  const texts: string[] = [];
  const waiting: Array<{ text: string; resolve(): void }> = [];
  ws.on("message", (data) => {
    const text = data.toString();
    texts.push(text);
    for (const w of [...waiting]) if (text.includes(w.text)) w.resolve();
  });
  return new Promise((resolve, reject) => {
    ws.once("error", reject);
    ws.once("open", () => {
      ws.send(JSON.stringify({ type: "@statecraft.hello" }));
      resolve({
        texts,
        until: (text) => (texts.some((t) => t.includes(text)) ? Promise.resolve() : new Promise<void>((done) => waiting.push({ text, resolve: done }))),
        close: () => ws.close(),
      });
    });
  });
}

/** Runs the attack for one payload and returns each sink's text (plus what the tool and the model saw). */
async function attack(payload: SecretPayload) {
  const toolSaw: string[] = [];
  const fetchPage = defineTool({
    name: "fetch_page",
    description: "Fetches a page.",
    inputSchema: { type: "object", properties: { text: { type: "string" }, fail: { type: "boolean" } }, required: ["text"] },
    risk: "read",
    execute: (input: { text: string; fail?: boolean }) => {
      toolSaw.push(input.text);
      if (input.fail) throw new AgentError("TOOL_FATAL", `the page could not be read: ${input.text}`);
      return `page:\n${input.text}`;
    },
  });
  const model = scriptedModel([
    { text: `Fetching ${payload.text}`, toolCalls: [{ name: "fetch_page", input: { text: payload.text } }] },
    { text: "Again.", toolCalls: [{ name: "fetch_page", input: { text: payload.text, fail: true } }] },
  ]);
  const run = query(`read this: ${payload.text}`, { model, cwd, tools: [fetchPage], inspect: { port: 0 } });
  const first = await run.next();
  const url = (first.value as Extract<AgentEvent, { type: "inspector" }>).url;
  const page = await connectPage(url);
  const events: AgentEvent[] = [];
  let result: RunResult;
  for (;;) {
    const next = await run.next();
    if (next.done) {
      result = next.value;
      break;
    }
    events.push(next.value);
    // The inspector closes with the run: let the page receive the last record first.
    if (next.value.type === "turn_end") await page.until('"kind":"run_end"');
  }
  page.close();
  const turnEnd = events.find((e) => e.type === "turn_end") as Extract<AgentEvent, { type: "turn_end" }>;

  const traceFile = join(cwd, ".agent", "trace.jsonl");
  const inspector = await startInspector({ traceFile });
  const served = await (await fetch(`${inspector.url}trace`)).text();
  await inspector.close();

  return {
    sinks: {
      trace: readFileSync(traceFile, "utf8"),
      audit: readFileSync(join(cwd, ".agent", "audit.jsonl"), "utf8"),
      transcript: readFileSync(transcriptPath(cwd, run.sessionId), "utf8"),
      "inspector (live)": page.texts.join("\n"),
      "inspector (trace mode)": served,
      "error (turn_end)": turnEnd.error?.message ?? "",
      "error (result)": result.error?.message ?? "",
    },
    result,
    toolSaw,
    modelSaw: JSON.stringify(model.requests.map((r) => r.messages)),
  };
}

describe("secrets in every sink", { timeout: 60_000 }, () => {
  for (const payload of SECRET_PAYLOADS) {
    it(payload.name, async () => {
      setEnv(payload.env);
      const { sinks, result, toolSaw, modelSaw } = await attack(payload);
      expect(result.reason).toBe("tool_error");
      for (const [sink, text] of Object.entries(sinks)) {
        expect(text, `${sink} is empty`).not.toBe("");
        expect(leaks(text, payload), `${sink} leaks`).toEqual([]);
        expect(text, sink).toContain(REDACTED);
      }
      // The tools and the model keep the real values: they need them to work.
      expect(toolSaw).toEqual([payload.text, payload.text]);
      expect(modelSaw).toContain(JSON.stringify(`page:\n${payload.text}`).slice(1, -1));
    });
  }
});

describe("secrets: the sinks' other ways in", { timeout: 60_000 }, () => {
  it("a continued session reads its transcript back redacted: the model sees [REDACTED], not the secret", async () => {
    const payload = SECRET_PAYLOADS.find((p) => p.name.startsWith("Stripe live"))!;
    const first = scriptedModel([{ text: `noted: ${payload.text}` }]);
    const one = query(`remember ${payload.text}`, { model: first, cwd });
    for await (const _ of one) void _;
    const second = scriptedModel([{ text: "ok" }]);
    for await (const _ of query("what did I say?", { model: second, cwd, sessionId: one.sessionId })) void _;
    const seen = JSON.stringify(second.requests[0].messages);
    expect(leaks(seen, payload)).toEqual([]);
    expect(seen).toContain(REDACTED);
  });

  it("a model error quoting a secret: the retry-free stop's error and the trace are redacted", async () => {
    const payload = SECRET_PAYLOADS.find((p) => p.name.startsWith("URL credentials (https)"))!;
    const model = scriptedModel([{ error: { status: 400, message: `bad request to ${payload.text}` } }]);
    const events: AgentEvent[] = [];
    const run = query("go", { model, cwd });
    let next = await run.next();
    while (!next.done) {
      events.push(next.value);
      next = await run.next();
    }
    expect(next.value.reason).toBe("model_error");
    for (const text of [next.value.error?.message ?? "", readFileSync(join(cwd, ".agent", "trace.jsonl"), "utf8")]) {
      expect(leaks(text, payload)).toEqual([]);
      expect(text).toContain(REDACTED);
    }
  });

  it("a provider's failure quoting secrets, then retried: the retry event, the trace's retry line and the inspector are redacted", async () => {
    const payloads = SECRET_PAYLOADS.filter((p) => p.env === undefined);
    const server = await startOpenAIServer();
    try {
      server.enqueue(replies.error(500, `upstream said: ${payloads.map((p) => p.text).join(" | ")}`, { type: "server_error" }), replies.text("recovered"));
      const model = openaiModel({ model: "test-model", baseURL: server.baseURL, apiKey: "test-key-not-secret", retryBaseDelayMs: 10 }, {});
      const run = query("go", { model, cwd, inspect: { port: 0 } });
      const first = await run.next();
      const page = await connectPage((first.value as Extract<AgentEvent, { type: "inspector" }>).url);
      const events: AgentEvent[] = [];
      for (let next = await run.next(); !next.done; next = await run.next()) {
        events.push(next.value);
        if (next.value.type === "turn_end") await page.until('"kind":"run_end"');
      }
      page.close();
      const retry = events.find((e) => e.type === "retry") as Extract<AgentEvent, { type: "retry" }>;
      expect(retry).toBeDefined();
      const trace = readFileSync(join(cwd, ".agent", "trace.jsonl"), "utf8");
      expect(trace).toContain('"kind":"retry"');
      for (const [sink, text] of Object.entries({ "retry event": retry.error.message, trace, "inspector (live)": page.texts.join("\n") })) {
        for (const payload of payloads) expect(leaks(text, payload), `${sink}: ${payload.name}`).toEqual([]);
        expect(text, sink).toContain(REDACTED);
      }
    } finally {
      await server.close();
    }
  });

  it("trace mode redacts a trace written unredacted (an older version, another tool, an edit by hand)", async () => {
    const file = join(cwd, "old-trace.jsonl");
    const lines = SECRET_PAYLOADS.map((payload, seq) =>
      JSON.stringify({ v: 1, sessionId: "old", seq, time: "2026-01-01T00:00:00.000Z", kind: "state", state: "append_tool_result", turn: 1, details: { results: [{ toolCallId: `call_${seq}`, name: "bash", content: payload.text, isError: false }] } }),
    );
    writeFileSync(file, lines.join("\n") + "\n");
    for (const payload of SECRET_PAYLOADS) setEnv(payload.env);
    const inspector = await startInspector({ traceFile: file });
    try {
      const response = await fetch(`${inspector.url}trace`);
      expect(response.status).toBe(200);
      const served = await response.text();
      const servedLines = served.trimEnd().split("\n");
      expect(servedLines).toHaveLength(lines.length);
      for (const line of servedLines) expect(() => JSON.parse(line)).not.toThrow();
      for (const payload of SECRET_PAYLOADS) expect(leaks(served, payload), payload.name).toEqual([]);
      // The file itself is left as it is.
      expect(readFileSync(file, "utf8")).toBe(lines.join("\n") + "\n");
    } finally {
      await inspector.close();
    }
  });

  it("the inspector's view of any actor (process observer) is redacted too", async () => {
    const { createActor, createMachine } = await import("xstate");
    const payload = SECRET_PAYLOADS.find((p) => p.name === "PEM private key")!;
    const inspector = await startInspector();
    try {
      const page = await connectPage(inspector.url);
      const machine = createMachine({ id: "holder", context: { note: payload.text }, initial: "a", states: { a: { on: { GO: "b" } }, b: {} } });
      const actor = createActor(machine, { inspect: inspector.inspect });
      actor.start();
      actor.send({ type: "GO", body: payload.text });
      await page.until('"kind":"event"');
      await page.until('"value":"b"');
      actor.stop();
      page.close();
      const seen = page.texts.join("\n");
      expect(leaks(seen, payload)).toEqual([]);
      expect(seen).toContain(REDACTED);
    } finally {
      await inspector.close();
    }
  });
});

