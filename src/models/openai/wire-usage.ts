import type { Usage } from "../model.js";
import { isWireObject } from "./wire-types.js";

/**
 * Reads a usage object in any of the shapes servers send (OpenAI's details objects, DeepSeek's cache-hit counts,
 * `input_tokens`/`output_tokens`). Returns undefined when it holds no token counts.
 */
export function parseUsage(value: unknown): Usage | undefined {
  if (!isWireObject(value)) return undefined;
  const input = count(value.prompt_tokens) ?? count(value.input_tokens);
  const output = count(value.completion_tokens) ?? count(value.output_tokens);
  if (input === undefined && output === undefined) return undefined;
  const promptDetails = isWireObject(value.prompt_tokens_details) ? value.prompt_tokens_details : {};
  const completionDetails = isWireObject(value.completion_tokens_details) ? value.completion_tokens_details : {};
  const cached = count(promptDetails.cached_tokens) ?? count(value.prompt_cache_hit_tokens);
  const reasoning = count(completionDetails.reasoning_tokens) ?? count(value.reasoning_tokens);
  return {
    input: input ?? 0,
    output: output ?? 0,
    ...(cached !== undefined ? { cached } : {}),
    ...(reasoning !== undefined ? { reasoning } : {}),
  };
}

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
}
