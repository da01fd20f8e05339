import type { AssistantMessage, AssistantToolCall, Message } from "../messages.js";
import { findResults, MISSING_RESULT_TEXT, orphanResultText } from "../tool-results.js";
import { toWireContent, toWireParts } from "./content-parts.js";
import { mapToolCallIds } from "./tool-id-mapping.js";
import type { WireMessage, WireToolCall } from "./wire-types.js";

/** Assistant-message fields a server sent that it needs back verbatim (Gemini's thought signature). */
const ECHOED_MESSAGE_FIELDS = ["thought_signature", "extra_content"] as const;
/** Tool-call fields a server sent that it needs back verbatim. */
const ECHOED_CALL_FIELDS = ["extra_content", "thought_signature"] as const;

export { MISSING_RESULT_TEXT } from "../tool-results.js";
/** Some servers reject empty tool results; the model is told there was no output instead. */
export const EMPTY_RESULT_TEXT = "(no output)";

/**
 * Maps statecraft's conversation to Chat Completions messages that strict servers accept: every assistant tool
 * call is followed directly by exactly one tool result (a missing one is filled in, out-of-place ones are moved up),
 * tool ids are mapped consistently (see tool-id-mapping.ts), and a tool result with no call before it is kept as a
 * user message rather than dropped.
 */
export function toWireMessages(messages: readonly Message[]): WireMessage[] {
  const wireIds = mapToolCallIds(messages);
  const wire: WireMessage[] = [];
  const consumed = new Set<number>();

  for (let i = 0; i < messages.length; i++) {
    if (consumed.has(i)) continue;
    const message = messages[i];
    switch (message.role) {
      case "system":
        wire.push({ role: "system", content: message.content });
        break;
      case "user":
        wire.push({ role: "user", content: toWireContent(message.content) });
        break;
      case "assistant": {
        wire.push(assistantToWire(message, wireIds));
        const calls = message.toolCalls ?? [];
        if (calls.length === 0) break;
        const results = findResults(messages, i, calls, consumed);
        const shown: WireMessage[] = [];
        for (const call of calls) {
          const result = results.get(call.id);
          wire.push({
            role: "tool",
            tool_call_id: wireIds.get(call.id) ?? call.id,
            content: result ? nonEmpty(result.content) : MISSING_RESULT_TEXT,
          });
          // A tool message takes text only: images a tool returned follow its results as a user message.
          const media = result?.parts?.filter((part) => part.type !== "text") ?? [];
          if (media.length > 0) shown.push({ role: "user", content: toWireParts([{ type: "text", text: `The ${call.name} tool call (${wireIds.get(call.id) ?? call.id}) returned:` }, ...media]) });
        }
        wire.push(...shown);
        break;
      }
      case "tool":
        // No assistant call before it claimed this result: keep what the tool said, as context.
        wire.push({
          role: "user",
          content: orphanResultText(message, nonEmpty(message.content)),
        });
        break;
    }
  }
  return wire;
}

function assistantToWire(message: AssistantMessage, wireIds: Map<string, string>): WireMessage {
  const calls = message.toolCalls ?? [];
  const wire: WireMessage & { role: "assistant" } = {
    role: "assistant",
    // The spec (and strict servers) want null, not "", beside tool calls; a plain answer is always a string.
    content: calls.length > 0 && message.content === "" ? null : message.content,
  };
  if (calls.length > 0) wire.tool_calls = calls.map((call) => callToWire(call, wireIds));
  const metadata = message.providerMetadata ?? {};
  for (const field of ECHOED_MESSAGE_FIELDS) {
    if (metadata[field] !== undefined) wire[field] = metadata[field];
  }
  // Thinking-with-tools servers (DeepSeek, Kimi) reject a tool loop whose reasoning was not sent back.
  if (calls.length > 0 && message.thinking && metadata.reasoningField === "reasoning_content") {
    wire.reasoning_content = message.thinking;
  }
  return wire;
}

function callToWire(call: AssistantToolCall, wireIds: Map<string, string>): WireToolCall {
  const wire: WireToolCall = {
    id: wireIds.get(call.id) ?? call.id,
    type: "function",
    function: { name: call.name, arguments: argumentsText(call) },
  };
  const metadata = call.providerMetadata ?? {};
  for (const field of ECHOED_CALL_FIELDS) {
    if (metadata[field] !== undefined) wire[field] = metadata[field];
  }
  return wire;
}

/**
 * The argument text to send back. Servers that re-parse history (vLLM, Mistral) reject text that is not a JSON
 * object, so text that did not parse goes back wrapped in one; the tool result already told the model what was wrong.
 */
export function argumentsText(call: AssistantToolCall): string {
  const raw = call.rawArguments;
  if (raw !== undefined) {
    if (raw.trim() === "") return "{}";
    if (isJsonObjectText(raw)) return raw;
    return JSON.stringify({ unparsed_arguments: raw });
  }
  const input = call.input;
  if (input === undefined || input === null) return "{}";
  if (typeof input === "string") return isJsonObjectText(input) ? input : JSON.stringify({ unparsed_arguments: input });
  if (typeof input !== "object" || Array.isArray(input)) return JSON.stringify({ value: input });
  return JSON.stringify(input);
}

function isJsonObjectText(text: string): boolean {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed);
  } catch {
    return false;
  }
}

function nonEmpty(content: string): string {
  return content === "" ? EMPTY_RESULT_TEXT : content;
}
