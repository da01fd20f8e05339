import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { refuse } from "../../src/mcp-server/http.js";
import { checkHttpOptions, checkServerOptions } from "../../src/mcp-server/options.js";
import { scriptedModel } from "../../src/models/scripted.js";

const model = scriptedModel([]);

describe("mcpServer() options", () => {
  it("refuses what it cannot use, naming the option and the fix", () => {
    expect(() => checkServerOptions(undefined)).toThrow(/options must be an object \{ agent/);
    expect(() => checkServerOptions({})).toThrow("mcpServer options: agent must be query()'s options for each run, at least { model }");
    expect(() => checkServerOptions({ agent: { model, sessionId: "s" } })).toThrow("agent.sessionId is set by the server for each call; leave it out");
    expect(() => checkServerOptions({ agent: { model, signal: new AbortController().signal } })).toThrow(/agent\.signal is set by the server/);
    for (const toolName of ["", "has space", "x".repeat(65), 3]) expect(() => checkServerOptions({ agent: { model }, toolName })).toThrow(/toolName must be 1 to 64/);
    expect(() => checkServerOptions({ agent: { model }, toolDescription: " " })).toThrow(/toolDescription must be a non-empty string/);
    expect(() => checkServerOptions({ agent: { model }, serverInfo: { name: "x" } })).toThrow(/serverInfo must be \{ name, version \}/);
    expect(() => checkServerOptions({ agent: { model }, askTimeoutMs: 0 })).toThrow(/askTimeoutMs must be a positive number/);
    expect(() => checkServerOptions({ agent: { model }, toolName: "ask_my.agent-2" })).not.toThrow();
  });

  it("listen() refuses a bad port, a short or spaced token, a bad body limit", () => {
    expect(() => checkHttpOptions({ port: 70_000 })).toThrow(/port must be a whole number from 0 to 65535/);
    expect(() => checkHttpOptions({ token: "short" })).toThrow(/at least 16 printable characters/);
    expect(() => checkHttpOptions({ token: "sixteen chars with spaces" })).toThrow(/without spaces/);
    expect(() => checkHttpOptions({ maxBodyBytes: 1.5 })).toThrow(/maxBodyBytes must be a positive whole number/);
    expect(() => checkHttpOptions({ port: 0, token: "a".repeat(16), maxBodyBytes: 1 })).not.toThrow();
  });
});

describe("the HTTP guard", () => {
  const token = "t".repeat(32);
  const request = (headers: Record<string, string>, url = "/mcp") => ({ headers: { host: "127.0.0.1:8000", authorization: `Bearer ${token}`, ...headers }, url }) as unknown as IncomingMessage;
  const check = (headers: Record<string, string>, url?: string) => refuse(request(headers, url), 8000, token, new Set(["http://localhost:5173"]), 100)?.status;

  it("lets the server's own names, no Origin, its own Origin and allowed origins through", () => {
    expect(check({})).toBeUndefined();
    expect(check({ host: "localhost:8000" })).toBeUndefined();
    expect(check({ origin: "http://127.0.0.1:8000" })).toBeUndefined();
    expect(check({ origin: "http://localhost:5173" })).toBeUndefined();
  });

  it("refuses other hosts, ports and origins (403), other paths (404), tokens (401) and big bodies (413)", () => {
    for (const host of ["127.0.0.1:8001", "evil.example:8000", "127.0.0.1", "localhost.evil.example:8000", ""]) expect(check({ host }), host).toBe(403);
    for (const origin of ["http://127.0.0.1:8001", "https://127.0.0.1:8000", "http://localhost:5174", "null", "http://evil.example"]) expect(check({ origin }), origin).toBe(403);
    expect(check({}, "/other")).toBe(404);
    for (const authorization of ["", `bearer ${token}x`, `Bearer ${token} extra`, `Token ${token}`, "Bearer "]) expect(check({ authorization }), authorization).toBe(401);
    expect(check({ "content-length": "101" })).toBe(413);
    expect(check({ "content-length": "100" })).toBeUndefined();
  });
});
