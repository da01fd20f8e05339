import { writeSync } from "node:fs";
import { pino, type Logger } from "pino";
import type { LogLevel } from "./log-levels.js";

/**
 * Operational logs on stderr (fd 2), written synchronously so none is lost when the process exits and they never
 * interleave with the output on stdout. `json`: pino JSON lines (what `--log-level` / `STATECRAFT_LOG_LEVEL` ask
 * for); otherwise each line is a sentence, `statecraft: <message>[: <error>]`, for a person reading the output.
 */
export function createLogger(level: LogLevel, destination: number | NodeJS.WritableStream = 2, format: "json" | "text" = "json"): Logger {
  const stream = format === "text" ? textLines(destination) : typeof destination === "number" ? pino.destination({ fd: destination, sync: true }) : destination;
  return pino({ name: "statecraft", level, base: { name: "statecraft" } }, stream);
}

/** A pino destination that writes each JSON record as one line of text. */
function textLines(destination: number | NodeJS.WritableStream): { write(record: string): void } {
  const out = (text: string) => (typeof destination === "number" ? writeSync(destination, text) : destination.write(text));
  return {
    write(record) {
      let line = record.trimEnd();
      try {
        const { msg, err } = JSON.parse(line) as { msg?: unknown; err?: unknown };
        const text = typeof msg === "string" ? msg : "";
        const detail = typeof err === "string" ? err : err && typeof err === "object" && typeof (err as { message?: unknown }).message === "string" ? (err as { message: string }).message : undefined;
        line = `${text.startsWith("statecraft:") ? text : `statecraft: ${text}`}${detail ? `: ${detail}` : ""}`;
      } catch {
        // not JSON: written as it came
      }
      out(`${line}\n`);
    },
  };
}

export type { Logger };

export { DEFAULT_LOG_LEVEL, LOG_LEVELS, parseLogLevel, resolveLogLevel, type LogLevel } from "./log-levels.js";
