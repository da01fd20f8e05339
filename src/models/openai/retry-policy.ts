/** How long to wait before retry number `retry` (1 for the first retry). */
export interface BackoffSettings {
  retryBaseDelayMs: number;
  maxRetryDelayMs: number;
}

/**
 * Exponential backoff with jitter (base × 2^(retry-1), minus up to 25 % so clients that failed together do not
 * retry together), or exactly what the server asked for via Retry-After; both capped at `maxRetryDelayMs`.
 */
export function retryDelayMs(retry: number, settings: BackoffSettings, serverAskedMs?: number, random: () => number = Math.random): number {
  if (serverAskedMs !== undefined) return Math.min(Math.max(0, Math.round(serverAskedMs)), settings.maxRetryDelayMs);
  const exponential = settings.retryBaseDelayMs * 2 ** Math.max(0, retry - 1);
  const jittered = exponential * (1 - 0.25 * random());
  return Math.round(Math.min(jittered, settings.maxRetryDelayMs));
}

/** Reads `retry-after-ms` (milliseconds) or `Retry-After` (seconds, or an HTTP date). */
export function retryAfterMs(headers: { get(name: string): string | null } | undefined, now: number = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get("retry-after-ms");
  if (ms !== null && ms.trim() !== "") {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const after = headers.get("retry-after");
  if (after === null || after.trim() === "") return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(after);
  if (Number.isFinite(date)) return Math.max(0, date - now);
  return undefined;
}

// One sleep for the whole package: the engine waits with it too.
export { sleep } from "../../util/abortable.js";
