import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { serverEntry } from "./servers.js";

const root = join(import.meta.dirname, "..", "..");

/** Runs a module with a resolve hook that prints every MCP SDK file the program loads. */
function sdkFilesLoaded(code: string): string[] {
  const hook = `
    import { register } from "node:module";
    register("data:text/javascript," + encodeURIComponent(\`
      export async function resolve(specifier, context, next) {
        const resolved = await next(specifier, context);
        // The SDK of either line: @modelcontextprotocol/client (and core) since v2, @modelcontextprotocol/sdk before.
        if (resolved.url.includes("@modelcontextprotocol/")) console.log("SDK " + resolved.url);
        return resolved;
      }\`));`;
  const out = execFileSync(process.execPath, ["--import", `data:text/javascript,${encodeURIComponent(hook)}`, "--input-type=module", "-e", code], {
    cwd: root,
    encoding: "utf8",
    timeout: 60_000,
  });
  return out.split("\n").filter((line) => line.startsWith("SDK "));
}

describe("importing statecraft", () => {
  it("does not load the MCP SDK; mcpTools() loads it when called", () => {
    expect(sdkFilesLoaded(`await import(${JSON.stringify(join(root, "dist", "index.js"))});`)).toEqual([]);
    const used = sdkFilesLoaded(`
      const { mcpTools } = await import(${JSON.stringify(join(root, "dist", "index.js"))});
      const mcp = await mcpTools({ m: { command: process.execPath, args: [${JSON.stringify(serverEntry("server-memory"))}] } });
      await mcp.close();`);
    expect(used.length).toBeGreaterThan(0);
  }, 60_000);
});
