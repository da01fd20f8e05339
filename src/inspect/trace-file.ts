import { createReadStream } from "node:fs";
import type http from "node:http";
import { Transform, type TransformCallback } from "node:stream";
import { redactLine, secretValues } from "../record/redact.js";

/**
 * Sends a trace file to the page redacted line by line, as the trace writer redacts: a trace written by an older
 * version, by another tool, or edited by hand may hold secrets the page must not show. Streamed (a trace may be large
 * and still growing), without a length, since redaction changes it.
 */
export function sendTrace(req: http.IncomingMessage, res: http.ServerResponse, file: string, headers: Record<string, string>): void {
  const stream = createReadStream(file, { encoding: "utf8" });
  stream.once("error", (error: NodeJS.ErrnoException) => {
    if (res.headersSent) return void res.destroy();
    res.writeHead(500, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" });
    res.end(`the trace file could not be read: ${error.code ?? error.message}\n`);
  });
  stream.once("open", () => {
    res.writeHead(200, { ...headers, "Content-Type": "application/x-ndjson; charset=utf-8" });
    if (req.method === "HEAD") {
      stream.destroy();
      return void res.end();
    }
    stream.pipe(redactingLines(secretValues())).pipe(res);
  });
}

/** Text in, the same text out with each line redacted; a line is held back until its end (or the end of the text). */
function redactingLines(secrets: readonly string[]): Transform {
  let rest = "";
  return new Transform({
    decodeStrings: false,
    transform(chunk: string, _encoding: BufferEncoding, done: TransformCallback) {
      const text = rest + chunk;
      const end = text.lastIndexOf("\n");
      if (end < 0) {
        rest = text;
        return done();
      }
      rest = text.slice(end + 1);
      done(null, text.slice(0, end + 1).split("\n").map((line) => redactLine(line, secrets)).join("\n"));
    },
    flush(done: TransformCallback) {
      done(null, rest === "" ? "" : redactLine(rest, secrets));
    },
  });
}
