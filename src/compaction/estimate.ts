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

/**
 * What was counted of a conversation: `prefix[i]` is the characters of its first i messages, `last` the message it
 * counted last. A run's conversation only grows (its messages are pushed, never edited), so a guard that estimates it
 * on every step counts each message once instead of walking, and serialising, the whole conversation each time.
 */
interface Tally {
  prefix: number[];
  last: Message | undefined;
}

const tallies = new WeakMap<readonly Message[], Tally>();

function tallyOf(messages: readonly Message[]): Tally {
  let tally = tallies.get(messages);
  const counted = tally ? tally.prefix.length - 1 : 0;
  // Shorter than counted, or its last counted message replaced: not the same conversation grown, so counted again.
  if (!tally || counted > messages.length || (counted > 0 && messages[counted - 1] !== tally.last)) {
    tally = { prefix: [0], last: undefined };
    tallies.set(messages, tally);
  }
  const prefix = tally.prefix;
  for (let i = prefix.length - 1; i < messages.length; i++) prefix.push(prefix[i] + messageChars(messages[i]));
  tally.last = messages.length > 0 ? messages[messages.length - 1] : undefined;
  return tally;
}

export function estimateTokensOf(messages: readonly Message[], from = 0, to = messages.length): number {
  if (from >= to) return 0;
  const { prefix } = tallyOf(messages);
  return Math.ceil((prefix[to] - prefix[from]) / CHARS_PER_TOKEN);
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
