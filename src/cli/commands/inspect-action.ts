import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { startInspector } from "../../inspect/server.js";
import type { CliContext } from "../context.js";
import { UsageError } from "../usage-error.js";
import { followDatabaseTrace } from "../database-trace.js";

/** Serves the inspector until SIGINT or SIGTERM, then closes it and exits 0. */
export async function inspectAction(
  traceFile: string | undefined,
  flags: { port?: number; maxBytes?: number; allowOrigin?: string[]; open?: boolean; database?: string },
  context: CliContext,
): Promise<number> {
  const { io } = context;
  let file: string | undefined;
  if (traceFile !== undefined && flags.database !== undefined) throw new UsageError("give a trace file or --database, not both");
  // The workers' trace lines in PostgreSQL (statecraft/dbos), followed as they are written: each session a run on the
  // page, live until its done line; a copy of the lines so far is served at /trace.
  const database = traceFile === undefined ? (flags.database ?? io.env.STATECRAFT_DATABASE_URL) : undefined;
  let feed: ((lines: string[]) => void) | undefined;
  const early: string[][] = [];
  const following =
    database !== undefined
      ? await followDatabaseTrace(
          database,
          (lines) => (feed ? feed(lines) : early.push(lines)),
          (e) => io.stderr.write(`statecraft: the trace could not be read from the database (retrying): ${e.message}\n`),
        )
      : undefined;
  if (following) file = following.file;
  if (traceFile !== undefined) {
    file = resolve(traceFile);
    if (!existsSync(file) || !statSync(file).isFile()) {
      throw new UsageError(`no trace file at ${file}; give the path of a trace (by default runs write <folder>/.agent/trace.jsonl).`);
    }
  }
  const inspector = await startInspector({
    ...(flags.port !== undefined ? { port: flags.port } : {}),
    ...(flags.maxBytes !== undefined ? { maxBytes: flags.maxBytes } : {}),
    ...(flags.allowOrigin && flags.allowOrigin.length > 0 ? { allowOrigins: flags.allowOrigin } : {}),
    ...(file ? { traceFile: file } : {}),
  }).catch(async (error: Error) => {
    await following?.stop();
    throw new UsageError(error.message);
  });
  if (following) {
    for (const lines of early.splice(0)) inspector.addTraceLines(lines);
    feed = (lines) => inspector.addTraceLines(lines);
  }
  io.stdout.write(`inspector: ${inspector.url}\n`);
  if (flags.open) openInBrowser(inspector.url, io.stderr);
  await new Promise<void>((done) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      done();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  await following?.stop();
  await inspector.close();
  return 0;
}

/** The platform's opener; a failure to open is said, never fatal (the address is printed anyway). */
function openInBrowser(url: string, stderr: NodeJS.WritableStream): void {
  const opener = process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
  try {
    const child = spawn(opener, [url], { detached: true, stdio: "ignore" });
    child.on("error", () => stderr.write(`could not start ${opener}; open ${url} yourself\n`));
    child.unref();
  } catch {
    stderr.write(`could not start ${opener}; open ${url} yourself\n`);
  }
}
