import { afterEach, beforeEach } from "vitest";
import { defineTool } from "../../src/index.js";
import { startAnthropicServer, type AnthropicReply, type AnthropicServer } from "./anthropic-server.js";
import { removeDir, tempDir } from "./engine.js";

/**
 * The local Messages API server, a fresh one for each test (started before it, closed after it), behind one object a
 * test file keeps: it reaches the server of the test that is running.
 */
export function anthropicServerPerTest(): AnthropicServer {
  let current: AnthropicServer | undefined;
  beforeEach(async () => {
    current = await startAnthropicServer();
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  const server = (): AnthropicServer => {
    if (!current) throw new Error("the Anthropic test server runs only inside a test");
    return current;
  };
  const perTest: AnthropicServer = {
    get baseUrl() {
      return server().baseUrl;
    },
    get requests() {
      return server().requests;
    },
    enqueue: (...replies) => {
      server().enqueue(...replies);
      return perTest;
    },
    close: () => server().close(),
  };
  return perTest;
}

/** A fresh temp dir for each test (removed after it), as `path`. */
export function tempDirPerTest(prefix: string): { readonly path: string } {
  let path: string | undefined;
  beforeEach(() => {
    path = tempDir(prefix);
  });
  afterEach(() => {
    if (path !== undefined) removeDir(path);
    path = undefined;
  });
  return {
    get path() {
      if (path === undefined) throw new Error("the temp dir exists only inside a test");
      return path;
    },
  };
}

/** get_weather, the tool of the Messages API docs' examples; each input it runs with is pushed onto `seen`. */
export function weatherTool(seen: unknown[]) {
  return defineTool({
    name: "get_weather",
    description: "Get the current weather in a given location",
    inputSchema: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
    risk: "read",
    execute: (input: { location: string }) => {
      seen.push(input);
      return `${input.location}: 18C, clear`;
    },
  });
}

/**
 * A reply that starts a text block and streams a delta ("<word>0 ", "<word>1 ", ...) every 20 ms until the client
 * closes the connection; `connectionClosed` resolves then, so a test sees that an abort really stopped the request.
 */
export function endlessTextReply(word: string): { reply: AnthropicReply; connectionClosed: Promise<void> } {
  let closed!: () => void;
  const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
  const reply: AnthropicReply = {
    type: "custom",
    handle(_req, res) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write('event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"x","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}\n\n');
      res.write('event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n');
      let n = 0;
      const timer = setInterval(() => res.write(`event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${word}${n++} "}}\n\n`), 20);
      res.on("close", () => {
        clearInterval(timer);
        closed();
      });
    },
  };
  return { reply, connectionClosed };
}
