import { pino, type Logger } from "pino";
import { UsageError } from "./usage-error.js";

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const DEFAULT_LOG_LEVEL: LogLevel = "warn";

export function parseLogLevel(value: string, from: string): LogLevel {
  const level = value.trim().toLowerCase();
  if ((LOG_LEVELS as readonly string[]).includes(level)) return level as LogLevel;
  throw new UsageError(`${from}: log level ${JSON.stringify(value)} is not one of ${LOG_LEVELS.join(", ")}`);
}

/** The level from `--log-level`, else `STATECRAFT_LOG_LEVEL`, else `warn`. */
export function resolveLogLevel(flag: string | undefined, env: NodeJS.ProcessEnv): LogLevel {
  if (flag !== undefined) return parseLogLevel(flag, "--log-level");
  const fromEnv = env.STATECRAFT_LOG_LEVEL;
  if (fromEnv !== undefined && fromEnv !== "") return parseLogLevel(fromEnv, "STATECRAFT_LOG_LEVEL");
  return DEFAULT_LOG_LEVEL;
}

/**
 * Operational logs: JSON lines on stderr (fd 2), written synchronously so none is lost when the process exits and
 * they never interleave with the output on stdout.
 */
export function createLogger(level: LogLevel, destination: number | NodeJS.WritableStream = 2): Logger {
  const stream = typeof destination === "number" ? pino.destination({ fd: destination, sync: true }) : destination;
  return pino({ name: "statecraft", level, base: { name: "statecraft" } }, stream);
}

export type { Logger };
