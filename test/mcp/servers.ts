import { createRequire } from "node:module";
import path from "node:path";
import type { McpStdioServer } from "../../src/mcp/config.js";

const require = createRequire(import.meta.url);

/** The installed entry file of a reference server package (never `npx -y`: no registry at run time). */
export function serverEntry(pkg: "server-memory" | "server-everything" | "server-filesystem"): string {
  return path.join(path.dirname(require.resolve(`@modelcontextprotocol/${pkg}/package.json`)), "dist", "index.js");
}

/** A reference server started as a real stdio child process of this Node. */
export function stdioServer(pkg: Parameters<typeof serverEntry>[0], args: string[] = [], env?: Record<string, string>): McpStdioServer {
  return { command: process.execPath, args: [serverEntry(pkg), ...args], ...(env ? { env } : {}) };
}

/** A context for calling a tool's execute directly. */
export function toolContext(signal = new AbortController().signal, cwd = process.cwd()) {
  return { signal, cwd, sessionId: "s", toolCallId: "c" };
}
