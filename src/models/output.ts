import type { OutputRequest } from "./model.js";

/**
 * What to tell a model that has no native structured output (or a server that refuses it): the schema, and to answer
 * with the JSON value alone. Providers add it to the request's system message.
 */
export function outputInstructions(request: OutputRequest): string {
  return `Give your final answer as a JSON value, and nothing else (no prose, no code fence), matching this JSON Schema:\n${JSON.stringify(request.schema)}`;
}
