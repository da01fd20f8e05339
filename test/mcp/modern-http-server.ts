import http from "node:http";
import type { AddressInfo } from "node:net";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { createMcpHandler, fromJsonSchema, McpServer, type CacheHint } from "@modelcontextprotocol/server";

export interface ModernServerOptions {
  /** "reject": 2026-07-28 only; default: the 2025 requests served too (statelessly). */
  legacy?: "stateless" | "reject";
  /** The hint `tools/list` answers carry (2026-07-28 only). */
  toolsCache?: CacheHint;
  /** Advertise `tools.listChanged` (pushed over `subscriptions/listen`). Default true, as McpServer does. */
  listChanged?: boolean;
}

/**
 * A Streamable HTTP MCP server on 127.0.0.1 written with SDK v2: a fresh server per request from one factory (the
 * SDK's `createMcpHandler`). It counts what it is asked (with the era of each), and `addTool()` makes the tool
 * `later` appear (publishing `notifications/tools/list_changed` to open subscriptions).
 */
export async function startModernServer(options: ModernServerOptions = {}) {
  const seen: string[] = [];
  let withLater = false;
  const factory = (ctx: { era: "legacy" | "modern" }) => {
    const server = new McpServer(
      { name: "modern-http", version: "2.4.0" },
      { capabilities: { tools: { listChanged: options.listChanged ?? true } }, ...(options.toolsCache ? { cacheHints: { "tools/list": options.toolsCache } } : {}) },
    );
    server.registerTool(
      "shout",
      { description: "Upper-cases text", inputSchema: fromJsonSchema<{ text: string }>({ type: "object", properties: { text: { type: "string" } }, required: ["text"] }), annotations: { readOnlyHint: true } },
      async ({ text }) => ({ content: [{ type: "text", text: text.toUpperCase() }], structuredContent: { length: text.length, era: ctx.era } }),
    );
    if (withLater) {
      server.registerTool("later", { description: "Added later", annotations: { readOnlyHint: true } }, async () => ({ content: [{ type: "text", text: "later ran" }] }));
    }
    return server;
  };
  const handler = createMcpHandler(factory, { legacy: options.legacy ?? "stateless" });
  const node = toNodeHandler(handler);
  const server = http.createServer(async (req, res) => {
    if (req.method === "POST") {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "null") as { method?: string; params?: { _meta?: Record<string, unknown> } } | null;
      const era = body?.params?._meta?.["io.modelcontextprotocol/protocolVersion"] ? "2026-07-28" : "2025";
      if (body?.method) seen.push(`${body.method} ${era}`);
      return node(req, res, body);
    }
    return node(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    seen,
    /** The tool `later` appears; open subscriptions hear of it unless `quietly`. */
    addTool(quietly = false) {
      withLater = true;
      if (!quietly) handler.notify.toolsChanged();
    },
    async close() {
      await handler.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
