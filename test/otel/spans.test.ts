/**
 * statecraft/otel against the SDK's in-memory exporter: the span tree, names, kinds, attributes and events the GenAI
 * conventions ask for, run by run (a plain run, parallel tools, a denial, retries, compaction, every stop reason, a
 * subagent, a suspension and its resume), and that no secret reaches a span.
 */
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AgentError, agentTool, createSession, defineTool, query, resume, scriptedModel, type Model, type QueryOptions } from "../../src/index.js";
import { openTelemetry } from "../../src/otel/index.js";
import { collect, echoTool as echo, removeDir, tempDir, writeTool as write } from "../support/engine.js";
import { memoryTracing, spanNamed, spanTree } from "./tracing.js";
import { leaks, SECRET_PAYLOADS } from "../support/secrets.js";

let cwd: string;
let tracing: ReturnType<typeof memoryTracing>;
const contextManager = new AsyncLocalStorageContextManager();
beforeAll(() => void context.setGlobalContextManager(contextManager.enable()));
afterAll(() => {
  context.disable();
});
beforeEach(() => {
  cwd = tempDir("statecraft-otel-");
  tracing = memoryTracing();
});
afterEach(() => removeDir(cwd));

const observe = (extra: Parameters<typeof openTelemetry>[0] = {}) => openTelemetry({ tracerProvider: tracing.provider, ...extra });
const run = (input: string, options: Omit<QueryOptions, "cwd">) => collect(query(input, { cwd, ...options } as QueryOptions));
const attrs = (span: ReadableSpan) => span.attributes;
const events = (span: ReadableSpan) => span.events.map((e) => e.name);
const states = (span: ReadableSpan) => span.events.filter((e) => e.name === "statecraft.state").map((e) => `${e.attributes!["statecraft.state"]}@${e.attributes!["statecraft.turn"]}`);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const idOf = (span: ReadableSpan) => span.spanContext().spanId;

