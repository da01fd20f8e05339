import type { Usage } from "../model.js";
import { isWireObject } from "./wire-types.js";

/** The Messages API's usage counts, as far as a response said them. */
export interface WireUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

const FIELDS = ["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"] as const;

/** The counts a `usage` object holds (message_start's, or message_delta's cumulative ones); nulls are left out. */
export function readWireUsage(value: unknown): WireUsage | undefined {
  if (!isWireObject(value)) return undefined;
  const usage: WireUsage = {};
  for (const field of FIELDS) {
    const count = value[field];
    if (typeof count === "number" && Number.isFinite(count) && count >= 0) usage[field] = count;
  }
  return Object.keys(usage).length > 0 ? usage : undefined;
}

/** Two segments of one turn (a paused turn and its continuation), added up. */
export function addWireUsage(a: WireUsage, b: WireUsage): WireUsage {
  const sum: WireUsage = {};
  for (const field of FIELDS) {
    if (a[field] !== undefined || b[field] !== undefined) sum[field] = (a[field] ?? 0) + (b[field] ?? 0);
  }
  return sum;
}

/**
 * statecraft's usage: `input` is every input token (the API counts cache reads and writes apart from
 * `input_tokens`), so it measures the conversation as other providers' counts do; `cached` the cache reads and
 * `cacheWrite` the cache writes.
 */
export function toUsage(wire: WireUsage): Usage | undefined {
  if (Object.keys(wire).length === 0) return undefined;
  const read = wire.cache_read_input_tokens;
  const write = wire.cache_creation_input_tokens;
  return {
    input: (wire.input_tokens ?? 0) + (read ?? 0) + (write ?? 0),
    output: wire.output_tokens ?? 0,
    ...(read !== undefined ? { cached: read } : {}),
    ...(write !== undefined ? { cacheWrite: write } : {}),
  };
}
