/**
 * A real Anthropic Messages API server for tests: node:http on 127.0.0.1, port 0, answering `POST /v1/messages`
 * with scripted replies in order (the SSE streams of test/fixtures/anthropic-wire/, error bodies with their status
 * and headers, custom handlers), recording every request, and answering other paths 404 as the API does.
 *
 * ```ts
 * const server = await startAnthropicServer();
 * server.enqueue(anthropicReplies.fixture("docs-tool-use"), anthropicReplies.fixture("docs-basic-text"));
 * const model = anthropicModel({ model: "claude-sonnet-4-5", maxTokens: 1024, baseUrl: server.baseUrl }, {});
 * ```
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";

export const ANTHROPIC_FIXTURE_DIR = fileURLToPath(new URL("../fixtures/anthropic-wire/", import.meta.url));

export interface AnthropicRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export type AnthropicReply =
  | { type: "sse"; body: string; then?: "end" | "drop" }
  | { type: "json"; status: number; body: unknown; headers?: Record<string, string> }
  | { type: "custom"; handle: (request: IncomingMessage, response: ServerResponse) => void };

export interface AnthropicServer {
  /** The base URL to give a client (no `/v1`: the SDK adds it). */
  readonly baseUrl: string;
  readonly requests: AnthropicRequest[];
  enqueue(...replies: AnthropicReply[]): AnthropicServer;
  close(): Promise<void>;
}

export const anthropicReplies = {
  /** A stream of test/fixtures/anthropic-wire/<name>.sse, as recorded. */
  fixture(name: string, then: "end" | "drop" = "end"): AnthropicReply {
    return { type: "sse", body: readFileSync(`${ANTHROPIC_FIXTURE_DIR}${name}.sse`, "utf8"), then };
  },
  /** An API error: `{ type: "error", error: { type, message } }` with its HTTP status. */
  error(status: number, type: string, message: string, headers?: Record<string, string>): AnthropicReply {
    return { type: "json", status, body: { type: "error", error: { type, message } }, ...(headers ? { headers } : {}) };
  },
  /** A built stream in the fixtures' shape: one text block, `end_turn`. */
  text(text: string): AnthropicReply {
    return sse([{ type: "text", text }], "end_turn");
  },
  /** A built stream in the fixtures' shape: optional text, then one tool_use block per call, `tool_use`. */
  toolUse(calls: Array<{ name: string; input: Record<string, unknown>; id?: string }>, text = ""): AnthropicReply {
    const blocks = [...(text !== "" ? [{ type: "text", text }] : []), ...calls.map((call, i) => ({ type: "tool_use", id: call.id ?? `toolu_test${i}`, name: call.name, input: call.input }))];
    return sse(blocks, "tool_use");
  },
  /** A JSON fixture body with a status (e.g. overloaded-error.json with 529). */
  jsonFixture(name: string, status: number, headers?: Record<string, string>): AnthropicReply {
    return { type: "json", status, body: JSON.parse(readFileSync(`${ANTHROPIC_FIXTURE_DIR}${name}.json`, "utf8")), ...(headers ? { headers } : {}) };
  },
};

/** The events of a whole response, block by block, as the API streams them (tool input as one input_json_delta). */
function sse(blocks: Array<Record<string, unknown>>, stopReason: string): AnthropicReply {
  const events: unknown[] = [
    { type: "message_start", message: { id: "msg_built", type: "message", role: "assistant", content: [], model: "claude-test", stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } },
  ];
  blocks.forEach((block, index) => {
    if (block.type === "text") {
      events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
      events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } });
    } else {
      events.push({ type: "content_block_start", index, content_block: { ...block, input: {} } });
      events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } });
    }
    events.push({ type: "content_block_stop", index });
  });
  events.push({ type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 5 } });
  events.push({ type: "message_stop" });
  return { type: "sse", body: events.map((e) => `event: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n`).join("") };
}

export async function startAnthropicServer(): Promise<AnthropicServer> {
  const queue: AnthropicReply[] = [];
  const requests: AnthropicRequest[] = [];
  const server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on("data", (part: Buffer) => parts.push(part));
    request.on("end", () => {
      const raw = Buffer.concat(parts).toString("utf8");
      let body: unknown = {};
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
      requests.push({ method: request.method ?? "", path: request.url ?? "", headers: request.headers, body });
      if (request.method !== "POST" || (request.url ?? "").split("?")[0] !== "/v1/messages") {
        answerJson(response, 404, { type: "error", error: { type: "not_found_error", message: `Not found: ${request.url}` } });
        return;
      }
      const reply = queue.shift() ?? anthropicReplies.error(500, "api_error", "the test server has no scripted reply left");
      answer(reply, request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    enqueue(...replies) {
      queue.push(...replies);
      return this;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function answer(reply: AnthropicReply, request: IncomingMessage, response: ServerResponse): void {
  if (reply.type === "custom") {
    reply.handle(request, response);
  } else if (reply.type === "json") {
    answerJson(response, reply.status, reply.body, reply.headers);
  } else {
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    response.write(reply.body);
    if (reply.then === "drop") response.socket?.destroy();
    else response.end();
  }
}

function answerJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(body));
}