describe("a plain run", () => {
  it("is one invoke_agent span with a chat child per model call and an execute_tool child per tool call", async () => {
    const model = scriptedModel([
      { toolCalls: [{ name: "echo", input: { text: "a" } }], usage: { input: 10, output: 3, cached: 4 } },
      { text: "Done.", usage: { input: 20, output: 5 } },
    ]);
    const { result } = await run("go", { model, tools: [echo], observers: [observe({ agentName: "helper" })] });
    const spans = tracing.spans();
    expect(spanTree(spans)).toBe(["invoke_agent helper", "  chat script", "  execute_tool echo", "  chat script"].join("\n"));

    const agent = spanNamed(spans, "invoke_agent helper");
    expect(agent.kind).toBe(SpanKind.INTERNAL);
    expect(agent.parentSpanContext).toBeUndefined();
    expect(attrs(agent)).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "helper",
      "gen_ai.conversation.id": result.sessionId,
      "gen_ai.provider.name": "_OTHER",
      "gen_ai.request.model": "script",
      "gen_ai.usage.input_tokens": 30,
      "gen_ai.usage.output_tokens": 8,
      "gen_ai.usage.cache_read.input_tokens": 4,
      "statecraft.stop_reason": "final_answer",
      "statecraft.turns": 2,
      "statecraft.tool_calls": 1,
    });
    expect(agent.status.code).toBe(SpanStatusCode.UNSET);
    expect(states(agent)).toEqual(["build_context@0", "call_model@1", "parse_tool_call@1", "validate_tool@1", "ask_permission@1", "execute_tool@1", "append_tool_result@1", "build_context@1", "call_model@2", "stream_text@2", "done@2"]);
    // Nothing of the conversation without captureContent.
    expect(Object.keys(attrs(agent)).filter((k) => k.includes("messages") || k.includes("instructions"))).toEqual([]);

    const [first, second] = spans.filter((s) => s.name === "chat script");
    for (const chat of [first, second]) {
      expect(chat.kind).toBe(SpanKind.CLIENT);
      expect(parentOf(chat)).toBe(idOf(agent));
      expect(chat.spanContext().traceId).toBe(agent.spanContext().traceId);
    }
    expect(attrs(first)).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "script",
      "gen_ai.response.finish_reasons": ["tool_calls"],
      "gen_ai.usage.input_tokens": 10,
      "gen_ai.usage.output_tokens": 3,
      "gen_ai.usage.cache_read.input_tokens": 4,
      "gen_ai.conversation.id": result.sessionId,
    });
    expect(attrs(second)).toMatchObject({ "gen_ai.response.finish_reasons": ["stop"], "gen_ai.usage.input_tokens": 20 });

    const tool = spanNamed(spans, "execute_tool echo");
    expect(tool.kind).toBe(SpanKind.INTERNAL);
    expect(parentOf(tool)).toBe(idOf(agent));
    const call = result.messages.find((m) => m.role === "tool");
    expect(attrs(tool)).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "echo",
      "gen_ai.tool.call.id": call?.role === "tool" ? call.toolCallId : "?",
      "gen_ai.tool.type": "function",
      "statecraft.permission.decision": "allow",
      "statecraft.permission.by": "mode",
      "statecraft.tool.status": "finished",
    });
    expect(tool.status.code).toBe(SpanStatusCode.UNSET);
    // The tool ran between the two model calls.
    expect(hr(tool.startTime)).toBeGreaterThanOrEqual(hr(first.endTime));
    expect(hr(second.startTime)).toBeGreaterThanOrEqual(hr(tool.endTime));
  });

  it("starts under the caller's active span, and emits gen_ai.system beside gen_ai.provider.name unless the latest conventions are asked for", async () => {
    const tracer = tracing.provider.getTracer("app");
    const model: Model = { ...scriptedModel([{ text: "hi" }]), provider: "openai", baseUrl: "http://127.0.0.1:8080/v1" };
    await tracer.startActiveSpan("request", async (span) => {
      await run("go", { model, observers: [observe()] });
      span.end();
    });
    const spans = tracing.spans();
    const request = spanNamed(spans, "request");
    const agent = spanNamed(spans, "invoke_agent statecraft");
    expect(parentOf(agent)).toBe(idOf(request));
    expect(attrs(agent)).toMatchObject({ "gen_ai.provider.name": "openai", "gen_ai.system": "openai", "server.address": "127.0.0.1", "server.port": 8080 });

    tracing.reset();
    process.env.OTEL_SEMCONV_STABILITY_OPT_IN = "http, gen_ai_latest_experimental";
    try {
      await run("go", { model: { ...scriptedModel([{ text: "hi" }]), provider: "openai" }, observers: [observe()] });
    } finally {
      delete process.env.OTEL_SEMCONV_STABILITY_OPT_IN;
    }
    const latest = spanNamed(tracing.spans(), "invoke_agent statecraft");
    expect(attrs(latest)["gen_ai.provider.name"]).toBe("openai");
    expect(attrs(latest)).not.toHaveProperty("gen_ai.system");
  });

  it("records the conversation only with captureContent, in the conventions' message format", async () => {
    const model = scriptedModel([{ toolCalls: [{ name: "echo", input: { text: "a" } }] }, { text: "Done." }]);
    const { result } = await run("say a", { model, tools: [echo], systemPrompt: "Be brief.", observers: [observe({ captureContent: true })] });
    const spans = tracing.spans();
    const agent = spanNamed(spans, "invoke_agent statecraft");
    expect(JSON.parse(attrs(agent)["gen_ai.input.messages"] as string)).toEqual([{ role: "user", parts: [{ type: "text", content: "say a" }] }]);
    expect(JSON.parse(attrs(agent)["gen_ai.output.messages"] as string)).toEqual([{ role: "assistant", parts: [{ type: "text", content: "Done." }], finish_reason: "final_answer" }]);
    expect(JSON.parse(attrs(agent)["gen_ai.system_instructions"] as string)).toEqual([{ type: "text", content: "Be brief." }]);
    const [first, second] = spans.filter((s) => s.name === "chat script");
    const callId = result.messages.find((m) => m.role === "tool")!.role === "tool" ? (result.messages.find((m) => m.role === "tool") as { toolCallId: string }).toolCallId : "";
    expect(JSON.parse(attrs(first)["gen_ai.input.messages"] as string)).toEqual([{ role: "user", parts: [{ type: "text", content: "say a" }] }]);
    expect(JSON.parse(attrs(first)["gen_ai.system_instructions"] as string)).toEqual([{ type: "text", content: "Be brief." }]);
    expect(JSON.parse(attrs(first)["gen_ai.output.messages"] as string)).toEqual([
      { role: "assistant", parts: [{ type: "tool_call", id: callId, name: "echo", arguments: { text: "a" } }], finish_reason: "tool_calls" },
    ]);
    expect(JSON.parse(attrs(second)["gen_ai.input.messages"] as string)).toEqual([
      { role: "user", parts: [{ type: "text", content: "say a" }] },
      { role: "assistant", parts: [{ type: "tool_call", id: callId, name: "echo", arguments: { text: "a" } }] },
      { role: "tool", parts: [{ type: "tool_call_response", id: callId, response: "echo: a" }] },
    ]);
    const tool = spanNamed(spans, "execute_tool echo");
    expect(JSON.parse(attrs(tool)["gen_ai.tool.call.arguments"] as string)).toEqual({ text: "a" });
    expect(attrs(tool)["gen_ai.tool.call.result"]).toBe("echo: a");
  });
});

