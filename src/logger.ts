import { pino, type Logger } from "pino";

let shared: Logger | undefined;

/**
 * Operational logs (write failures, warnings), always on stderr and never mixed with the trace or with output.
 * Level from STATECRAFT_LOG_LEVEL (default "warn").
 */
export function defaultLogger(): Logger {
  shared ??= pino({ name: "statecraft", level: process.env.STATECRAFT_LOG_LEVEL ?? "warn" }, pino.destination({ fd: 2, sync: true }));
  return shared;
}

export type { Logger };
