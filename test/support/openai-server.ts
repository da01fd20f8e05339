/**
 * A real OpenAI-compatible HTTP server for tests: node:http on 127.0.0.1, port 0, speaking the Chat Completions
 * SSE wire format. It answers `POST <prefix>/chat/completions` with scripted replies, in order (recorded streams
 * from test/fixtures/openai-wire/, built streams, HTTP errors, dropped or stalled connections), records every
 * request body, and answers other paths 404 like a real server.
 *
 * ```ts
 * const server = await startOpenAIServer();
 * server.enqueue(replies.fixture("openai-python-single-tool-call"), replies.text("Done."));
 * const model = openaiModel({ model: "test-model", baseURL: server.baseURL });
 * // ... server.requests[0].body.messages
 * await server.close();
 * ```
 */
import { readFileSync, readdirSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";

export const FIXTURE_DIR = fileURLToPath(new URL("../fixtures/openai-wire/", import.meta.url));

/** A chat message as a client sent it. */
export interface SeenMessage {
  role: string;
  content?: string | null;
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string }; [key: string]: unknown }[];
  tool_call_id?: string;
  [key: string]: unknown;
}

/** A request body as a client sent it (checked loosely: tests assert on it). */
export interface SeenRequestBody {
  model?: string;
  messages?: SeenMessage[];
  tools?: { type: string; function: { name: string; description?: string; parameters?: Record<string, unknown> } }[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [key: string]: unknown;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** The parsed JSON body; `{}` when the body was not JSON. */
  body: SeenRequestBody;
}

/** How the server answers one chat-completions request. */
export type Reply =
  | {
      type: "sse";
      /** SSE lines as in the fixture files: `data: ...`, `event: ...`, `: comment`. */
      lines: readonly string[];
      status?: number;
      headers?: Record<string, string>;
      /** Pause between lines (a slow stream). */
      lineDelayMs?: number;
      /** After the last line: end the response (default), destroy the socket, or keep it open and silent. */
      then?: "end" | "drop" | "stall";
    }
  | { type: "json"; body: unknown; status?: number; headers?: Record<string, string> }
  | { type: "raw"; body: string; status: number; headers?: Record<string, string> }
  | { type: "custom"; handle: (request: IncomingMessage, response: ServerResponse, recorded: RecordedRequest) => void };

export interface OpenAIServer {
  /** The base URL to give a client, e.g. `http://127.0.0.1:41234/v1`. */
  readonly baseURL: string;
  /** Every request received, in order (including ones to unknown paths). */
  readonly requests: RecordedRequest[];
  /** Only the chat-completions requests. */
  readonly chatRequests: RecordedRequest[];
  /** Replies still queued. */
  readonly pending: number;
  /** Queues replies, answered in order. */
  enqueue(...replies: Reply[]): OpenAIServer;
  /** Closes the server and every open connection (stalled streams included). */
  close(): Promise<void>;
}

export interface OpenAIServerOptions {
  replies?: Reply[];
  /** The answer once the queue is empty. Default: HTTP 500 saying no reply was scripted. */
  fallback?: Reply;
  /** Path prefix of the API (default "/v1"). */
  prefix?: string;
}

export async function startOpenAIServer(options: OpenAIServerOptions = {}): Promise<OpenAIServer> {
  const prefix = options.prefix ?? "/v1";
  const queue: Reply[] = [...(options.replies ?? [])];
  const requests: RecordedRequest[] = [];
  const chatRequests: RecordedRequest[] = [];
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const fallback: Reply =
    options.fallback ?? replies.error(500, "the test server has no scripted reply left for this request", { type: "server_error" });

  const server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on("data", (part: Buffer) => parts.push(part));
    request.on("end", () => {
      const rawBody = Buffer.concat(parts).toString("utf8");
      let body: SeenRequestBody = {};
      try {
        const parsed: unknown = JSON.parse(rawBody);
        if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) body = parsed as SeenRequestBody;
      } catch {
        // Not JSON: recorded raw only.
      }
      const recorded: RecordedRequest = {
        method: request.method ?? "",
        path: request.url ?? "",
        headers: request.headers,
        rawBody,
        body,
      };
      requests.push(recorded);
      const path = (request.url ?? "").split("?")[0];
      if (request.method !== "POST" || path !== `${prefix}/chat/completions`) {
        send({ type: "json", status: 404, body: { error: { message: `Invalid URL (${request.method} ${path})`, type: "invalid_request_error", code: null } } }, request, response, recorded);
        return;
      }
      chatRequests.push(recorded);
      send(queue.shift() ?? fallback, request, response, recorded);
    });
  });

  function later(fn: () => void, ms: number): void {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  }

  function send(reply: Reply, request: IncomingMessage, response: ServerResponse, recorded: RecordedRequest): void {
    switch (reply.type) {
      case "json":
      case "raw": {
        const text = reply.type === "json" ? JSON.stringify(reply.body) : reply.body;
        response.writeHead(reply.status ?? 200, {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(text),
          ...reply.headers,
        });
        response.end(text);
        return;
      }
      case "custom":
        reply.handle(request, response, recorded);
        return;
      case "sse": {
        response.writeHead(reply.status ?? 200, {
          "content-type": "text/event-stream",
          "cache-control": "no-cache",
          connection: "keep-alive",
          ...reply.headers,
        });
        response.flushHeaders();
        const lines = [...reply.lines];
        const delay = reply.lineDelayMs ?? 0;
        const finish = () => {
          if (response.destroyed) return;
          if (reply.then === "drop") {
            // Let what was written reach the client, then cut the connection without ending the chunked body.
            later(() => response.socket?.destroy(), 30);
          } else if (reply.then === "stall") {
            // Silent until the client gives up or the server closes.
          } else {
            response.end();
          }
        };
        const writeNext = () => {
          if (response.destroyed) return;
          const line = lines.shift();
          if (line === undefined) {
            finish();
            return;
          }
          response.write(`${line}\n${line.startsWith("data:") ? "\n" : ""}`);
          if (delay > 0) later(writeNext, delay);
          else writeNext();
        };
        writeNext();
        return;
      }
    }
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  const api: OpenAIServer = {
    baseURL: `http://127.0.0.1:${port}${prefix}`,
    requests,
    chatRequests,
    get pending() {
      return queue.length;
    },
    enqueue(...more: Reply[]) {
      queue.push(...more);
      return api;
    },
    close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
  return api;
}

/** Lines of a recorded stream (`.sse`) from test/fixtures/openai-wire/. */
export function fixtureLines(name: string): string[] {
  const file = name.endsWith(".sse") ? name : `${name}.sse`;
  return readFileSync(FIXTURE_DIR + file, "utf8")
    .split("\n")
    .filter((line) => line !== "");
}

/** A recorded non-streaming body (`.json`) from test/fixtures/openai-wire/. */
export function fixtureJson(name: string): unknown {
  const file = name.endsWith(".json") ? name : `${name}.json`;
  return JSON.parse(readFileSync(FIXTURE_DIR + file, "utf8")) as unknown;
}

/** The fixture names (without extension), streams and whole bodies. */
export function fixtureNames(): { sse: string[]; json: string[] } {
  const files = readdirSync(FIXTURE_DIR).sort();
  return {
    sse: files.filter((f) => f.endsWith(".sse")).map((f) => f.slice(0, -4)),
    json: files.filter((f) => f.endsWith(".json")).map((f) => f.slice(0, -5)),
  };
}

export interface BuiltToolCall {
  name: string;
  /** An object is sent as JSON text; a string as is (to send invalid JSON). */
  arguments: string | Record<string, unknown>;
  /** The server's id; default `call_<n>`. */
  id?: string;
}

export interface BuiltStreamOptions {
  usage?: { prompt_tokens: number; completion_tokens: number; [key: string]: unknown };
  finishReason?: string | null;
  lineDelayMs?: number;
  then?: "end" | "drop" | "stall";
  /** Omit the final `data: [DONE]`. */
  noDone?: boolean;
}

let builtIds = 0;

/** Reply builders. */
export const replies = {
  /** A recorded fixture, stream or whole body, by file name without extension. */
  fixture(name: string, extra: { lineDelayMs?: number } = {}): Reply {
    if (fixtureNames().json.includes(name)) return { type: "json", body: fixtureJson(name) };
    return { type: "sse", lines: fixtureLines(name), ...extra };
  },

  /** A stream of these chunk objects, each as one `data:` line, then `data: [DONE]`. */
  chunks(chunks: readonly unknown[], options: Omit<BuiltStreamOptions, "usage" | "finishReason"> = {}): Reply {
    const lines = chunks.map((chunk) => `data: ${JSON.stringify(chunk)}`);
    if (!options.noDone && options.then !== "drop" && options.then !== "stall") lines.push("data: [DONE]");
    return {
      type: "sse",
      lines,
      ...(options.lineDelayMs !== undefined ? { lineDelayMs: options.lineDelayMs } : {}),
      ...(options.then !== undefined ? { then: options.then } : {}),
    };
  },

  /** A text answer streamed in pieces (split on spaces), with finish reason and usage chunks. */
  text(text: string, options: BuiltStreamOptions = {}): Reply {
    const pieces = text.match(/\S+\s*|\s+/g) ?? [];
    const chunks: unknown[] = [chunk({ role: "assistant", content: "" })];
    for (const piece of pieces) chunks.push(chunk({ content: piece }));
    if (options.finishReason !== null) chunks.push(chunk({}, options.finishReason ?? "stop"));
    chunks.push({ ...envelope(), choices: [], usage: usageOf(options.usage) });
    return replies.chunks(chunks, options);
  },

  /** Tool calls streamed the way OpenAI does (id and name first, arguments split), optionally after some text. */
  toolCalls(calls: readonly BuiltToolCall[], options: BuiltStreamOptions & { text?: string } = {}): Reply {
    const chunks: unknown[] = [chunk({ role: "assistant", content: options.text ? "" : null })];
    if (options.text) chunks.push(chunk({ content: options.text }));
    calls.forEach((call, index) => {
      const id = call.id ?? `call_${++builtIds}`;
      const args = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
      chunks.push(chunk({ tool_calls: [{ index, id, type: "function", function: { name: call.name, arguments: "" } }] }));
      const middle = Math.ceil(args.length / 2);
      for (const part of [args.slice(0, middle), args.slice(middle)]) {
        if (part !== "") chunks.push(chunk({ tool_calls: [{ index, function: { arguments: part } }] }));
      }
    });
    if (options.finishReason !== null) chunks.push(chunk({}, options.finishReason ?? "tool_calls"));
    chunks.push({ ...envelope(), choices: [], usage: usageOf(options.usage) });
    return replies.chunks(chunks, options);
  },

  /** An HTTP error with an OpenAI-style body `{ error: { message, type, code } }`. */
  error(status: number, message: string, options: { type?: string; code?: string | null; headers?: Record<string, string> } = {}): Reply {
    return {
      type: "json",
      status,
      body: { error: { message, type: options.type ?? "invalid_request_error", param: null, code: options.code ?? null } },
      ...(options.headers ? { headers: options.headers } : {}),
    };
  },

  /** Headers and these chunks, then the socket is destroyed (a connection reset mid-stream). */
  drop(chunks: readonly unknown[] = []): Reply {
    return replies.chunks(chunks, { then: "drop" });
  },

  /** Headers and these chunks, then silence with the connection left open (a stalled stream). */
  stall(chunks: readonly unknown[] = []): Reply {
    return replies.chunks(chunks, { then: "stall" });
  },
};

/** One streamed chunk with a delta for choice 0. */
export function chunk(delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> {
  return { ...envelope(), choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] };
}

function envelope(): Record<string, unknown> {
  return { id: "chatcmpl-test", object: "chat.completion.chunk", created: 1_700_000_000, model: "test-model" };
}

function usageOf(usage: BuiltStreamOptions["usage"]): Record<string, unknown> {
  const u = usage ?? { prompt_tokens: 10, completion_tokens: 5 };
  return { ...u, total_tokens: u.prompt_tokens + u.completion_tokens };
}
