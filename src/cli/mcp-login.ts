import { spawn } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { isStdio } from "../mcp/config.js";
import { EXIT_CODES } from "./exit-codes.js";
import type { CliIO } from "./io.js";
import { selectMcpServers } from "./mcp-config.js";
import { UsageError } from "./usage-error.js";

/** How long the login waits for the browser to come back. */
const LOGIN_TIMEOUT_MS = 300_000;

/**
 * `statecraft mcp login <server>`: the OAuth authorization-code flow (PKCE, the client registered dynamically when the
 * server allows it) for an HTTP server of --mcp-config or the folder's .mcp.json. The browser comes back to a page on
 * 127.0.0.1; the tokens are kept in the user's statecraft folder (0600), where runs find and refresh them.
 */
export async function loginToServer(name: string, flags: { cwd?: string; mcpConfig?: string; port?: number }, io: CliIO): Promise<number> {
  const cwd = resolve(io.cwd, flags.cwd ?? ".");
  // Only the server's URL is read here, nothing is started: the folder's .mcp.json is read whether or not it is trusted.
  const { servers } = selectMcpServers(flags.mcpConfig, cwd, io.cwd, true);
  const config = servers[name];
  if (!config) throw new UsageError(`no MCP server "${name}" in ${flags.mcpConfig ?? `${cwd}/.mcp.json`}; known: ${Object.keys(servers).join(", ") || "none"}`);
  if (isStdio(config)) throw new UsageError(`MCP server "${name}" is a stdio server (a program statecraft starts): it needs no login`);
  const { StoredOAuthProvider, oauthFile } = await import("../mcp/oauth.js");
  const { auth } = await import("@modelcontextprotocol/client");

  const callback = await callbackServer(flags.port ?? 0);
  try {
    const provider = new StoredOAuthProvider(name, config.url, {
      redirectUrl: callback.url,
      open(url) {
        io.stderr.write(`Open this address to log in to MCP server "${name}":\n  ${url.href}\n`);
        if (io.stderr.isTTY === true) openBrowser(url.href);
      },
    });
    const first = await auth(provider, { serverUrl: config.url });
    if (first === "REDIRECT") {
      const back = await callback.next();
      if (back.get("error")) throw new UsageError(`MCP server "${name}" refused the login: ${back.get("error")}${back.get("error_description") ? ` (${back.get("error_description")})` : ""}`);
      if (!provider.checkState(back.get("state"))) throw new UsageError("the login came back with another state than it was sent with; start it again");
      const code = back.get("code");
      if (!code) throw new UsageError("the login came back without an authorization code; start it again");
      await auth(provider, { serverUrl: config.url, authorizationCode: code, ...(back.get("iss") ? { iss: back.get("iss")! } : {}) });
    }
    io.stdout.write(`logged in to MCP server "${name}" (${config.url}); its tokens are kept in ${oauthFile(config.url)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    io.stderr.write(`statecraft: the login to MCP server "${name}" (${config.url}) failed: ${(error as Error).message}\n`);
    return EXIT_CODES.usage;
  } finally {
    await callback.close();
  }
}

/** A one-page server on 127.0.0.1 the browser is sent back to; `next()` resolves with the query of its first visit. */
async function callbackServer(port: number) {
  let deliver: (params: URLSearchParams) => void = () => undefined;
  const arrived = new Promise<URLSearchParams>((resolve) => (deliver = resolve));
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/callback") return void res.writeHead(404).end();
    res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8" }).end("statecraft: logged in. You can close this page.\n");
    deliver(url.searchParams);
  });
  await new Promise<void>((done, fail) => {
    server.once("error", fail);
    server.listen(port, "127.0.0.1", () => done());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}/callback`,
    next: () =>
      Promise.race([
        arrived,
        new Promise<never>((_, fail) => setTimeout(() => fail(new UsageError(`no answer from the browser in ${LOGIN_TIMEOUT_MS / 1000} s; start the login again`)), LOGIN_TIMEOUT_MS).unref()),
      ]),
    close: () => new Promise<void>((done) => {
      server.closeAllConnections();
      server.close(() => done());
    }),
  };
}

function openBrowser(url: string): void {
  const command = process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
  try {
    spawn(command, [url], { stdio: "ignore", detached: true }).on("error", () => undefined).unref();
  } catch {
    // The address was printed: the person opens it by hand.
  }
}
