import type { AssistantToolCall, Message, ToolMessage } from "./messages.js";

/** What the model is shown for a call whose result never made it into the conversation. */
export const MISSING_RESULT_TEXT = "Error: no result was recorded for this tool call (the run stopped before it finished).";

/**
 * The tool results answering `calls` of the assistant message at `assistantIndex`, searched up to the next assistant
 * message; the first result per call wins. Each result taken is marked in `consumed`, so the caller sends it once,
 * beside its call; a call with no result is absent from the map (the caller fills it in with MISSING_RESULT_TEXT).
 */
export function findResults(messages: readonly Message[], assistantIndex: number, calls: readonly AssistantToolCall[], consumed: Set<number>): Map<string, ToolMessage> {
  const wanted = new Set(calls.map((call) => call.id));
  const results = new Map<string, ToolMessage>();
  for (let j = assistantIndex + 1; j < messages.length; j++) {
    const candidate = messages[j];
    if (candidate.role === "assistant") break;
    if (candidate.role !== "tool" || consumed.has(j)) continue;
    if (wanted.has(candidate.toolCallId) && !results.has(candidate.toolCallId)) {
      results.set(candidate.toolCallId, candidate);
      consumed.add(j);
    }
  }
  return results;
}

/** A tool result no assistant call before it claimed, as text: what the tool said is kept, as context. */
export function orphanResultText(message: ToolMessage, content: string = message.content): string {
  return `Result of an earlier ${message.name} tool call (${message.toolCallId}):\n${content}`;
}
