import { createRequire } from "node:module";
import type { Logger } from "pino";

const require = createRequire(import.meta.url);
let shared: Logger | undefined;

/**
 * Operational logs (write failures, warnings), always on stderr and never mixed with the trace or with output.
 * Level from STATECRAFT_LOG_LEVEL (default "warn"). pino (CommonJS, a dozen modules) is loaded by the first call, not by
 * `import "statecraft"`.
 */
export function defaultLogger(): Logger {
  if (shared) return shared;
  const { pino } = require("pino") as typeof import("pino");
  shared = pino({ name: "statecraft", level: process.env.STATECRAFT_LOG_LEVEL ?? "warn" }, pino.destination({ fd: 2, sync: true }));
  return shared;
}

export type { Logger };