describe("tools", () => {
  it("parallel calls are sibling execute_tool spans that overlap in time", async () => {
    let running = 0;
    let overlapped = false;
    const slow = defineTool({
      name: "slow",
      description: "Waits for its sibling.",
      inputSchema: { type: "object", properties: { n: { type: "number" } } },
      risk: "read",
      execute: async () => {
        running++;
        if (running === 2) overlapped = true;
        // Each call waits until both have started: they overlap for certain, whatever the machine's load.
        while (running < 2) await new Promise((r) => setImmediate(r));
        return "ok";
      },
    });
    const model = scriptedModel([{ toolCalls: [{ name: "slow", input: { n: 1 } }, { name: "slow", input: { n: 2 } }] }, { text: "both" }]);
    await run("go", { model, tools: [slow], observers: [observe()] });
    expect(overlapped).toBe(true);
    const spans = tracing.spans();
    const agent = spanNamed(spans, "invoke_agent statecraft");
    const tools = spans.filter((s) => s.name === "execute_tool slow");
    expect(tools).toHaveLength(2);
    expect(new Set(tools.map((t) => attrs(t)["gen_ai.tool.call.id"])).size).toBe(2);
    for (const t of tools) expect(parentOf(t)).toBe(idOf(agent));
    const [a, b] = tools;
    expect(hr(a.startTime) <= hr(b.endTime) && hr(b.startTime) <= hr(a.endTime)).toBe(true);
  });

  it("a denied call is an execute_tool span with the decision, who made it, and PERMISSION_DENIED; the run ends permission_denied", async () => {
    const model = scriptedModel([{ toolCalls: [{ name: "write", input: { text: "a" } }] }, { text: "never" }]);
    await run("go", { model, tools: [write], permissions: { deny: ["write"] }, observers: [observe()] });
    const spans = tracing.spans();
    const tool = spanNamed(spans, "execute_tool write");
    expect(attrs(tool)).toMatchObject({
      "statecraft.permission.decision": "deny",
      "statecraft.permission.by": "rule",
      "statecraft.permission.rule": "write",
      "statecraft.tool.status": "denied",
      "error.type": "PERMISSION_DENIED",
    });
    expect(tool.status.code).toBe(SpanStatusCode.ERROR);
    const agent = spanNamed(spans, "invoke_agent statecraft");
    expect(agent.status.code).toBe(SpanStatusCode.ERROR);
    expect(attrs(agent)).toMatchObject({ "error.type": "PERMISSION_DENIED", "statecraft.stop_reason": "permission_denied" });
  });

  it("a human's answer is on the span: allow, by a human", async () => {
    const model = scriptedModel([{ toolCalls: [{ name: "write", input: { text: "b" } }] }, { text: "ok" }]);
    await run("go", { model, tools: [write], permissions: { onAsk: () => "allow" }, observers: [observe()] });
    const tool = spanNamed(tracing.spans(), "execute_tool write");
    expect(attrs(tool)).toMatchObject({ "statecraft.permission.decision": "allow", "statecraft.permission.by": "human", "statecraft.tool.status": "finished" });
    expect(tool.status.code).toBe(SpanStatusCode.UNSET);
  });
});

