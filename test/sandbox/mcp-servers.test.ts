import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mcpTools, type McpToolsHandle } from "../../src/mcp/index.js";
import type { AnyTool, ToolOutput } from "../../src/tools/define-tool.js";
import { stdioServer, toolContext } from "../mcp/servers.js";
import { folderOutsideTmp, tempDir } from "./support.js";

// Stdio MCP servers are processes a run starts: real reference servers, started inside the sandbox with the scrubbed
// environment plus their own config env, attacked through their own tools.

let ws: string;
let outside: string;
let home: string;
const saved: Record<string, string | undefined> = {};
const SECRETS = { OPENAI_API_KEY: "sk-LEAK-mcp-4242", STATECRAFT_DATABASE_URL: "postgres://u:pw-LEAK-4242@127.0.0.1/db", AWS_ACCESS_KEY_ID: "AKIA-LEAK-4242", NPM_TOKEN: "npm-LEAK-4242" };

beforeAll(() => {
  ws = tempDir("statecraft-mcp-ws-");
  outside = folderOutsideTmp("mcp-outside-");
  home = folderOutsideTmp("mcp-home-");
  fs.mkdirSync(path.join(home, ".ssh"));
  fs.writeFileSync(path.join(home, ".ssh", "id_rsa"), "SSH-LEAK-4242\n");
  for (const [name, value] of Object.entries({ ...SECRETS, HOME: home })) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
});
afterAll(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  for (const dir of [ws, outside, home]) fs.rmSync(dir, { recursive: true, force: true });
});

const text = (output: ToolOutput) => (typeof output === "string" ? output : output.content);
async function call(handle: McpToolsHandle, name: string, input: Record<string, unknown>): Promise<string> {
  const tool = handle.tools.find((t) => t.name === name) as AnyTool | undefined;
  if (!tool) throw new Error(`no tool ${name} among ${handle.tools.map((t) => t.name).join(", ")}`);
  try {
    return text(await tool.execute(input, toolContext(new AbortController().signal, ws)));
  } catch (error) {
    return `thrown: ${(error as Error).message}`;
  }
}

describe("a stdio MCP server", () => {
  it("gets the scrubbed environment plus its own config env, sandboxed or not", async () => {
    for (const sandbox of ["auto", "off"] as const) {
      const handle = await mcpTools({ everything: stdioServer("server-everything", [], { SERVER_OWN_SETTING: "own-value", SERVER_API_KEY: "given-on-purpose" }) }, { sandbox, workspace: ws });
      try {
        const env = await call(handle, "mcp__everything__get-env", {});
        expect(env, `sandbox ${sandbox}`).toContain("own-value");
        // What its config gives it is the server's own, secret-looking or not.
        expect(env).toContain("given-on-purpose");
        expect(env).not.toMatch(/LEAK/);
        expect(env).not.toContain("STATECRAFT_DATABASE_URL");
      } finally {
        await handle.close();
      }
    }
  });

  it("sandboxed, cannot read ~/.ssh or write outside the workspace through its own tools", async () => {
    const handle = await mcpTools({ fs: stdioServer("server-filesystem", [ws, outside, home]) }, { workspace: ws });
    try {
      const reads = [
        await call(handle, "mcp__fs__read_text_file", { path: path.join(home, ".ssh", "id_rsa") }),
        await call(handle, "mcp__fs__read_multiple_files", { paths: [path.join(home, ".ssh", "id_rsa")] }),
        await call(handle, "mcp__fs__search_files", { path: home, pattern: "id_rsa" }),
        await call(handle, "mcp__fs__list_directory", { path: path.join(home, ".ssh") }),
      ];
      for (const read of reads) expect(read).not.toContain("SSH-LEAK");
      // Neither a search nor a listing finds the key: the folder is empty where the server looks.
      expect(reads[2]).not.toContain("id_rsa");
      expect(reads[3]).not.toContain("[FILE] id_rsa");
      const writes = [
        await call(handle, "mcp__fs__write_file", { path: path.join(outside, "a.txt"), content: "pwned" }),
        await call(handle, "mcp__fs__create_directory", { path: path.join(outside, "b") }),
        await call(handle, "mcp__fs__write_file", { path: path.join(home, ".ssh", "authorized_keys"), content: "pwned" }),
      ];
      expect(writes.every((w) => /error|denied|read-only|EROFS|ENOENT/i.test(w))).toBe(true);
      expect(fs.readdirSync(outside)).toEqual([]);
      expect(fs.readdirSync(path.join(home, ".ssh"))).toEqual(["id_rsa"]);
      // Its workspace stays writable.
      await call(handle, "mcp__fs__write_file", { path: path.join(ws, "ok.txt"), content: "fine" });
      expect(fs.readFileSync(path.join(ws, "ok.txt"), "utf8")).toBe("fine");
    } finally {
      await handle.close();
    }
  });

  it('with "sandbox": false in its config runs outside the sandbox (the opt-out the run header shows)', async () => {
    const handle = await mcpTools({ fs: { ...stdioServer("server-filesystem", [ws, home]), sandbox: false } }, { workspace: ws });
    try {
      expect(await call(handle, "mcp__fs__read_text_file", { path: path.join(home, ".ssh", "id_rsa") })).toContain("SSH-LEAK-4242");
    } finally {
      await handle.close();
    }
  });

  it('refuses a "sandbox" setting other than false, naming the server', async () => {
    await expect(mcpTools({ fs: { ...stdioServer("server-filesystem", [ws]), sandbox: true as unknown as false } })).rejects.toThrow(/MCP server "fs": "sandbox" can only be false/);
  });
});
