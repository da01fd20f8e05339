import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { anthropicModel } from "../../../src/index.js";
import { AgentError } from "../../../src/errors/agent-error.js";
import type { ModelRequest, ModelStreamEvent } from "../../../src/models/model.js";
import { anthropicReplies } from "../../support/anthropic-server.js";
import { anthropicServerPerTest, endlessTextReply } from "../../support/anthropic-per-test.js";

/** Every error class of the Messages API, through the SDK and HTTP, and an abort mid-stream. */

const server = anthropicServerPerTest();

const KEY = "sk-ant-api03-secret-key-value";
const request: ModelRequest = { messages: [{ role: "user", content: "Hello" }], tools: [], sessionId: "s", turn: 0 };

function model(options: { apiKey?: string; maxRetries?: number } = { apiKey: KEY }) {
  return anthropicModel({ model: "claude-sonnet-4-5", maxTokens: 1024, baseUrl: server.baseUrl, retryBaseDelayMs: 1, maxRetryDelayMs: 30, ...options }, {});
}

async function drain(m = model(), signal = new AbortController().signal): Promise<{ events: ModelStreamEvent[]; error?: AgentError }> {
  const events: ModelStreamEvent[] = [];
  try {
    for await (const event of m.stream(request, { signal })) events.push(event);
    return { events };
  } catch (error) {
    if (!(error instanceof AgentError)) throw error;
    return { events, error };
  }
}

const retries = (events: ModelStreamEvent[]) => events.filter((e) => e.type === "retry");
const finalText = (events: ModelStreamEvent[]) => {
  const last = events[events.length - 1];
  return last?.type === "response" ? last.response.text : undefined;
};

