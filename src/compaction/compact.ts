import type { Message } from "../models/messages.js";
import type { Model } from "../models/model.js";
import { AgentError } from "../errors/agent-error.js";
import { estimateTokensOf } from "./estimate.js";

export const SUMMARY_PREFIX = "[Summary of the earlier conversation]\n";

/** Turns a list of messages into a summary text. */
export type Summarize = (messages: readonly Message[], options: { signal: AbortSignal }) => string | Promise<string>;

export interface CompactionPlan {
  /** Older messages to replace by a summary. */
  older: Message[];
  /** Recent messages kept whole. */
  recent: Message[];
}

/**
 * Splits the conversation (system prompt excluded) into older messages and the most recent whole turns that fit in
 * `keepRecentTokens`. A turn starts at a user message or at an assistant message; an assistant message's tool results
 * stay with it, so a tool call is never separated from its result. The last turn is always kept.
 */
export function planCompaction(messages: readonly Message[], keepRecentTokens: number): CompactionPlan | undefined {
  const starts: number[] = [];
  for (let i = 0; i < messages.length; i++) if (messages[i].role !== "tool") starts.push(i);
  if (starts.length < 2) return undefined;
  let cut = starts[starts.length - 1];
  for (let k = starts.length - 2; k >= 0; k--) {
    if (estimateTokensOf(messages, starts[k]) > keepRecentTokens) break;
    cut = starts[k];
  }
  if (cut === 0) return undefined;
  return { older: messages.slice(0, cut), recent: messages.slice(cut) };
}

/** The conversation as plain text, for a summariser. */
export function conversationText(messages: readonly Message[]): string {
  return messages
    .map((m) => {
      if (m.role === "tool") return `[tool result ${m.name}${m.isError ? " (error)" : ""}]\n${m.content}`;
      if (m.role === "assistant" && m.toolCalls?.length) {
        const calls = m.toolCalls.map((c) => `[tool call ${c.name} ${c.rawArguments ?? JSON.stringify(c.input)}]`).join("\n");
        return `[assistant]\n${m.content}${m.content ? "\n" : ""}${calls}`;
      }
      return `[${m.role}]\n${m.content}`;
    })
    .join("\n\n");
}

const SUMMARY_INSTRUCTIONS =
  "You compact an agent's conversation. Summarize it so the agent can continue the task: the user's goal and " +
  "constraints, what was done and found (files, commands, results, errors), decisions made, and what remains. " +
  "Be concise and concrete; keep names, paths and numbers exactly.";

/** The default summariser: the run's model, asked with no tools offered. */
export function modelSummarizer(model: Model, sessionId: string): Summarize {
  return async (messages, { signal }) => {
    let text = "";
    for await (const event of model.stream(
      {
        messages: [
          { role: "system", content: SUMMARY_INSTRUCTIONS },
          { role: "user", content: conversationText(messages) },
        ],
        tools: [],
        sessionId,
        turn: -1,
      },
      { signal },
    )) {
      if (event.type === "response") text = event.response.text;
    }
    if (!text.trim()) throw new AgentError("MODEL_ERROR", "the model returned an empty summary while compacting the context");
    return text;
  };
}
