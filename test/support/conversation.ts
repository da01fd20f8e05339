import type { Message } from "../../src/models/messages.js";

/**
 * What is wrong with a conversation a provider would be sent: each tool call of an assistant message must be
 * answered by exactly one tool message, right after it and in call order, and every tool message must answer a call
 * of the assistant message before it. Returns one line per problem (empty when the conversation is valid).
 */
export function conversationProblems(messages: readonly Message[]): string[] {
  const problems: string[] = [];
  messages.forEach((m, i) => {
    if (m.role === "assistant" && m.toolCalls?.length) {
      const answers = messages.slice(i + 1, i + 1 + m.toolCalls.length);
      const got = answers.map((a) => (a.role === "tool" ? a.toolCallId : `<${a.role} message>`));
      const want = m.toolCalls.map((c) => c.id);
      if (got.join(",") !== want.join(",")) problems.push(`message ${i}: tool calls ${want.join(",")} are answered by ${got.join(",") || "nothing"}`);
    }
    if (m.role === "tool") {
      const owner = messages
        .slice(0, i)
        .reverse()
        .find((p) => p.role !== "tool");
      const ids = owner?.role === "assistant" ? (owner.toolCalls ?? []).map((c) => c.id) : [];
      if (!ids.includes(m.toolCallId)) problems.push(`message ${i}: tool message ${m.toolCallId} answers no call of the assistant message before it`);
    }
  });
  const answered = messages.flatMap((m) => (m.role === "tool" ? [m.toolCallId] : []));
  const repeated = answered.filter((id, i) => answered.indexOf(id) !== i);
  if (repeated.length) problems.push(`tool calls answered more than once: ${[...new Set(repeated)].join(", ")}`);
  return problems;
}
