import { createHash, randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import type { OAuthClientMetadata, OAuthClientProvider, StoredOAuthClientInformation, StoredOAuthTokens } from "@modelcontextprotocol/client";
import { AgentError } from "../errors/agent-error.js";
import { statecraftHome } from "../util/statecraft-home.js";

/** What is kept of one server's OAuth: its registered client and its tokens, in a file of its own (0600). */
interface Stored {
  serverUrl: string;
  redirectUrl?: string;
  client?: StoredOAuthClientInformation;
  tokens?: StoredOAuthTokens;
  savedAt?: string;
}

/** The folder of the tokens: `<statecraft folder>/mcp-oauth`, which no agent may write (a protected path). */
export function oauthFolder(env: NodeJS.ProcessEnv = process.env): string {
  return join(statecraftHome(env), "mcp-oauth");
}

/** The file of a server's tokens, named by a digest of its URL (the same server under two names shares them). */
export function oauthFile(serverUrl: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(oauthFolder(env), `${createHash("sha256").update(new URL(serverUrl).href).digest("hex").slice(0, 32)}.json`);
}

/** The interactive side of `statecraft mcp login`: where the browser comes back, and how it is sent off. */
export interface LoginFlow {
  redirectUrl: string;
  open(authorizationUrl: URL): void | Promise<void>;
}

/**
 * The SDK's OAuth client flow with tokens kept in the user's statecraft folder. In a run (no login flow) a missing
 * or expired token that cannot be refreshed is an error naming the server and the login command to run; under
 * `statecraft mcp login` the browser is sent to the server's authorization page.
 */
export class StoredOAuthProvider implements OAuthClientProvider {
  private verifier: string | undefined;
  private readonly expectedState = randomBytes(16).toString("base64url");

  constructor(
    readonly server: string,
    readonly serverUrl: string,
    private readonly login?: LoginFlow,
  ) {}

  get redirectUrl(): string {
    return this.login?.redirectUrl ?? this.read().redirectUrl ?? "http://127.0.0.1/callback";
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "statecraft",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  state(): string {
    return this.expectedState;
  }

  clientInformation(): StoredOAuthClientInformation | undefined {
    const stored = this.read();
    // A client registered for another redirect (an earlier login's port) is registered again.
    if (this.login && stored.redirectUrl !== this.login.redirectUrl) return undefined;
    return stored.client;
  }

  saveClientInformation(client: StoredOAuthClientInformation): void {
    this.write({ client, ...(this.login ? { redirectUrl: this.login.redirectUrl } : {}) });
  }

  tokens(): StoredOAuthTokens | undefined {
    return this.read().tokens;
  }

  saveTokens(tokens: StoredOAuthTokens): void {
    this.write({ tokens, savedAt: new Date().toISOString() });
  }

  redirectToAuthorization(authorizationUrl: URL): void | Promise<void> {
    if (!this.login) {
      const had = this.read().tokens !== undefined;
      throw new AgentError(
        "MCP_SERVER_FAILED",
        `MCP server "${this.server}" (${this.serverUrl}) needs you to log in: ${had ? "its OAuth token expired and could not be refreshed" : "no OAuth token is kept for it"}. ` +
          `Run: statecraft mcp login ${this.server}`,
      );
    }
    return this.login.open(authorizationUrl);
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    if (this.verifier === undefined) throw new Error("no PKCE code verifier: the login was not started by this process");
    return this.verifier;
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    if (scope === "verifier" || scope === "discovery") return;
    const stored = this.read();
    if (scope === "all") rmSync(oauthFile(this.serverUrl), { force: true });
    else if (scope === "client") this.replace({ ...stored, client: undefined });
    else this.replace({ ...stored, tokens: undefined });
  }

  /** Whether a state parameter coming back to the redirect is the one this login sent. */
  checkState(state: string | null): boolean {
    return state === this.expectedState;
  }

  private read(): Stored {
    try {
      return JSON.parse(readFileSync(oauthFile(this.serverUrl), "utf8")) as Stored;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return { serverUrl: this.serverUrl };
      throw new AgentError("MCP_SERVER_FAILED", `the OAuth tokens of MCP server "${this.server}" (${oauthFile(this.serverUrl)}) can't be read: ${(error as Error).message}; run statecraft mcp login ${this.server}`);
    }
  }

  private write(change: Partial<Stored>): void {
    this.replace({ ...this.read(), ...change, serverUrl: this.serverUrl });
  }

  /** Written whole to a file of its own (0600) and renamed into place, in a folder only the user can enter (0700). */
  private replace(stored: Stored): void {
    const folder = oauthFolder();
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    chmodSync(folder, 0o700);
    const file = oauthFile(this.serverUrl);
    const temp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
    writeFileSync(temp, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600, flag: "wx" });
    renameSync(temp, file);
  }
}
