import http from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { DemoInMemoryAuthProvider } from "@modelcontextprotocol/sdk/examples/server/demoInMemoryOAuthProvider.js";
import { mcpAuthRouter } from "@modelcontextprotocol/sdk/server/auth/router.js";

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * A local OAuth authorization server (the SDK 1.x auth router over its in-memory demo provider: dynamic client
 * registration, PKCE, an authorization page that approves at once) and an MCP server (SDK v2) that serves only
 * requests bearing one of its tokens, pointing unauthenticated clients at it (RFC 9728 protected resource metadata).
 */
export async function startOAuthServers() {
  const provider = new DemoInMemoryAuthProvider();
  const asServer = http.createServer();
  const asUrl = await listen(asServer);
  const app = express();
  app.use(mcpAuthRouter({ provider, issuerUrl: new URL(asUrl), scopesSupported: ["mcp:tools"] }));
  asServer.on("request", app);

  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: "protected", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.registerTool("whoami", { description: "Says who called", annotations: { readOnlyHint: true } }, async (ctx) => ({
      content: [{ type: "text", text: `hello ${String(ctx.http?.authInfo?.clientId ?? "nobody")}` }],
    }));
    return server;
  });
  const node = toNodeHandler(handler);
  const rsServer = http.createServer();
  const rsUrl = await listen(rsServer);
  const mcpUrl = `${rsUrl}/mcp`;
  const metadataUrl = `${rsUrl}/.well-known/oauth-protected-resource/mcp`;
  const seen: string[] = [];
  rsServer.on("request", async (req: http.IncomingMessage & { auth?: unknown }, res: http.ServerResponse) => {
    if (req.url?.startsWith("/.well-known/oauth-protected-resource")) {
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ resource: mcpUrl, authorization_servers: [new URL(asUrl).href], scopes_supported: ["mcp:tools"] }));
      return;
    }
    const match = /^Bearer (.+)$/.exec(req.headers.authorization ?? "");
    try {
      if (!match) throw new Error("no token");
      req.auth = await provider.verifyAccessToken(match[1]);
      seen.push("authorized");
    } catch {
      seen.push("refused");
      res.writeHead(401, { "WWW-Authenticate": `Bearer error="invalid_token", resource_metadata="${metadataUrl}"`, "Content-Type": "application/json" });
      res.end(JSON.stringify({ error: "invalid_token" }));
      return;
    }
    await node(req, res);
  });
  return {
    mcpUrl,
    seen,
    /** Forgets every token it issued: those held by clients are now expired. */
    expireTokens: () => (provider as unknown as { tokens: Map<string, unknown> }).tokens.clear(),
    async close() {
      await handler.close();
      for (const s of [asServer, rsServer]) {
        s.closeAllConnections();
        await new Promise((resolve) => s.close(resolve));
      }
    },
  };
}