describe("anthropicModel errors", () => {
  it("401 without a key: says to set ANTHROPIC_API_KEY; not retried", async () => {
    server.enqueue(anthropicReplies.error(401, "authentication_error", "invalid x-api-key"));
    const { error } = await drain(model({}));
    expect(error).toMatchObject({ code: "MODEL_ERROR", status: 401, retryable: false });
    expect(error!.message).toContain("no API key was sent; set ANTHROPIC_API_KEY");
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0].headers.authorization).toBe("Bearer statecraft-no-key");
  });

  it("401 with a key the server echoes: says it was rejected, and the key never reaches the message", async () => {
    server.enqueue(anthropicReplies.error(401, "authentication_error", `invalid key ${KEY}`));
    const { error } = await drain();
    expect(error!.message).toContain("the API key was rejected; check ANTHROPIC_API_KEY");
    expect(error!.message).not.toContain(KEY);
    expect(error!.message).toContain("[redacted]");
  });

  it("403: access denied to the model; 404: the model or endpoint was not found; neither retried", async () => {
    server.enqueue(anthropicReplies.error(403, "permission_error", "Your API key does not have permission to use the specified resource."));
    const denied = await drain();
    expect(denied.error).toMatchObject({ code: "MODEL_ERROR", status: 403, retryable: false });
    expect(denied.error!.message).toContain('access denied to model "claude-sonnet-4-5"');
    server.enqueue(anthropicReplies.error(404, "not_found_error", "model: claude-sonnet-4-5"));
    const missing = await drain();
    expect(missing.error).toMatchObject({ code: "MODEL_ERROR", status: 404, retryable: false });
    expect(missing.error!.message).toContain('model "claude-sonnet-4-5" or the endpoint was not found');
    expect(server.requests).toHaveLength(2);
  });

  it("429 with retry-after: retried after the server's wait (capped by maxRetryDelayMs), then succeeds", async () => {
    server.enqueue(anthropicReplies.error(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", { "retry-after": "1" }), anthropicReplies.fixture("docs-basic-text"));
    const { events, error } = await drain();
    expect(error).toBeUndefined();
    expect(retries(events)).toEqual([{ type: "retry", attempt: 1, delayMs: 30, error: { code: "MODEL_ERROR", message: expect.stringContaining("HTTP 429") } }]);
    expect(finalText(events)).toBe("Hello!");
    expect(server.requests).toHaveLength(2);
  });

  it("529 overloaded (the recorded body): retried with backoff, then succeeds", async () => {
    server.enqueue(anthropicReplies.jsonFixture("overloaded-error", 529), anthropicReplies.fixture("docs-basic-text"));
    const { events } = await drain();
    const [retry] = retries(events);
    expect(retry).toMatchObject({ attempt: 1, error: { code: "MODEL_ERROR" } });
    expect((retry as { error: { message: string } }).error.message).toBe(`HTTP 529 from ${server.baseUrl}: the API is overloaded: Overloaded`);
    expect(finalText(events)).toBe("Hello!");
  });

  it("500 and 503 are retried; when they persist the error says how many attempts were made", async () => {
    server.enqueue(anthropicReplies.error(500, "api_error", "Internal server error"), anthropicReplies.error(503, "api_error", "unavailable"));
    const { events, error } = await drain(model({ apiKey: KEY, maxRetries: 1 }));
    expect(retries(events)).toHaveLength(1);
    expect(error).toMatchObject({ code: "MODEL_ERROR", status: 503, retryable: true, data: { attempts: 2 } });
    expect(error!.message).toContain("(gave up after 2 attempts; maxRetries is 1)");
  });

  it('"prompt is too long" is CONTEXT_OVERFLOW (compaction\'s cue), not retried', async () => {
    server.enqueue(anthropicReplies.error(400, "invalid_request_error", "prompt is too long: 208310 tokens > 200000 maximum"));
    const { error } = await drain();
    expect(error).toMatchObject({ code: "CONTEXT_OVERFLOW", status: 400, retryable: false });
    expect(error!.message).toContain("prompt is too long: 208310 tokens > 200000 maximum");
    expect(server.requests).toHaveLength(1);
  });

  it("400 invalid request: the API's words, not retried", async () => {
    server.enqueue(anthropicReplies.error(400, "invalid_request_error", "messages: text content blocks must be non-empty"));
    const { error } = await drain();
    expect(error).toMatchObject({ code: "MODEL_ERROR", status: 400, retryable: false });
    expect(error!.message).toContain("the API rejected the request: messages: text content blocks must be non-empty");
  });

  it("an overloaded_error event inside the stream, before any text: retried, then succeeds", async () => {
    server.enqueue(anthropicReplies.fixture("error-mid-stream"), anthropicReplies.fixture("docs-basic-text"));
    const { events, error } = await drain();
    expect(error).toBeUndefined();
    const [retry] = retries(events);
    expect((retry as { error: { message: string } }).error.message).toBe(
      `${server.baseUrl} reported an error after the response started (overloaded_error): the API is overloaded: Overloaded`,
    );
    expect(finalText(events)).toBe("Hello!");
  });

  it("an error event after text reached the caller: not retried (it would be seen twice); the text is kept in the error", async () => {
    server.enqueue(anthropicReplies.fixture("error-after-text"), anthropicReplies.fixture("docs-basic-text"));
    const { events, error } = await drain();
    expect(events).toEqual([{ type: "text_delta", text: "Hello" }]);
    expect(error).toMatchObject({ code: "MODEL_ERROR", retryable: true, data: { attempts: 1, partial: { text: "Hello" } } });
    expect(server.requests).toHaveLength(1);
  });

  it("a connection dropped mid-stream before any text: retried", async () => {
    const cut = {
      type: "custom" as const,
      handle(_req: unknown, res: ServerResponse) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write('event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"x","usage":{"input_tokens":1,"output_tokens":1}}}\n\n');
        setImmediate(() => res.socket?.destroy());
      },
    };
    server.enqueue(cut, anthropicReplies.fixture("docs-basic-text"));
    const { events, error } = await drain();
    expect(error).toBeUndefined();
    expect(retries(events)).toHaveLength(1);
    expect(finalText(events)).toBe("Hello!");
  });

  it("a stream that ends without message_stop is an error (retried), not a short answer", async () => {
    const truncated = {
      type: "custom" as const,
      handle(_req: unknown, res: ServerResponse) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end('event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"x","usage":{"input_tokens":1,"output_tokens":1}}}\n\n');
      },
    };
    server.enqueue(truncated, truncated);
    const { error } = await drain(model({ apiKey: KEY, maxRetries: 1 }));
    expect(error!.message).toContain("closed the stream before the response ended (no message_stop)");
    expect(error!.retryable).toBe(true);
    expect(server.requests).toHaveLength(2);
  });
});

describe("anthropicModel abort", () => {
  it("aborting mid-stream ends the call with the abort reason and the server sees the connection closed", async () => {
    const { reply, connectionClosed } = endlessTextReply("word");
    server.enqueue(reply);
    const controller = new AbortController();
    const reason = new Error("stop now");
    const events: ModelStreamEvent[] = [];
    let thrown: unknown;
    try {
      for await (const event of model().stream(request, { signal: controller.signal })) {
        events.push(event);
        if (events.length === 3) controller.abort(reason);
      }
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBe(reason);
    expect(events.slice(0, 3).every((e) => e.type === "text_delta")).toBe(true);
    expect(events.some((e) => e.type === "response")).toBe(false);
    // The server's side of the connection closes: the request was really stopped, not left streaming.
    await connectionClosed;
    expect(server.requests).toHaveLength(1);
  });
});
