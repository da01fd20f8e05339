import type { AssistantToolCall } from "./messages.js";

/**
 * A call's input as the object a provider's API wants back in the history: input that did not parse goes back
 * wrapped in one (the tool result already told the model what was wrong).
 */
export function toolInputObject(call: AssistantToolCall): Record<string, unknown> {
  const input = call.input;
  if (input !== null && typeof input === "object" && !Array.isArray(input)) return input as Record<string, unknown>;
  if (input === undefined || input === null) return {};
  if (typeof input === "string") return { unparsed_arguments: call.rawArguments ?? input };
  return { value: input };
}
