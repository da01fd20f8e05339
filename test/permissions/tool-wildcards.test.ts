import { describe, expect, it } from "vitest";
import { createPermissionPolicy } from "../../src/permissions/policy.js";
import { parseRule } from "../../src/permissions/rules.js";
import { defineTool, type ToolRisk } from "../../src/tools/define-tool.js";

const tool = (name: string, risk: ToolRisk = "exec") =>
  defineTool<{ path?: string }>({
    name,
    description: "t",
    inputSchema: { type: "object" },
    risk,
    permissionSubject: (input) => input.path,
    permissionSubjectKind: "path",
    execute: () => "ok",
  });

describe("a * in a rule's tool name", () => {
  const policy = createPermissionPolicy({ allow: ["mcp__memory__*", "mcp__fs__write_*(src/**)"], deny: ["mcp__*__delete_*"] }, [], { cwd: process.cwd() });

  it("matches every tool of the prefix, case-insensitively, and nothing else", () => {
    expect(policy.evaluate(tool("mcp__memory__create_entities"), {})).toMatchObject({ kind: "allow", by: "rule", rule: "mcp__memory__*" });
    expect(policy.evaluate(tool("MCP__Memory__read_graph"), {})).toMatchObject({ kind: "allow", rule: "mcp__memory__*" });
    for (const other of ["mcp__memoryx_create", "mcp__other__create_entities", "xmcp__memory__a", "bash"]) {
      expect(policy.evaluate(tool(other), {}).kind, other).toBe("ask");
    }
  });

  it("works with a pattern and in deny rules, and deny still wins", () => {
    expect(policy.evaluate(tool("mcp__fs__write_file"), { path: "src/a.ts" })).toMatchObject({ kind: "allow", rule: "mcp__fs__write_*(src/**)" });
    expect(policy.evaluate(tool("mcp__fs__write_file"), { path: "lib/a.ts" }).kind).toBe("ask");
    expect(policy.evaluate(tool("mcp__memory__delete_entities"), {})).toMatchObject({ kind: "deny", rule: "mcp__*__delete_*" });
  });

  it("other regular-expression characters stay literal", () => {
    const strict = createPermissionPolicy({ allow: ["a-b*"] }, [], { cwd: process.cwd() });
    expect(strict.evaluate(tool("a-bc"), {}).kind).toBe("allow");
    expect(strict.evaluate(tool("aXbc"), {}).kind).toBe("ask");
  });

  it("a rule of stars alone is refused: every tool is a mode's business", () => {
    expect(() => parseRule("*", "permissions.allow[0]")).toThrow(/names no tool.*bypassPermissions/);
    expect(() => parseRule("**(src/**)", "permissions.allow[0]")).toThrow(/names no tool/);
  });
});
