import { spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mcpTools } from "../../src/mcp/index.js";
import { CLI, cliEnv } from "../cli/helpers/cli-process.js";
import { makeTempDir, removeDir } from "../tools/workspace.js";
import { startOAuthServers } from "./oauth-servers.js";
import { toolContext } from "./servers.js";

// OAuth for HTTP MCP servers: the SDK v2 client's authorization-code flow (PKCE, dynamic registration) against a
// local authorization server, driven by `statecraft mcp login`, with the tokens in the user's statecraft folder.

let root: string;
let home: string | undefined;
const cleanups: Array<() => Promise<void>> = [];
beforeEach(() => {
  root = makeTempDir("statecraft-mcp-oauth-");
  home = process.env.STATECRAFT_HOME;
  process.env.STATECRAFT_HOME = join(root, "statecraft-home");
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  if (home === undefined) delete process.env.STATECRAFT_HOME;
  else process.env.STATECRAFT_HOME = home;
  removeDir(root);
});

/** `statecraft mcp login <server>`, with the person's browser played by fetch() following the redirects. */
function login(server: string, config: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, "mcp", "login", server, "--mcp-config", config], { env: cliEnv({ STATECRAFT_HOME: process.env.STATECRAFT_HOME }), stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  let browsed = false;
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => {
    stderr += c.toString();
    const url = /^\s+(http\S+)$/m.exec(stderr)?.[1];
    if (url && !browsed) {
      browsed = true;
      void fetch(url).then((r) => r.text());
    }
  });
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, stdout, stderr })));
}

describe("an HTTP MCP server behind OAuth", () => {
  it("without a token fails naming the server and the login command; after statecraft mcp login its tools run; an expired token says so", async () => {
    const servers = await startOAuthServers();
    cleanups.push(() => servers.close());
    const config = join(root, "mcp.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { guarded: { url: servers.mcpUrl } } }));

    await expect(mcpTools({ guarded: { url: servers.mcpUrl } }, { connectTimeoutMs: 10_000 })).rejects.toThrow(
      /MCP server "guarded" \(http:\/\/127\.0\.0\.1:\d+\/mcp\) needs you to log in: no OAuth token is kept for it\. Run: statecraft mcp login guarded/,
    );

    const result = await login("guarded", config);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^logged in to MCP server "guarded" \(http:\/\/127\.0\.0\.1:\d+\/mcp\); its tokens are kept in .*mcp-oauth/);
    const folder = join(process.env.STATECRAFT_HOME!, "mcp-oauth");
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    const [file] = readdirSync(folder);
    expect(statSync(join(folder, file)).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(join(folder, file), "utf8"));
    expect(stored).toMatchObject({ serverUrl: servers.mcpUrl, client: { client_id: expect.any(String) }, tokens: { access_token: expect.any(String), token_type: expect.stringMatching(/bearer/i) } });

    const handle = await mcpTools({ guarded: { url: servers.mcpUrl } });
    try {
      expect(await handle.tools[0].execute({}, toolContext())).toBe(`hello ${stored.client.client_id}`);
    } finally {
      await handle.close();
    }

    servers.expireTokens();
    await expect(mcpTools({ guarded: { url: servers.mcpUrl } }, { connectTimeoutMs: 10_000 })).rejects.toThrow(
      /MCP server "guarded" .* needs you to log in: its OAuth token expired and could not be refreshed\. Run: statecraft mcp login guarded/,
    );
  }, 60_000);

  it("a static Authorization header from the environment is sent as it is, and a variable that is not set is named", async () => {
    const servers = await startOAuthServers();
    cleanups.push(() => servers.close());
    process.env.T33_TEST_TOKEN = "not-a-token-of-the-server";
    try {
      // A static token skips OAuth: the server's refusal is the error, not a login request.
      await expect(mcpTools({ s: { url: servers.mcpUrl, headers: { Authorization: "Bearer ${T33_TEST_TOKEN}" } } }, { connectTimeoutMs: 10_000 })).rejects.toThrow(/MCP server "s" did not start/);
      expect(servers.seen).toContain("refused");
    } finally {
      delete process.env.T33_TEST_TOKEN;
    }
    await expect(mcpTools({ s: { url: servers.mcpUrl, headers: { Authorization: "Bearer ${T33_UNSET_VARIABLE}" } } })).rejects.toThrow(
      'MCP server "s": header "Authorization" uses ${T33_UNSET_VARIABLE}, which is not set in the environment',
    );
  }, 60_000);
});
