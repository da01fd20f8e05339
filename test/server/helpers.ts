import http from "node:http";
import { EventSourceParserStream, type EventSourceMessage } from "eventsource-parser/stream";
import { afterEach, beforeEach } from "vitest";
import { builtinTools, defineTool, scriptedModel, type ToolContext } from "../../src/index.js";
import type { ScriptStep } from "../../src/models/scripted.js";
import { serve, type StatecraftServer } from "../../src/server/index.js";
import { removeDir, tempDir } from "../support/engine.js";

type ServeOptions = Parameters<typeof serve>[0];

export const TOKEN = "test-token-0123456789abcdef";

/** A request to the server with the token (unless `token` is given as null or another value). */
export function call(base: string, path: string, init: { method?: string; body?: unknown; token?: string | null; headers?: Record<string, string> } = {}): Promise<Response> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  const token = init.token === undefined ? TOKEN : init.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (init.body !== undefined) headers["content-type"] ??= "application/json";
  return fetch(`${base}${path}`, {
    method: init.method ?? (init.body !== undefined ? "POST" : "GET"),
    headers,
    ...(init.body !== undefined ? { body: typeof init.body === "string" ? init.body : JSON.stringify(init.body) } : {}),
  });
}

/** The Server-Sent Events of a response, parsed by eventsource-parser. */
export async function* sseOf(response: Response): AsyncGenerator<EventSourceMessage> {
  const stream = response.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** Reads a stream's events until `stop` says so (included), then leaves the connection (the client goes away). */
export async function readUntil(response: Response, stop: (message: EventSourceMessage) => boolean): Promise<EventSourceMessage[]> {
  const out: EventSourceMessage[] = [];
  for await (const message of sseOf(response)) {
    out.push(message);
    if (stop(message)) break;
  }
  return out;
}

/** A gate a test opens: a tool that waits on it holds the run at a known point. */
export function gate(): { open: () => void; tool: ReturnType<typeof defineTool> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const tool = defineTool({
    name: "wait_gate",
    description: "Waits until the test opens the gate.",
    risk: "read",
    inputSchema: { type: "object" },
    execute: async (_input: unknown, _context: ToolContext) => {
      await opened;
      return "gate opened";
    },
  });
  return { open, tool };
}

/** A raw HTTP request with the given Host header (fetch does not let a test set Host). */
export function rawRequest(port: number, options: { path: string; method?: string; headers: Record<string, string>; body?: string }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path: options.path, method: options.method ?? "GET", headers: options.headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

/**
 * A server per test: a fresh temp dir as its `cwd` before each test, the server closed and the dir removed after it.
 * `start(steps)` serves a scripted model with the built-in tools (`extra` adds or replaces options); `listen()` serves
 * the given options as they are. `base` is the URL of the server last started.
 */
export function serverPerTest(): {
  readonly cwd: string;
  readonly base: string;
  readonly port: number;
  start(steps: ScriptStep[], extra?: Partial<ServeOptions>): Promise<void>;
  listen(options: ServeOptions): Promise<void>;
} {
  let cwd = "";
  let server: StatecraftServer | undefined;
  let listening: { url: string; port: number } | undefined;
  beforeEach(() => {
    cwd = tempDir();
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    listening = undefined;
    removeDir(cwd);
  });
  const listen = async (options: ServeOptions): Promise<void> => {
    server = serve(options);
    listening = await server.listen(0);
  };
  return {
    get cwd() {
      return cwd;
    },
    get base() {
      if (!listening) throw new Error("no server started in this test: call start() or listen() first");
      return listening.url;
    },
    get port() {
      if (!listening) throw new Error("no server started in this test: call start() or listen() first");
      return listening.port;
    },
    start: (steps, extra = {}) => listen({ model: scriptedModel(steps), tools: builtinTools(), cwd, token: TOKEN, ...extra }),
    listen,
  };
}
