import { describe, expect, it } from "vitest";
import { checkServers, expandHeaders } from "../../src/mcp/config.js";
import { connectAttempts } from "../../src/mcp/negotiation.js";

describe("how a server is connected", () => {
  it("HTTP auto: the SDK's own negotiation; stdio auto: initialize, then 2026-07-28 on refusal; a pin is that one way only", () => {
    expect(connectAttempts({ url: "http://127.0.0.1/mcp" })).toEqual([{ mode: "auto" }]);
    expect(connectAttempts({ command: "node" })).toEqual([{ mode: "legacy" }, { mode: { pin: "2026-07-28" } }]);
    for (const config of [{ url: "http://127.0.0.1/mcp" }, { command: "node" }]) {
      expect(connectAttempts({ ...config, protocol: "2026-07-28" })).toEqual([{ mode: { pin: "2026-07-28" } }]);
      expect(connectAttempts({ ...config, protocol: "legacy" })).toEqual([{ mode: "legacy" }]);
    }
  });

  it("refuses a protocol or oauth setting it does not know, naming the server", () => {
    expect(() => checkServers({ s: { command: "x", protocol: "2025-11-25" } })).toThrow('MCP server "s": "protocol" must be "auto", "2026-07-28" or "legacy", got "2025-11-25"');
    expect(() => checkServers({ s: { url: "http://127.0.0.1/mcp", oauth: "yes" } })).toThrow('MCP server "s": "oauth" must be true or false');
  });
});

describe("headers from the environment", () => {
  it("replace ${NAME} in header values, leave other servers and text as they are, and name a variable that is not set", () => {
    const servers = { a: { url: "http://127.0.0.1/a", headers: { Authorization: "Bearer ${TOKEN}", "X-Both": "${ONE}-${TWO}", Plain: "$TOKEN {TOKEN}" } }, b: { command: "node" } };
    expect(expandHeaders(servers, { TOKEN: "t0k", ONE: "1", TWO: "2" })).toEqual({
      a: { url: "http://127.0.0.1/a", headers: { Authorization: "Bearer t0k", "X-Both": "1-2", Plain: "$TOKEN {TOKEN}" } },
      b: { command: "node" },
    });
    expect(() => expandHeaders(servers, { TOKEN: "t0k", ONE: "1" })).toThrow('MCP server "a": header "X-Both" uses ${TWO}, which is not set in the environment; set TWO or write the value');
    expect(() => expandHeaders(servers, { TOKEN: "", ONE: "1", TWO: "2" })).toThrow(/uses \$\{TOKEN\}/);
  });
});
