import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, isInitializeRequest, ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";

/** What the test server saw: for asserting from outside. */
export interface Seen {
  authorization: string[];
  listPages: Array<string | undefined>;
  cancelled: string[];
}

/**
 * A real Streamable HTTP MCP server on 127.0.0.1, built from the SDK's server classes: its tool list comes in two
 * pages, holds one tool whose schema no validator compiles, and grows by one when `add_tool` is called (with
 * `notifications/tools/list_changed`); `wait` reports progress and notices its cancellation.
 */
export async function startTestServer(port = 0): Promise<{ url: string; seen: Seen; close(): Promise<void> }> {
  const seen: Seen = { authorization: [], listPages: [], cancelled: [] };
  const tools: Tool[] = [
    { name: "shout", description: "Upper-cases text", inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] }, annotations: { readOnlyHint: true } },
    { name: "broken", description: "A schema no validator compiles", inputSchema: { type: "object", properties: { a: { type: "no-such-type" } } } },
    { name: "wait", description: "Waits, reporting progress", inputSchema: { type: "object", properties: {} }, annotations: { readOnlyHint: true } },
    { name: "add_tool", description: "Adds the tool `later`", inputSchema: { type: "object", properties: {} }, annotations: { destructiveHint: false } },
    {
      name: "modern",
      description: "A JSON Schema 2020-12 schema, MCP's default dialect",
      inputSchema: { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", properties: { n: { $ref: "#/$defs/count" } }, required: ["n"], $defs: { count: { type: "integer", minimum: 1 } } },
      annotations: { readOnlyHint: true },
    },
    { name: "fail", description: "Always fails", inputSchema: { type: "object", properties: {} }, annotations: { readOnlyHint: true } },
  ];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const servers: Server[] = [];

  const newServer = () => {
    const server = new Server({ name: "test-server", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
    server.setRequestHandler(ListToolsRequestSchema, (request) => {
      const cursor = request.params?.cursor;
      seen.listPages.push(cursor);
      // Two pages: the first three tools, then the rest.
      return cursor === undefined ? { tools: tools.slice(0, 3), nextCursor: "page-2" } : { tools: tools.slice(3) };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      switch (request.params.name) {
        case "shout":
          return { content: [{ type: "text", text: String(args.text).toUpperCase() }], structuredContent: { length: String(args.text).length } };
        case "fail":
          return { content: [{ type: "text", text: "the backend said no" }], isError: true };
        case "add_tool":
          if (!tools.some((t) => t.name === "later")) {
            tools.push({ name: "later", description: "Added later", inputSchema: { type: "object", properties: {} }, annotations: { readOnlyHint: true } });
          }
          await server.sendToolListChanged();
          return { content: [{ type: "text", text: "added" }] };
        case "modern":
          return { content: [{ type: "text", text: `n=${String(args.n)}` }] };
        case "later":
          return { content: [{ type: "text", text: "later ran" }] };
        case "wait": {
          const token = request.params._meta?.progressToken;
          for (let i = 1; i <= 600 && !extra.signal.aborted; i++) {
            if (token !== undefined) await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: i, total: 600, message: `step ${i}` } });
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          if (extra.signal.aborted) seen.cancelled.push(String(extra.requestId));
          return { content: [{ type: "text", text: "waited" }] };
        }
        default:
          return { content: [{ type: "text", text: `no tool ${request.params.name}` }], isError: true };
      }
    });
    servers.push(server);
    return server;
  };

  const httpServer = http.createServer(async (req, res) => {
    try {
      seen.authorization.push(String(req.headers.authorization ?? ""));
      const sessionId = req.headers["mcp-session-id"];
      let body: unknown;
      if (req.method === "POST") {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      }
      let transport = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
      if (!transport && req.method === "POST" && isInitializeRequest(body)) {
        const created = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void sessions.set(id, created) });
        transport = created;
        await newServer().connect(created);
      }
      if (!transport) {
        res.writeHead(400).end("no session");
        return;
      }
      await transport.handleRequest(req, res, body);
    } catch (error) {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    }
  });
  await new Promise<void>((resolve) => httpServer.listen(port, "127.0.0.1", resolve));
  const address = httpServer.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}/mcp`,
    seen,
    async close() {
      await Promise.all(servers.map((s) => s.close().catch(() => undefined)));
      httpServer.closeAllConnections();
      await new Promise((resolve) => httpServer.close(resolve));
    },
  };
}
