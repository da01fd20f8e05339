import { UsageError } from "./usage-error.js";

/** pino's levels, and "silent". */
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
