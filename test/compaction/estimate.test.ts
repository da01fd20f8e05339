import { describe, expect, it } from "vitest";
import { estimateContextTokens, estimateTokensOf, messageChars } from "../../src/compaction/estimate.js";
import type { Message } from "../../src/models/messages.js";

/** The estimate by its definition: every message walked, characters / 4 rounded up. */
const walked = (messages: readonly Message[], from = 0) => Math.ceil(messages.slice(from).reduce((n, m) => n + messageChars(m), 0) / 4);

/** An assistant message whose tool input counts how often it is serialised. */
function callMessage(i: number, serialised: { count: number }): Message {
  const input = {
    i,
    toJSON() {
      serialised.count++;
      return { i };
    },
  };
  return { role: "assistant", content: `step ${i}`, toolCalls: [{ id: `c${i}`, name: "noop", input }] };
}

describe("estimateContextTokens", () => {
  it("gives the walked estimate of a conversation as it grows, with and without a usage anchor", () => {
    const serialised = { count: 0 };
    const messages: Message[] = [{ role: "user", content: "hello there" }];
    for (let i = 0; i < 50; i++) {
      messages.push(callMessage(i, serialised), { role: "tool", toolCallId: `c${i}`, name: "noop", content: "x".repeat(i), isError: false });
      expect(estimateContextTokens(messages, undefined)).toBe(walked(messages));
      const anchor = { tokens: 1000, messageCount: messages.length - 1 };
      expect(estimateContextTokens(messages, anchor)).toBe(1000 + walked(messages, messages.length - 1));
      expect(estimateTokensOf(messages, 3, 3)).toBe(0);
    }
  });

  it("serialises each message once however often the growing conversation is estimated", () => {
    const serialised = { count: 0 };
    const messages: Message[] = [{ role: "user", content: "go" }];
    for (let i = 0; i < 200; i++) {
      messages.push(callMessage(i, serialised));
      // A step's guards estimate the conversation several times.
      for (let k = 0; k < 4; k++) estimateContextTokens(messages, undefined);
    }
    expect(serialised.count).toBe(200);
  });

  it("counts a conversation again when it no longer extends what was counted", () => {
    const messages: Message[] = [
      { role: "user", content: "a".repeat(40) },
      { role: "assistant", content: "b".repeat(40) },
    ];
    expect(estimateContextTokens(messages, undefined)).toBe(20);
    // The last message replaced in place: same length, different content.
    messages[1] = { role: "assistant", content: "c".repeat(400) };
    expect(estimateContextTokens(messages, undefined)).toBe(110);
    // Shortened, then grown by a different message.
    messages.pop();
    expect(estimateContextTokens(messages, undefined)).toBe(10);
    messages.push({ role: "assistant", content: "d".repeat(8) });
    expect(estimateContextTokens(messages, undefined)).toBe(12);
    // An anchor past the conversation's end (the history was replaced since): characters throughout.
    expect(estimateContextTokens(messages, { tokens: 5000, messageCount: 9 })).toBe(12);
  });
});