describe("model calls that fail", () => {
  it("the provider's retries are events of the chat span", async () => {
    const model: Model = {
      name: "flaky",
      provider: "openai",
      async *stream() {
        yield { type: "retry", attempt: 1, delayMs: 250, error: { code: "MODEL_ERROR", message: "503 upstream busy" } };
        yield { type: "retry", attempt: 2, delayMs: 500, error: { code: "RATE_LIMITED", message: "429 slow down" } };
        yield { type: "response", response: { text: "ok", toolCalls: [], finishReason: "stop" } };
      },
    };
    await run("go", { model, observers: [observe()] });
    const chat = spanNamed(tracing.spans(), "chat flaky");
    const retries = chat.events.filter((e) => e.name === "statecraft.retry").map((e) => e.attributes);
    expect(retries).toEqual([
      { "statecraft.retry.attempt": 1, "statecraft.retry.delay_ms": 250, "error.type": "MODEL_ERROR", "exception.message": "503 upstream busy" },
      { "statecraft.retry.attempt": 2, "statecraft.retry.delay_ms": 500, "error.type": "RATE_LIMITED", "exception.message": "429 slow down" },
    ]);
    expect(chat.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("a call that fails and is tried again is a failed chat span, then a new one", async () => {
    const model = scriptedModel([{ error: { status: 500, message: "upstream down" } }, { text: "back" }]);
    const { result } = await run("go", { model, observers: [observe()], onModelError: () => ({ action: "retry" }) });
    expect(result.reason).toBe("final_answer");
    const chats = tracing.spans().filter((s) => s.name === "chat script");
    expect(chats).toHaveLength(2);
    expect(chats[0].status).toMatchObject({ code: SpanStatusCode.ERROR, message: expect.stringContaining("upstream down") });
    expect(attrs(chats[0])["error.type"]).toBe("MODEL_ERROR");
    expect(chats[1].status.code).toBe(SpanStatusCode.UNSET);
    const agent = spanNamed(tracing.spans(), "invoke_agent statecraft");
    // A retry is the same turn, asked again.
    expect(states(agent)).toEqual(["build_context@0", "call_model@1", "recover@1", "call_model@1", "stream_text@1", "done@1"]);
    expect(agent.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("a CONTEXT_OVERFLOW fails its chat span, and the compaction that follows is an event of the run", async () => {
    const big = "x".repeat(8000);
    const bulky = defineTool({ ...echo, name: "echo", execute: () => big });
    const overflow = { error: { status: 400, code: "context_length_exceeded", message: "too long" } };
    const model = scriptedModel([{ toolCalls: [{ name: "echo", input: { text: "a" } }] }, overflow, { text: "fits now" }]);
    const outcome = await run("go", { model, tools: [bulky], contextWindow: 2000, reserveTokens: 0, summarize: () => "short", observers: [observe()] });
    expect(outcome.result.reason).toBe("final_answer");
    const spans = tracing.spans();
    const chats = spans.filter((s) => s.name === "chat script");
    expect(chats.map((c) => attrs(c)["error.type"])).toEqual([undefined, "CONTEXT_OVERFLOW", undefined]);
    expect(chats[1].status.code).toBe(SpanStatusCode.ERROR);
    const agent = spanNamed(spans, "invoke_agent statecraft");
    const compaction = agent.events.find((e) => e.name === "statecraft.compaction");
    const told = outcome.events.find((e) => e.type === "compaction");
    if (told?.type !== "compaction") throw new Error("no compaction event");
    expect(compaction!.attributes).toEqual({ "statecraft.compaction.tokens_before": told.tokensBefore, "statecraft.compaction.tokens_after": told.tokensAfter });
    // The compaction came after the failed call and before the one that fit.
    expect(hr(compaction!.time)).toBeGreaterThanOrEqual(hr(chats[1].endTime));
    expect(hr(compaction!.time)).toBeLessThanOrEqual(hr(chats[2].startTime));
    expect(states(agent)).toContain("recover@2");
  });
});

const waiter = (started: () => void = () => undefined) =>
  defineTool({
    name: "wait",
    description: "Waits until stopped.",
    inputSchema: { type: "object", properties: {} },
    risk: "read",
    execute: (_input, { signal }) => {
      started();
      return new Promise<string>((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
    },
  });
const onFire = defineTool({
  name: "on_fire",
  description: "Fails fatally.",
  inputSchema: { type: "object", properties: {} },
  risk: "read",
  execute: () => {
    throw new AgentError("TOOL_FATAL", "disk on fire");
  },
});
const call = (name: string, input: unknown = {}) => ({ toolCalls: [{ name, input }] });

const STOPS: Array<{ reason: string; code?: string; options: () => Omit<QueryOptions, "cwd">; openTool?: string }> = [
  { reason: "final_answer", options: () => ({ model: scriptedModel([{ text: "Done." }]) }) },
  { reason: "max_turns", code: "MAX_TURNS", options: () => ({ model: scriptedModel([call("echo", { text: "a" }), { text: "never" }]), tools: [echo], maxTurns: 1 }) },
  {
    reason: "max_tool_calls",
    code: "MAX_TOOL_CALLS",
    options: () => ({ model: scriptedModel([{ toolCalls: [{ name: "echo", input: { text: "1" } }, { name: "echo", input: { text: "2" } }] }, { text: "never" }]), tools: [echo], maxToolCalls: 1 }),
  },
  { reason: "timeout", code: "TIMEOUT", options: () => ({ model: scriptedModel([call("wait")]), tools: [waiter()], timeoutMs: 100 }), openTool: "execute_tool wait" },
  {
    reason: "user_abort",
    code: "USER_ABORT",
    options: () => {
      const controller = new AbortController();
      return { model: scriptedModel([call("wait")]), tools: [waiter(() => controller.abort())], signal: controller.signal };
    },
    openTool: "execute_tool wait",
  },
  { reason: "permission_denied", code: "PERMISSION_DENIED", options: () => ({ model: scriptedModel([call("write", { text: "n" }), { text: "never" }]), tools: [write] }) },
  { reason: "tool_error", code: "TOOL_FATAL", options: () => ({ model: scriptedModel([call("on_fire"), { text: "never" }]), tools: [onFire] }) },
  { reason: "model_error", code: "MODEL_ERROR", options: () => ({ model: scriptedModel([{ error: { status: 500, message: "upstream down" } }]) }) },
];

describe("every stop reason", () => {
  for (const stop of STOPS) {
    it(`${stop.reason}: the run's span says so${stop.code ? ", with status ERROR and error.type" : ""}`, async () => {
      const { result } = await run("go", { ...stop.options(), observers: [observe()] });
      expect(result.reason).toBe(stop.reason);
      const spans = tracing.spans();
      const agent = spanNamed(spans, "invoke_agent statecraft");
      expect(attrs(agent)["statecraft.stop_reason"]).toBe(stop.reason);
      expect(attrs(agent)["gen_ai.response.finish_reasons"]).toEqual([stop.reason]);
      if (stop.code === undefined) {
        expect(agent.status.code).toBe(SpanStatusCode.UNSET);
        expect(attrs(agent)).not.toHaveProperty("error.type");
      } else {
        expect(agent.status.code).toBe(SpanStatusCode.ERROR);
        expect(attrs(agent)["error.type"]).toBe(stop.code);
      }
      // Every span ended, none left open by the stop; a tool cut off by it fails with it.
      for (const span of spans) expect(hr(span.endTime)).toBeGreaterThan(0);
      if (stop.openTool) expect(attrs(spanNamed(spans, stop.openTool))["error.type"]).toBeDefined();
      expect(states(agent).at(-1)).toMatch(/^done@/);
    });
  }
});

describe("subagents", () => {
  it("a subagent's run nests under the parent's execute_tool span, in the same trace", async () => {
    const child = scriptedModel([{ toolCalls: [{ name: "echo", input: { text: "deep" } }] }, { text: "found it" }], { name: "child-model" });
    const researcher = agentTool({ name: "researcher", description: "Researches.", model: child, tools: [echo] });
    const parent = scriptedModel([{ toolCalls: [{ name: "researcher", input: { prompt: "look" } }] }, { text: "done" }], { name: "parent-model" });
    const { result } = await run("go", { model: parent, tools: [researcher], observers: [observe({ agentName: "lead" })] });
    expect(result.reason).toBe("final_answer");
    const spans = tracing.spans();
    expect(spanTree(spans)).toBe(
      [
        "invoke_agent lead",
        "  chat parent-model",
        "  execute_tool researcher",
        "    invoke_agent researcher",
        "      chat child-model",
        "      execute_tool echo",
        "      chat child-model",
        "  chat parent-model",
      ].join("\n"),
    );
    const top = spanNamed(spans, "invoke_agent lead");
    const sub = spanNamed(spans, "invoke_agent researcher");
    expect(attrs(sub)["gen_ai.agent.name"]).toBe("researcher");
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    expect(attrs(sub)["gen_ai.conversation.id"]).not.toBe(attrs(top)["gen_ai.conversation.id"]);
    expect(attrs(sub)).toMatchObject({ "gen_ai.request.model": "child-model", "statecraft.stop_reason": "final_answer" });
  });
});

describe("suspension and resume", () => {
  it("a suspended run ends its span with the suspension; the resumed run's span links to it", async () => {
    const model = scriptedModel([{ toolCalls: [{ name: "write", input: { text: "c" } }] }]);
    const first = await run("go", { model, tools: [write], permissions: { whenUnanswered: "suspend" }, observers: [observe()] });
    if (first.result.status !== "suspended") throw new Error("not suspended");
    const suspended = spanNamed(tracing.spans(), "invoke_agent statecraft");
    expect(attrs(suspended)).toMatchObject({ "statecraft.run.status": "suspended", "statecraft.run.id": first.result.runId });
    expect(suspended.status.code).toBe(SpanStatusCode.UNSET);
    expect(suspended.events.find((e) => e.name === "statecraft.suspended")?.attributes).toEqual({ "statecraft.pending_calls": [first.result.pending[0].callId] });
    // The pending call did not run: no span for it yet.
    expect(tracing.spans().filter((s) => s.name.startsWith("execute_tool"))).toEqual([]);

    tracing.reset();
    const answers = { [first.result.pending[0].callId]: "allow" as const };
    const second = await collect(resume(first.result.sessionId, { model: scriptedModel([{ text: "written" }]), tools: [write], cwd, answers, answeredBy: "ana", observers: [observe()] }));
    expect(second.result.status).toBe("completed");
    const spans = tracing.spans();
    const resumed = spanNamed(spans, "invoke_agent statecraft");
    expect(resumed.links).toHaveLength(1);
    expect(resumed.links[0].context).toMatchObject({ traceId: suspended.spanContext().traceId, spanId: suspended.spanContext().spanId });
    expect(attrs(resumed)).toMatchObject({ "statecraft.resumed": true, "gen_ai.conversation.id": first.result.sessionId });
    const tool = spanNamed(spans, "execute_tool write");
    expect(parentOf(tool)).toBe(idOf(resumed));
    expect(attrs(tool)).toMatchObject({ "statecraft.permission.decision": "allow", "statecraft.permission.by": "human", "statecraft.permission.answered_by": "ana" });
  });

  it("a session's runs are each their own invoke_agent span with the session as gen_ai.conversation.id", async () => {
    const session = createSession({ model: scriptedModel([{ text: "one" }, { text: "two" }]), cwd, observers: [observe()] });
    await collect(session.query("a"));
    await collect(session.query("b"));
    const agents = tracing.spans().filter((s) => s.name === "invoke_agent statecraft");
    expect(agents).toHaveLength(2);
    expect(agents.map((a) => attrs(a)["gen_ai.conversation.id"])).toEqual([session.sessionId, session.sessionId]);
    expect(agents[0].spanContext().traceId).not.toBe(agents[1].spanContext().traceId);
  });
});

describe("secrets", () => {
  for (const payload of SECRET_PAYLOADS) {
    it(`nothing of a secret reaches a span, with captureContent: ${payload.name}`, async () => {
      const saved = { ...process.env };
      Object.assign(process.env, payload.env ?? {});
      try {
        // The secret everywhere a span may carry text: the input, the system prompt, the model's text and tool
        // arguments, a tool's result, a tool's error, a retry's and a failed call's messages, a permission rule.
        const leaky = defineTool({
          name: "leaky",
          description: "Reads a file.",
          inputSchema: { type: "object", properties: { text: { type: "string" } } },
          risk: "read",
          execute: ({ text }: { text?: string }) => {
            if (text === "fail") throw new Error(`could not read: ${payload.text}`);
            return payload.text;
          },
        });
        const model: Model = {
          name: "leaky-model",
          provider: "openai",
          async *stream(request) {
            if (request.turn === 0) {
              yield { type: "retry", attempt: 1, delayMs: 1, error: { code: "MODEL_ERROR", message: `retrying ${payload.text}` } };
              yield { type: "response", response: { text: payload.text, toolCalls: [{ name: "leaky", arguments: JSON.stringify({ text: payload.text }) }, { name: "leaky", arguments: { text: "fail" } }], finishReason: "tool_calls" } };
            } else if (request.turn === 1) {
              throw new AgentError("MODEL_ERROR", `upstream said ${payload.text}`, { status: 500 });
            } else {
              yield { type: "response", response: { text: `done ${payload.text}`, toolCalls: [], finishReason: "stop" } };
            }
          },
        };
        await run(`look at ${payload.text}`, {
          model,
          tools: [leaky],
          systemPrompt: `context: ${payload.text}`,
          onModelError: (_error, attempt) => (attempt < 2 ? { action: "retry" } : { action: "abort" }),
          observers: [observe({ captureContent: true })],
        });
        const spans = tracing.spans();
        expect(spans.map((s) => s.name)).toContain("execute_tool leaky");
        expect(spans.filter((s) => s.status.code === SpanStatusCode.ERROR).length).toBeGreaterThanOrEqual(2);
        const everything = JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status, links: s.links })));
        // The content is there (redacted), so the check is not vacuous.
        expect(everything).toContain("gen_ai.tool.call.result");
        expect(leaks(everything, payload)).toEqual([]);
      } finally {
        for (const key of Object.keys(payload.env ?? {})) if (!(key in saved)) delete process.env[key];
        Object.assign(process.env, saved);
      }
    });
  }
});

describe("options", () => {
  it("refuses bad options, naming what is wrong", () => {
    expect(() => openTelemetry({ captureContents: true } as never)).toThrow(/captureContents is not an option; the options are tracer, tracerProvider, captureContent, agentName/);
    expect(() => openTelemetry({ captureContent: "yes" } as never)).toThrow(/captureContent must be true or false/);
    expect(() => openTelemetry({ tracer: {} as never })).toThrow(/tracer must be an OpenTelemetry Tracer/);
    expect(() => openTelemetry({ agentName: " " })).toThrow(/agentName must be a non-empty string/);
    expect(() => openTelemetry({ tracer: tracing.provider.getTracer("x"), tracerProvider: tracing.provider })).toThrow(/not both/);
  });

  it("uses the given tracer, and the global provider by default", async () => {
    await run("go", { model: scriptedModel([{ text: "a" }]), observers: [openTelemetry({ tracer: tracing.provider.getTracer("mine") })] });
    expect(spanNamed(tracing.spans(), "invoke_agent statecraft").instrumentationScope.name).toBe("mine");
    tracing.reset();
    expect(trace.setGlobalTracerProvider(tracing.provider)).toBe(true);
    try {
      await run("go", { model: scriptedModel([{ text: "a" }]), observers: [openTelemetry()] });
    } finally {
      trace.disable();
    }
    expect(spanNamed(tracing.spans(), "invoke_agent statecraft").instrumentationScope.name).toBe("statecraft");
  });
});

const hr = (t: [number, number]) => t[0] * 1e9 + t[1];
