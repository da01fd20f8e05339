import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { McpServer, WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import { checkAllowOrigins } from "../inspect/origins.js";
import { DEFAULT_MAX_BODY_BYTES, type McpHttpOptions } from "./options.js";
import type { ServerSdk } from "./run-tool.js";

/** The path hosts connect to. */
export const MCP_PATH = "/mcp";

/**
 * Streamable HTTP on 127.0.0.1 for both generations: a 2026-07-28 request (it carries its `_meta` envelope) is served
 * by the SDK's stateless handler; a 2025 one by a session of its own (`Mcp-Session-Id`), so that the SDK can put a
 * permission question to the host (`elicitation/create`) on it and hear the answer. Before either: the Host header
 * (no DNS rebinding), the Origin (a browser page of another site is refused), the bearer token, the body's size.
 */
export async function listenHttp(sdk: ServerSdk, factory: () => McpServer, options: McpHttpOptions) {
  const { toNodeHandler } = await import("@modelcontextprotocol/node");
  const token = options.token ?? randomBytes(24).toString("base64url");
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const appOrigins = new Set(checkAllowOrigins(options.allowOrigins, "allowOrigins"));
  const modern = sdk.createMcpHandler(factory, { legacy: "reject", maxRequestBodySize: maxBody });
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();

  const legacy = async (request: Request): Promise<Response> => {
    const id = request.headers.get("mcp-session-id");
    const known = id ? sessions.get(id) : undefined;
    if (known) return known.handleRequest(request);
    if (id) return jsonError(404, -32001, `no session ${id} here (the server restarted, or the session was closed): initialize again`);
    const body: unknown = request.method === "POST" ? await request.clone().json().catch(() => undefined) : undefined;
    if (!sdk.isInitializeRequest(body)) return jsonError(400, -32600, "a 2025 request without Mcp-Session-Id must be initialize");
    const transport: WebStandardStreamableHTTPServerTransport = new sdk.WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: maxBody,
      onsessioninitialized: (sessionId) => void sessions.set(sessionId, transport),
      onsessionclosed: (sessionId) => void sessions.delete(sessionId),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await factory().connect(transport);
    return transport.handleRequest(request);
  };

  const node = toNodeHandler(
    { fetch: async (request) => ((await sdk.isLegacyRequest(request, undefined, { maxRequestBodySize: maxBody })) ? legacy(request) : modern.fetch(request)) },
    { maxRequestBodySize: maxBody },
  );

  let port = 0;
  const server = http.createServer((req, res) => {
    const refusal = refuse(req, port, token, appOrigins, maxBody);
    if (refusal) {
      res.writeHead(refusal.status, { "Content-Type": "text/plain; charset=utf-8", ...(refusal.status === 401 ? { "WWW-Authenticate": 'Bearer realm="statecraft"' } : {}) });
      res.end(`${refusal.message}\n`);
      // An unread body of a refused request is not worth reading.
      if (req.readable) req.destroy();
      return;
    }
    void node(req, res);
  });
  server.headersTimeout = 30_000;
  server.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${MCP_PATH}`,
    token,
    async close() {
      await modern.close();
      await Promise.all([...sessions.values()].map((t) => t.close().catch(() => undefined)));
      sessions.clear();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Why a request is refused before it reaches MCP, or undefined when it may go on. */
export function refuse(req: http.IncomingMessage, port: number, token: string, appOrigins: Set<string>, maxBody: number): { status: number; message: string } | undefined {
  const own = [`127.0.0.1:${port}`, `localhost:${port}`];
  if (!own.includes(req.headers.host ?? "")) return { status: 403, message: `Host ${req.headers.host ?? "(none)"} refused: this server answers to ${own.join(" or ")} only` };
  const origin = req.headers.origin;
  if (origin !== undefined && !own.some((h) => origin === `http://${h}`) && !appOrigins.has(origin)) {
    return { status: 403, message: `Origin ${origin} refused: a web page may not call this server (allow an origin with --allow-origin)` };
  }
  if (new URL(req.url ?? "/", "http://x").pathname !== MCP_PATH) return { status: 404, message: `not found: the MCP endpoint is ${MCP_PATH}` };
  const problem = tokenProblem(req.headers.authorization, token);
  if (problem) return { status: 401, message: problem };
  const length = Number(req.headers["content-length"] ?? 0);
  if (length > maxBody) return { status: 413, message: `request body of ${length} bytes is over this server's limit of ${maxBody}` };
  return undefined;
}

/** Compared in constant time, by digest so that lengths do not tell either. */
function tokenProblem(header: string | undefined, token: string): string | undefined {
  if (header === undefined) return "missing Authorization: Bearer <token> (the token statecraft mcp serve printed, or the one in --token-file)";
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (!match) return "Authorization must be Bearer <token>";
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(match[1]), digest(token)) ? undefined : "wrong bearer token";
}

function jsonError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), { status, headers: { "Content-Type": "application/json" } });
}
