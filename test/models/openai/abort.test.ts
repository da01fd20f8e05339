import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ModelStreamEvent } from "../../../src/models/model.js";
import { openaiModel } from "../../../src/models/openai/index.js";
import { chunk, replies, startOpenAIServer, type OpenAIServer } from "../../support/openai-server.js";
import { request } from "./helpers.js";

let server: OpenAIServer;
beforeEach(async () => {
  server = await startOpenAIServer();
});
afterEach(async () => {
  await server.close();
});

/** A stream that sends a word every 50 ms for 10 s, and notes when its connection closes. */
function endlessText(closed: { at?: number }) {
  return {
    type: "custom" as const,
    handle(_req: unknown, res: import("node:http").ServerResponse) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${JSON.stringify(chunk({ role: "assistant", content: "" }))}\n\n`);
      let n = 0;
      const timer = setInterval(() => {
        if (n++ > 200) {
          clearInterval(timer);
          res.end();
          return;
        }
        res.write(`data: ${JSON.stringify(chunk({ content: `word${n} ` }))}\n\n`);
      }, 50);
      res.on("close", () => {
        clearInterval(timer);
        closed.at = Date.now();
      });
    },
  };
}

describe("abort", () => {
  it("aborting mid-stream ends the call promptly with the abort reason and closes the connection", async () => {
    const closed: { at?: number } = {};
    server.enqueue(endlessText(closed));
    const model = openaiModel({ model: "test-model", baseURL: server.baseURL }, {});
    const controller = new AbortController();
    const reason = new Error("stop now");
    const events: ModelStreamEvent[] = [];
    let abortedAt = 0;
    let thrown: unknown;
    try {
      for await (const event of model.stream(request(), { signal: controller.signal })) {
        events.push(event);
        if (events.filter((e) => e.type === "text_delta").length === 3) {
          // Abort from outside the loop, as a timer or the engine would, while the model waits for the next chunk.
          setTimeout(() => {
            abortedAt = Date.now();
            controller.abort(reason);
          }, 10);
        }
      }
    } catch (error) {
      thrown = error;
    }
    const endedAt = Date.now();
    expect(thrown).toBe(reason);
    expect(abortedAt).toBeGreaterThan(0);
    // The issue's bound is ~100 ms; generous here, since only the order of magnitude matters.
    expect(endedAt - abortedAt).toBeLessThan(300);
    expect(events.some((e) => e.type === "response")).toBe(false);
    expect(events.filter((e) => e.type === "text_delta").length).toBeGreaterThanOrEqual(3);
    expect(events.filter((e) => e.type === "text_delta").length).toBeLessThan(10);
    // The request really stopped: the server saw the connection close.
    await waitFor(() => closed.at !== undefined, 2000);
    expect(closed.at! - abortedAt).toBeLessThan(1000);
    expect(server.chatRequests).toHaveLength(1);
  });

  it("an already aborted signal sends no request", async () => {
    const model = openaiModel({ model: "test-model", baseURL: server.baseURL }, {});
    const controller = new AbortController();
    controller.abort(new Error("already gone"));
    await expect(drain(model.stream(request(), { signal: controller.signal }))).rejects.toThrow("already gone");
    expect(server.requests).toHaveLength(0);
  });

  it("aborting while the server has not answered yet ends the call promptly", async () => {
    server.enqueue({ type: "custom", handle: () => {} });
    const model = openaiModel({ model: "test-model", baseURL: server.baseURL }, {});
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    const error = await drain(model.stream(request(), { signal: controller.signal })).catch((e: unknown) => e);
    expect((error as Error).name).toBe("AbortError");
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("aborting during a retry's backoff ends the wait at once", async () => {
    server.enqueue(replies.error(429, "busy", { headers: { "retry-after": "30" } }));
    const model = openaiModel({ model: "test-model", baseURL: server.baseURL }, {});
    const controller = new AbortController();
    const events: ModelStreamEvent[] = [];
    let abortedAt = 0;
    const error = await (async () => {
      for await (const event of model.stream(request(), { signal: controller.signal })) {
        events.push(event);
        if (event.type === "retry") {
          setTimeout(() => {
            abortedAt = Date.now();
            controller.abort(new Error("user left"));
          }, 20);
        }
      }
    })().catch((e: unknown) => e);
    expect((error as Error).message).toBe("user left");
    expect(Date.now() - abortedAt).toBeLessThan(300);
    expect(events).toMatchObject([{ type: "retry", attempt: 1, delayMs: 30_000 }]);
    expect(server.chatRequests).toHaveLength(1);
  });

  it("a caller that stops reading early closes the connection", async () => {
    const closed: { at?: number } = {};
    server.enqueue(endlessText(closed));
    const model = openaiModel({ model: "test-model", baseURL: server.baseURL }, {});
    let deltas = 0;
    for await (const event of model.stream(request(), { signal: new AbortController().signal })) {
      if (event.type === "text_delta" && ++deltas === 2) break;
    }
    const stoppedAt = Date.now();
    await waitFor(() => closed.at !== undefined, 2000);
    expect(closed.at! - stoppedAt).toBeLessThan(1000);
  });
});

async function drain(stream: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
