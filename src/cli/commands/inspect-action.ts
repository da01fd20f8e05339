import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { startInspector } from "../../inspect/server.js";
import type { CliContext } from "../context.js";
import { UsageError } from "../usage-error.js";
import { databaseTraceFile } from "../database-trace.js";

/** Serves the inspector until SIGINT or SIGTERM, then closes it and exits 0. */
export async function inspectAction(
  traceFile: string | undefined,
  flags: { port?: number; maxBytes?: number; allowOrigin?: string[]; open?: boolean; database?: string },
  context: CliContext,
): Promise<number> {
  const { io } = context;
  let file: string | undefined;
  if (traceFile !== undefined && flags.database !== undefined) throw new UsageError("give a trace file or --database, not both");
  // The workers' trace lines in PostgreSQL (statecraft/dbos): a private copy, refreshed every 2 s while it serves.
  const database = traceFile === undefined ? (flags.database ?? io.env.STATECRAFT_DATABASE_URL) : undefined;
  const fromDatabase = database !== undefined ? await databaseTraceFile(database) : undefined;
  const refreshing = fromDatabase ? setInterval(() => void fromDatabase.refresh().catch((e: Error) => io.stderr.write(`statecraft: the trace could not be read from the database: ${e.message}\n`)), 2000) : undefined;
  refreshing?.unref();
  if (fromDatabase) file = fromDatabase.file;
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
  }).catch((error: Error) => {
    throw new UsageError(error.message);
  });
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
  await inspector.close();
  if (refreshing) clearInterval(refreshing);
  await fromDatabase?.remove();
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
