import type { Message } from "../models/messages.js";

/** Characters per token, the usual rough figure for English text and code. */
const CHARS_PER_TOKEN = 4;

/** Characters a message contributes to the context (text, tool arguments). */
export function messageChars(message: Message): number {
  let chars = message.content.length;
  if (message.role === "assistant" && message.toolCalls) {
    for (const call of message.toolCalls) chars += call.name.length + (call.rawArguments ?? JSON.stringify(call.input ?? {})).length;
  }
  return chars;
}

export function estimateTokensOf(messages: readonly Message[], from = 0, to = messages.length): number {
  let chars = 0;
  for (let i = from; i < to; i++) chars += messageChars(messages[i]);
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** The last usage the model reported, and how long the conversation was then. */
export interface UsageAnchor {
  tokens: number;
  messageCount: number;
}

/**
 * Estimated tokens of the conversation: the last known usage (input + output of the last model call) plus characters
 * / 4 for what came after it; characters / 4 throughout when no usage is known or the history was replaced since.
 */
export function estimateContextTokens(messages: readonly Message[], anchor: UsageAnchor | undefined): number {
  if (!anchor || anchor.messageCount > messages.length) return estimateTokensOf(messages);
  return anchor.tokens + estimateTokensOf(messages, anchor.messageCount);
}
