import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ModelStreamEvent } from "../../../src/models/model.js";
import { openaiModel } from "../../../src/models/openai/index.js";
import type { OpenAIModelOptions } from "../../../src/models/openai/index.js";
import { retryAfterMs, retryDelayMs } from "../../../src/models/openai/retry-policy.js";
import { chunk, replies, startOpenAIServer, type OpenAIServer } from "../../support/openai-server.js";
import { asAgentError, collect } from "./helpers.js";

let server: OpenAIServer;
beforeEach(async () => {
  server = await startOpenAIServer();
});
afterEach(async () => {
  await server.close();
});

function model(options: OpenAIModelOptions = {}) {
  return openaiModel({ model: "test-model", baseURL: server.baseURL, retryBaseDelayMs: 20, ...options }, {});
}

type RetryEvent = Extract<ModelStreamEvent, { type: "retry" }>;

function retries(events: readonly ModelStreamEvent[]): RetryEvent[] {
  return events.filter((e): e is RetryEvent => e.type === "retry");
}

describe("retryable failures are retried with backoff, each announced", () => {
  it("429 with Retry-After (seconds) waits what the server asked, then succeeds", async () => {
    server.enqueue(replies.error(429, "Rate limit reached for requests", { type: "requests", headers: { "retry-after": "1" } }), replies.text("after the wait"));
    const started = Date.now();
    const result = await collect(model());
    const elapsed = Date.now() - started;

    expect(result.error).toBeUndefined();
    expect(result.response?.text).toBe("after the wait");
    expect(server.chatRequests).toHaveLength(2);
    const [retry] = retries(result.events);
    expect(retry).toEqual({
      type: "retry",
      attempt: 1,
      delayMs: 1000,
      error: { code: "MODEL_ERROR", message: expect.stringContaining("HTTP 429") },
    });
    expect(retry.error.message).toContain("Rate limit reached for requests");
    // Honouring Retry-After is the behaviour under test: the second request came no sooner.
    expect(elapsed).toBeGreaterThanOrEqual(990);
    // The retry event comes before any output of the successful attempt.
    expect(result.events[0].type).toBe("retry");
  });

  it("429 with retry-after-ms is honoured in milliseconds, and capped by maxRetryDelayMs", async () => {
    server.enqueue(replies.error(429, "slow down", { headers: { "retry-after-ms": "150" } }), replies.text("ok"));
    const first = await collect(model());
    expect(retries(first.events)).toMatchObject([{ attempt: 1, delayMs: 150 }]);
    expect(first.response?.text).toBe("ok");

    server.enqueue(replies.error(429, "slow down", { headers: { "retry-after": "3600" } }), replies.text("ok"));
    const capped = await collect(model({ maxRetryDelayMs: 100 }));
    expect(retries(capped.events)).toMatchObject([{ attempt: 1, delayMs: 100 }]);
    expect(capped.response?.text).toBe("ok");
  });

  it("500 then success", async () => {
    server.enqueue(replies.error(500, "The server had an error while processing your request.", { type: "server_error" }), replies.text("recovered"));
    const result = await collect(model());
    expect(result.response?.text).toBe("recovered");
    expect(result.text).toBe("recovered");
    expect(server.chatRequests).toHaveLength(2);
    const [retry] = retries(result.events);
    expect(retry.attempt).toBe(1);
    expect(retry.error.code).toBe("MODEL_ERROR");
    expect(retry.error.message).toContain("HTTP 500");
    // Backoff with jitter: base 20 ms minus at most 25 %.
    expect(retry.delayMs).toBeGreaterThanOrEqual(15);
    expect(retry.delayMs).toBeLessThanOrEqual(20);
    // Both attempts sent the same request.
    expect(server.chatRequests[1].rawBody).toBe(server.chatRequests[0].rawBody);
  });

  it("408, 409, 502, 503 are retried too", async () => {
    for (const status of [408, 409, 502, 503]) {
      server.enqueue(replies.error(status, `status ${status}`), replies.text(`after ${status}`));
      const result = await collect(model());
      expect(result.response?.text).toBe(`after ${status}`);
      expect(retries(result.events)).toHaveLength(1);
    }
  });

  it("a connection dropped mid-stream before any output is retried", async () => {
    server.enqueue(replies.drop([chunk({ role: "assistant", content: "" })]), replies.text("second try"));
    const result = await collect(model());
    expect(result.error).toBeUndefined();
    expect(result.response?.text).toBe("second try");
    expect(result.text).toBe("second try");
    expect(server.chatRequests).toHaveLength(2);
    const [retry] = retries(result.events);
    expect(retry.error.message).toContain("dropped");
  });

  it("a connection dropped after text reached the caller is not retried; the text is kept on the error", async () => {
    server.enqueue(replies.drop([chunk({ role: "assistant", content: "" }), chunk({ content: "Half an ans" })]), replies.text("never sent"));
    const result = await collect(model());
    expect(server.chatRequests).toHaveLength(1);
    expect(retries(result.events)).toEqual([]);
    expect(result.text).toBe("Half an ans");
    const error = asAgentError(result.error);
    expect(error.code).toBe("MODEL_ERROR");
    expect(error.message).toContain("dropped");
    expect((error.data?.partial as { text: string }).text).toBe("Half an ans");
    expect(server.pending).toBe(1);
  });

  it("a stream that stalls past idleTimeoutMs fails the attempt retryably", async () => {
    server.enqueue(replies.stall([chunk({ role: "assistant", content: "" })]), replies.text("unstuck"));
    const started = Date.now();
    const result = await collect(model({ idleTimeoutMs: 200 }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(195);
    expect(result.response?.text).toBe("unstuck");
    const [retry] = retries(result.events);
    expect(retry.error.message).toContain("idleTimeoutMs");
    expect(retry.error.message).toContain("200 ms");
  });

  it("a server that never sends headers is an idle stall too", async () => {
    server.enqueue({ type: "custom", handle: () => {} }, replies.text("finally"));
    const result = await collect(model({ idleTimeoutMs: 200 }));
    expect(result.response?.text).toBe("finally");
    expect(retries(result.events)).toHaveLength(1);
  });

  it("SSE keep-alive comments count as activity: a slow but alive server is not cut off", async () => {
    // 800 ms of comments before the first chunk, 100 ms apart: far past the idle limit unless comments count.
    const lines = [":", ...Array.from({ length: 7 }, () => ": keep-alive")];
    const answer = replies.text("worth the wait");
    if (answer.type !== "sse") throw new Error("text reply is a stream");
    server.enqueue({ type: "sse", lines: [...lines, ...answer.lines], lineDelayMs: 100 });
    const result = await collect(model({ idleTimeoutMs: 400 }));
    expect(retries(result.events)).toEqual([]);
    expect(result.response?.text).toBe("worth the wait");
    expect(server.chatRequests).toHaveLength(1);
  });

  it("an attempt longer than timeoutMs fails retryably even while data flows", async () => {
    const slow = replies.text("a b c d e f g h i j k l m n o p");
    if (slow.type !== "sse") throw new Error("text reply is a stream");
    server.enqueue({ ...slow, lineDelayMs: 60 });
    const result = await collect(model({ timeoutMs: 300, maxRetries: 0 }));
    const error = asAgentError(result.error);
    expect(error.retryable).toBe(true);
    expect(error.message).toContain("timeoutMs");
  });

  it("a stream that ends without sending anything is retried", async () => {
    server.enqueue({ type: "sse", lines: [] }, replies.text("something"));
    const result = await collect(model());
    expect(result.response?.text).toBe("something");
    expect(retries(result.events)).toHaveLength(1);
  });
});

describe("failures that a retry cannot fix end the call at once", () => {
  it("401 is not retried and says to check OPENAI_API_KEY, without ever showing the key", async () => {
    const key = "sk-test-0123456789abcdef";
    server.enqueue(replies.error(401, `Incorrect API key provided: ${key}. You can find your API key at https://platform.openai.com.`, { code: "invalid_api_key" }));
    const result = await collect(model({ apiKey: key }));
    const error = asAgentError(result.error);
    expect(server.chatRequests).toHaveLength(1);
    expect(retries(result.events)).toEqual([]);
    expect(error.code).toBe("MODEL_ERROR");
    expect(error.status).toBe(401);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain("OPENAI_API_KEY");
    expect(error.message).toContain("rejected");
    expect(error.message).not.toContain(key);
    expect(JSON.stringify(error.toJSON())).not.toContain(key);
    // The key did reach the server, as a bearer token.
    expect(server.chatRequests[0].headers.authorization).toBe(`Bearer ${key}`);
  });

  it("401 without any key configured says to set OPENAI_API_KEY", async () => {
    server.enqueue(replies.error(401, "You didn't provide an API key."));
    const error = asAgentError((await collect(model())).error);
    expect(error.message).toContain("no API key was sent; set OPENAI_API_KEY");
  });

  it("404 names the model and the baseURL", async () => {
    server.enqueue(replies.error(404, "The model `gpt-9` does not exist or you do not have access to it.", { code: "model_not_found" }));
    const error = asAgentError((await collect(openaiModel({ model: "gpt-9", baseURL: server.baseURL }, {}))).error);
    expect(server.chatRequests).toHaveLength(1);
    expect(error.status).toBe(404);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('model "gpt-9"');
    expect(error.message).toContain("baseURL");
    expect(error.message).toContain(server.baseURL);
    expect(error.message).toContain("does not exist");
  });

  it("a baseURL without /v1 gets the server's own 404, explained", async () => {
    const error = asAgentError((await collect(openaiModel({ model: "m", baseURL: server.baseURL.replace(/\/v1$/, "") }, {}))).error);
    expect(error.status).toBe(404);
    expect(error.message).toContain("usually ending in /v1");
  });

  it("400, 403 and 422 are not retried", async () => {
    for (const status of [400, 403, 422]) {
      const before = server.chatRequests.length;
      server.enqueue(replies.error(status, `refused with ${status}`));
      const result = await collect(model());
      const error = asAgentError(result.error);
      expect(server.chatRequests.length - before).toBe(1);
      expect(error.status).toBe(status);
      expect(error.retryable).toBe(false);
      expect(error.message).toContain(`refused with ${status}`);
    }
  });

  it("a context-window overflow is CONTEXT_OVERFLOW, from OpenAI's code or a server's message", async () => {
    server.enqueue(
      replies.error(400, "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.", { code: "context_length_exceeded" }),
      // vLLM: the message is at the top level, where the SDK does not look.
      { type: "json", status: 400, body: { object: "error", message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).", type: "BadRequestError", param: null, code: 400 } },
      // llama.cpp server
      { type: "json", status: 400, body: { error: { code: 400, message: "the request exceeds the available context size, try increasing it", type: "exceed_context_size_error", n_prompt_tokens: 9000, n_ctx: 8192 } } },
    );
    for (const expected of ["128000 tokens", "4096 tokens", "exceeds the available context size"]) {
      const error = asAgentError((await collect(model())).error);
      expect(error.code).toBe("CONTEXT_OVERFLOW");
      expect(error.status).toBe(400);
      expect(error.retryable).toBe(false);
      expect(error.message).toContain(expected);
    }
    expect(server.chatRequests).toHaveLength(3);
  });

  it("vLLM's in-stream error object is classified (here a context overflow), not skipped as an empty chunk", async () => {
    server.enqueue(
      replies.chunks([
        chunk({ role: "assistant", content: "" }),
        { object: "error", message: "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens.", type: "BadRequestError", param: null, code: 400 },
      ]),
    );
    const error = asAgentError((await collect(model())).error);
    expect(server.chatRequests).toHaveLength(1);
    expect(error.code).toBe("CONTEXT_OVERFLOW");
    expect(error.status).toBe(400);
    expect(error.message).toContain("8192 tokens");
  });

  it("Gemini's error body (a one-element array) still yields the server's message", async () => {
    server.enqueue({ type: "json", status: 400, body: [{ error: { code: 400, message: "Invalid JSON payload received. Unknown name \"foo\".", status: "INVALID_ARGUMENT" } }] });
    const error = asAgentError((await collect(model())).error);
    expect(error.status).toBe(400);
    expect(error.message).toContain('Invalid JSON payload received. Unknown name "foo".');
  });

  it("a 429 for an exhausted quota is not retried", async () => {
    server.enqueue(replies.error(429, "You exceeded your current quota.", { type: "insufficient_quota", code: "insufficient_quota" }));
    const error = asAgentError((await collect(model())).error);
    expect(server.chatRequests).toHaveLength(1);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain("quota");
  });

  it("the server's x-should-retry: false is obeyed", async () => {
    server.enqueue(replies.error(500, "do not bother", { headers: { "x-should-retry": "false" } }));
    const result = await collect(model());
    expect(server.chatRequests).toHaveLength(1);
    expect(asAgentError(result.error).retryable).toBe(false);
  });

  it("retries exhausted: maxRetries retries, then the last error", async () => {
    server.enqueue(replies.error(503, "overloaded 1"), replies.error(503, "overloaded 2"), replies.error(503, "overloaded 3"), replies.text("too late"));
    const result = await collect(model({ maxRetries: 2 }));
    expect(server.chatRequests).toHaveLength(3);
    expect(retries(result.events)).toMatchObject([{ attempt: 1 }, { attempt: 2 }]);
    const [first, second] = retries(result.events);
    // Exponential: the second wait is about twice the first (each with up to 25 % jitter).
    expect(first.delayMs).toBeLessThanOrEqual(20);
    expect(second.delayMs).toBeGreaterThanOrEqual(30);
    expect(second.delayMs).toBeLessThanOrEqual(40);
    const error = asAgentError(result.error);
    expect(error.code).toBe("MODEL_ERROR");
    expect(error.status).toBe(503);
    expect(error.message).toContain("overloaded 3");
    expect(error.message).toContain("gave up after 3 attempts");
    expect(error.data?.attempts).toBe(3);
  });

  it("maxRetries: 0 makes one attempt", async () => {
    server.enqueue(replies.error(500, "nope"), replies.text("unused"));
    const result = await collect(model({ maxRetries: 0 }));
    expect(server.chatRequests).toHaveLength(1);
    expect(retries(result.events)).toEqual([]);
    expect(asAgentError(result.error).status).toBe(500);
  });

  it("an error body after HTTP 200 (JSON) is classified like any other", async () => {
    server.enqueue({ type: "json", body: { error: { message: "Upstream provider returned 502", code: 502 } } }, replies.text("fine now"));
    const result = await collect(model());
    expect(retries(result.events)).toHaveLength(1);
    expect(result.response?.text).toBe("fine now");
  });
});

describe("retry policy", () => {
  const settings = { retryBaseDelayMs: 500, maxRetryDelayMs: 60_000 };

  it("doubles per retry and jitters downwards by at most a quarter", () => {
    expect(retryDelayMs(1, settings, undefined, () => 0)).toBe(500);
    expect(retryDelayMs(2, settings, undefined, () => 0)).toBe(1000);
    expect(retryDelayMs(3, settings, undefined, () => 0)).toBe(2000);
    expect(retryDelayMs(3, settings, undefined, () => 1)).toBe(1500);
    expect(retryDelayMs(30, settings, undefined, () => 0)).toBe(60_000);
  });

  it("uses the server's wait when given, capped", () => {
    expect(retryDelayMs(1, settings, 2500)).toBe(2500);
    expect(retryDelayMs(1, settings, 3_600_000)).toBe(60_000);
  });

  it("reads retry-after-ms, Retry-After seconds and Retry-After dates", () => {
    const headers = (entries: Record<string, string>) => new Headers(entries);
    expect(retryAfterMs(headers({ "retry-after-ms": "250" }))).toBe(250);
    expect(retryAfterMs(headers({ "retry-after": "2" }))).toBe(2000);
    expect(retryAfterMs(headers({ "retry-after": "0.5" }))).toBe(500);
    const now = Date.parse("2025-01-01T00:00:00Z");
    expect(retryAfterMs(headers({ "retry-after": "Wed, 01 Jan 2025 00:00:07 GMT" }), now)).toBe(7000);
    expect(retryAfterMs(headers({ "retry-after": "soon" }))).toBeUndefined();
    expect(retryAfterMs(headers({}))).toBeUndefined();
  });
});
