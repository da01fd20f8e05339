import { describe, expect, it } from "vitest";
import { checkOptions, checkServers } from "../../src/mcp/config.js";
import { checkUnique, mcpToolName, mcpToolRisk } from "../../src/mcp/names.js";
import { mapCallResult } from "../../src/mcp/results.js";

describe("MCP tool names", () => {
  it("follow mcp__<server>__<tool>, with characters providers refuse made _ and the name cut to 64", () => {
    expect(mcpToolName("memory", "read_graph")).toBe("mcp__memory__read_graph");
    expect(mcpToolName("every", "get-sum")).toBe("mcp__every__get-sum");
    expect(mcpToolName("fs", "files.read/all ü")).toBe("mcp__fs__files_read_all__");
    const long = mcpToolName("server", "x".repeat(100));
    expect(long).toHaveLength(64);
    expect(long).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });

  it("refuse two tools that would be offered under one name, naming both", () => {
    expect(() => checkUnique([{ name: "mcp__a__t_1", origin: '"t.1" of server "a"' }, { name: "mcp__a__t_1", origin: '"t/1" of server "a"' }])).toThrow(
      /"t\.1" of server "a" and "t\/1" of server "a" would both be offered as "mcp__a__t_1"/,
    );
    expect(() => checkUnique([{ name: "mcp__a__x", origin: "x" }], new Map([["mcp__a__x", "a tool of server b"]]))).toThrow(/rename one of the servers/);
    expect(() => checkUnique([{ name: "mcp__a__x", origin: "x" }, { name: "mcp__a__y", origin: "y" }])).not.toThrow();
  });
});

describe("MCP tool risk", () => {
  it("comes from the annotations: readOnlyHint read, destructiveHint false write, else exec", () => {
    expect(mcpToolRisk("t", { readOnlyHint: true })).toBe("read");
    expect(mcpToolRisk("t", { readOnlyHint: true, destructiveHint: true })).toBe("read");
    expect(mcpToolRisk("t", { destructiveHint: false })).toBe("write");
    expect(mcpToolRisk("t", { readOnlyHint: false, destructiveHint: true })).toBe("exec");
    expect(mcpToolRisk("t", {})).toBe("exec");
    expect(mcpToolRisk("t", undefined)).toBe("exec");
  });

  it("is overridden by the longest matching pattern; other characters of a pattern are literal", () => {
    const risk = { "mcp__memory__*": "read", "mcp__memory__delete_*": "exec", "mcp__a.b__*": "read" } as const;
    expect(mcpToolRisk("mcp__memory__create_entities", undefined, risk)).toBe("read");
    expect(mcpToolRisk("mcp__memory__delete_entities", { readOnlyHint: true }, risk)).toBe("exec");
    expect(mcpToolRisk("mcp__other__x", { readOnlyHint: true }, risk)).toBe("read");
    expect(mcpToolRisk("mcp__aXb__x", undefined, risk)).toBe("exec");
  });
});

describe("MCP results", () => {
  it("join text parts, note images, audio and resources, and keep isError an error", () => {
    expect(mapCallResult({ content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] })).toBe("a\n\nb");
    expect(mapCallResult({ content: [{ type: "image", mimeType: "image/png", data: "AAAA" }] })).toBe("[image image/png, 3 bytes, not shown]");
    expect(mapCallResult({ content: [{ type: "audio", mimeType: "audio/wav", data: "AA==" }] })).toBe("[audio audio/wav, 1 bytes, not shown]");
    expect(mapCallResult({ content: [{ type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain", text: "hello" } }] })).toBe(
      "[resource file:///a.txt (text/plain)]\nhello",
    );
    expect(mapCallResult({ content: [{ type: "resource_link", uri: "demo://x", name: "X" }] })).toBe('[resource link demo://x "X"]');
    expect(mapCallResult({ content: [{ type: "text", text: "no such file" }], isError: true })).toEqual({ content: "no such file", isError: true });
    expect(mapCallResult({ content: [], isError: true })).toMatchObject({ isError: true });
    expect(mapCallResult({ content: [], structuredContent: { n: 1 } })).toEqual({ content: '{"n":1}', details: { structuredContent: { n: 1 } } });
    expect(mapCallResult({ content: [{ type: "text", text: "t" }], structuredContent: { n: 1 }, isError: true })).toEqual({ content: "t", isError: true, details: { structuredContent: { n: 1 } } });
    expect(mapCallResult({ content: [{ type: "text", text: "t" }], structuredContent: [1] })).toBe("t");
    expect(mapCallResult({ content: [] })).toBe("(no output)");
    expect(mapCallResult({ toolResult: { old: true } })).toBe('{"old":true}');
  });
});

describe("MCP configuration", () => {
  const bad: Array<[unknown, RegExp]> = [
    [null, /servers must be an object/],
    [[], /servers must be an object/],
    [{ "bad name": { command: "x" } }, /"bad name".*letters, digits/],
    [{ a: "node" }, /"a": must be an object/],
    [{ a: {} }, /exactly one of "command".*or "url"/],
    [{ a: { command: "x", url: "http://h" } }, /exactly one of/],
    [{ a: { command: "" } }, /"command" must be a non-empty string/],
    [{ a: { command: "x", args: "--flag" } }, /"args" must be an array of strings/],
    [{ a: { command: "x", env: { A: 1 } } }, /"env" must be an object of string values/],
    [{ a: { url: "not a url" } }, /"url" must be an absolute http\(s\) URL/],
    [{ a: { url: "file:///etc/passwd" } }, /must use http or https/],
    [{ a: { url: "http://127.0.0.1/mcp", headers: ["x"] } }, /"headers" must be an object/],
    [{ a: { command: "x", timeoutMs: 0 } }, /"timeoutMs" must be a positive number/],
  ];
  it.each(bad)("refuses %j naming what is wrong", (servers, message) => {
    expect(() => checkServers(servers)).toThrow(message);
  });

  it("refuses bad options naming the option", () => {
    expect(() => checkOptions({ risk: { "mcp__*": "dangerous" } })).toThrow(/risk\["mcp__\*"\] must be "read", "write" or "exec"/);
    expect(() => checkOptions({ maxRestarts: -1 })).toThrow(/maxRestarts/);
    expect(() => checkOptions({ timeoutMs: "5s" })).toThrow(/timeoutMs/);
    expect(() => checkOptions({ onProblem: 1 })).toThrow(/onProblem/);
    expect(() => checkOptions({ risk: { "mcp__*": "read" }, maxRestarts: 0 })).not.toThrow();
  });
});
