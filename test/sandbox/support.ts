import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { scriptedModel } from "../../src/models/scripted.js";
import { query } from "../../src/query.js";
import type { QueryOptions } from "../../src/options.js";
import { builtinTools } from "../../src/tools/builtin/index.js";
import { collect } from "../support/engine.js";

export const tempDir = (prefix: string) => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));

/**
 * A folder outside /tmp (in the repository's ignored test-artifacts/): the sandbox gives a process a /tmp of its own,
 * so a victim's home or a folder "outside the workspace" under /tmp would be out of reach for that reason alone.
 */
export function folderOutsideTmp(prefix: string): string {
  const base = path.join(import.meta.dirname, "..", "..", "test-artifacts");
  fs.mkdirSync(base, { recursive: true });
  return fs.realpathSync(fs.mkdtempSync(path.join(base, prefix)));
}

export interface BashResult {
  command: string;
  content: string;
  isError: boolean;
  details?: Record<string, unknown>;
}

/**
 * One run whose model calls `bash` once per command, allowed outright (`bypassPermissions` unless `options` says
 * otherwise): what an agent in an untrusted repository gets to run. Returns each call's result in order.
 */
export async function runCommands(cwd: string, commands: readonly string[], options: Partial<QueryOptions> = {}): Promise<BashResult[]> {
  const model = scriptedModel([{ toolCalls: commands.map((command) => ({ name: "bash", input: { command } })) }, { text: "done" }]);
  const { events } = await collect(
    query("go", {
      model,
      tools: builtinTools(),
      cwd,
      maxToolCalls: commands.length,
      permissions: { mode: "bypassPermissions" },
      ...options,
    }),
  );
  const results: BashResult[] = [];
  for (const event of events) {
    if (event.type !== "tool_result") continue;
    const input = event.call.input as { command: string };
    results.push({ command: input.command, content: event.result.content, isError: event.result.isError === true, ...(event.result.details ? { details: event.result.details } : {}) });
  }
  return results;
}

/** A TCP listener on 127.0.0.1 that counts the connections it accepts (and answers HTTP with 200 "reached"). */
export async function countingListener(): Promise<{ port: number; count: () => number; close: () => Promise<void> }> {
  let accepted = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    socket.once("data", () => socket.end("HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\nreached\n"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    count: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Host processes whose name (argv[0], as `exec -a` sets it) starts with `marker` (read from /proc). */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${name}/cmdline`, "utf8");
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      if (cmdline.startsWith(marker) && state !== "Z" && Number(name) !== process.pid) found.push(Number(name));
    } catch {
      // ended meanwhile
    }
  }
  return found;
}

/** Waits until no host process holds `marker`; the processes still there after a generous bound (not a timing claim). */
export async function survivorsAfter(marker: string, boundMs = 10_000): Promise<number[]> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const left = processesWith(marker);
    if (left.length === 0 || Date.now() >= deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
