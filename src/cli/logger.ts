import { pino, type Logger } from "pino";
import type { LogLevel } from "./log-levels.js";

/**
 * Operational logs: JSON lines on stderr (fd 2), written synchronously so none is lost when the process exits and
 * they never interleave with the output on stdout.
 */
export function createLogger(level: LogLevel, destination: number | NodeJS.WritableStream = 2): Logger {
  const stream = typeof destination === "number" ? pino.destination({ fd: destination, sync: true }) : destination;
  return pino({ name: "statecraft", level, base: { name: "statecraft" } }, stream);
}

export type { Logger };

export { DEFAULT_LOG_LEVEL, LOG_LEVELS, parseLogLevel, resolveLogLevel, type LogLevel } from "./log-levels.js";
