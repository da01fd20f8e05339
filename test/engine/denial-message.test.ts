import { describe, expect, it } from "vitest";
import { whatWouldAllow } from "../../src/machine/actions/permissions.js";
import { scriptedModel } from "../../src/models/scripted.js";
import { query } from "../../src/query.js";
import { builtinTools } from "../../src/tools/builtin/index.js";
import { collect, removeDir, tempDir } from "../support/engine.js";

describe("a denied run says what would actually allow the call", () => {
  it("by who decided", () => {
    expect(whatWouldAllow({ by: "rule", rule: "bash(rm *)" })).toBe("Deny rules win over every allow rule and mode: remove or narrow bash(rm *) to allow it");
    expect(whatWouldAllow({ by: "rule", rule: "protected(**/.agent/**)" })).toMatch(/protected path: no rule or mode allows/);
    expect(whatWouldAllow({ by: "mode" })).toMatch(/Plan mode is read-only/);
    expect(whatWouldAllow({ by: "human" })).toBe("To let it run, answer allow when it is asked");
    expect(whatWouldAllow({ by: "default" })).toMatch(/allow rule or another permission mode, or answer through permissions.onAsk/);
  });

  const cases = [
    { name: "a deny rule", permissions: { deny: ["bash(rm *)"] }, expected: /remove or narrow bash\(rm \*\)/, not: /onAsk/ },
    { name: "plan mode", permissions: { mode: "plan" as const }, expected: /Plan mode is read-only/, not: /onAsk/ },
    { name: "a person's no", permissions: { onAsk: () => "deny" as const }, expected: /denied when asked/, not: /allow rule/ },
    { name: "no one to ask", permissions: {}, expected: /answer through permissions.onAsk/, not: /Deny rules win/ },
  ];
  it("for a person's no, says it once", async () => {
    const cwd = tempDir("statecraft-denial-");
    try {
      const model = scriptedModel([{ toolCalls: [{ name: "bash", input: { command: "rm -rf build" } }] }, { text: "unreached" }]);
      const { result } = await collect(query("go", { model, tools: builtinTools(), cwd, traceFile: false, permissions: { onAsk: () => "deny" } }));
      expect(result.error?.message).toBe("permission denied for bash: bash was denied when asked. To let it run, answer allow when it is asked");
    } finally {
      removeDir(cwd);
    }
  });

  for (const c of cases) {
    it(`for ${c.name}`, async () => {
      const cwd = tempDir("statecraft-denial-");
      try {
        const model = scriptedModel([{ toolCalls: [{ name: "bash", input: { command: "rm -rf build" } }] }, { text: "unreached" }]);
        const { result } = await collect(query("go", { model, tools: builtinTools(), cwd, traceFile: false, permissions: c.permissions }));
        expect(result.reason).toBe("permission_denied");
        expect(result.error?.message).toMatch(c.expected);
        expect(result.error?.message).not.toMatch(c.not);
      } finally {
        removeDir(cwd);
      }
    });
  }
});
