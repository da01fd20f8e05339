import { describe, expect, it } from "vitest";
import type { Message } from "../../../src/models/messages.js";
import { EMPTY_RESULT_TEXT, MISSING_RESULT_TEXT, toWireConversation } from "../../../src/models/anthropic/request-messages.js";
import { toPrompt } from "../../../src/models/ai-sdk/prompt.js";

// The conversation as the Messages API must see it, from histories the engine can hold: other providers' messages,
// missing or stray tool results, cut-off thinking, system text inside the conversation.

const call = (id: string, name = "t", input: unknown = { a: 1 }, extra: Record<string, unknown> = {}) => ({ id, name, input, ...extra });

describe("toWireConversation (anthropicModel)", () => {
  it("leading system messages become `system`; a later one is user text; same-role turns are merged", () => {
    const messages: Message[] = [
      { role: "system", content: "Be brief." },
      { role: "system", content: "Use tools." },
      { role: "user", content: "one" },
      { role: "system", content: "[Summary] earlier" },
      { role: "user", content: "two" },
      { role: "assistant", content: "ok" },
    ];
    expect(toWireConversation(messages)).toEqual({
      system: [
        { type: "text", text: "Be brief." },
        { type: "text", text: "Use tools." },
      ],
      messages: [
        { role: "user", content: [{ type: "text", text: "one" }, { type: "text", text: "[Summary] earlier" }, { type: "text", text: "two" }] },
        { role: "assistant", content: [{ type: "text", text: "ok" }] },
      ],
    });
  });

  it("a message of another provider (no stored blocks) is its text then its calls; results answer them first, a missing one as an error", () => {
    const messages: Message[] = [
      { role: "user", content: "go" },
      { role: "assistant", content: "Two calls.", thinking: "plain reasoning, no signature", toolCalls: [call("call_1", "a"), call("call_2", "b", "not json", { rawArguments: "not json" })] },
      { role: "tool", toolCallId: "call_1", name: "a", content: "", isError: false },
      { role: "user", content: "and then?" },
    ];
    const { messages: wire } = toWireConversation(messages);
    expect(wire[1]).toEqual({
      role: "assistant",
      content: [
        { type: "text", text: "Two calls." },
        { type: "tool_use", id: "call_1", name: "a", input: { a: 1 } },
        { type: "tool_use", id: "call_2", name: "b", input: { unparsed_arguments: "not json" } },
      ],
    });
    expect(wire[2]).toEqual({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "call_1", content: EMPTY_RESULT_TEXT },
        { type: "tool_result", tool_use_id: "call_2", content: MISSING_RESULT_TEXT, is_error: true },
        { type: "text", text: "and then?" },
      ],
    });
    expect(wire).toHaveLength(3);
  });

  it("stored blocks go back in order; a thinking block without its signature (cut off) is left out; server ids are used when unique", () => {
    const messages: Message[] = [
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: "",
        cutOff: true,
        toolCalls: [call("call_9", "a", { x: 2 }, { providerId: "toolu_A" })],
        providerMetadata: {
          anthropic: {
            content: [
              { type: "thinking", thinking: "half", signature: "" },
              { type: "redacted_thinking", data: "opaque" },
              { type: "tool_use", id: "toolu_A", name: "a" },
            ],
          },
        },
      },
      { role: "tool", toolCallId: "call_9", name: "a", content: "failed", isError: true },
    ];
    const { messages: wire } = toWireConversation(messages);
    expect(wire[1]!.content).toEqual([
      { type: "redacted_thinking", data: "opaque" },
      { type: "tool_use", id: "toolu_A", name: "a", input: { x: 2 } },
    ]);
    expect(wire[2]!.content).toEqual([{ type: "tool_result", tool_use_id: "toolu_A", content: "failed", is_error: true }]);
  });

  it("a tool result no call claimed is kept as user text, not dropped", () => {
    const { messages: wire } = toWireConversation([
      { role: "user", content: "go" },
      { role: "tool", toolCallId: "gone", name: "read_file", content: "data", isError: false },
    ]);
    expect(wire).toEqual([{ role: "user", content: [{ type: "text", text: "go" }, { type: "text", text: "Result of an earlier read_file tool call (gone):\ndata" }] }]);
  });
});

describe("toPrompt (aiSdkModel)", () => {
  it("every call is answered by one tool message right after it: a failed result as error-text, a missing one too", () => {
    const prompt = toPrompt([
      { role: "system", content: "S" },
      { role: "user", content: "go" },
      { role: "assistant", content: "", toolCalls: [call("c1", "a"), call("c2", "b")] },
      { role: "tool", toolCallId: "c1", name: "a", content: "boom", isError: true },
    ]);
    expect(prompt).toEqual([
      { role: "system", content: "S" },
      { role: "user", content: [{ type: "text", text: "go" }] },
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "a", input: { a: 1 } }, { type: "tool-call", toolCallId: "c2", toolName: "b", input: { a: 1 } }] },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "c1", toolName: "a", output: { type: "error-text", value: "boom" } },
          { type: "tool-result", toolCallId: "c2", toolName: "b", output: { type: "error-text", value: expect.stringContaining("no result was recorded") } },
        ],
      },
    ]);
  });

  it("calls the provider ran itself go back as they came, never as calls for the engine", () => {
    const prompt = toPrompt([
      { role: "user", content: "search" },
      {
        role: "assistant",
        content: "Found it.",
        providerMetadata: {
          aiSdk: {
            content: [
              { type: "provider-tool-call", toolCallId: "srv1", toolName: "web_search", input: { query: "q" } },
              { type: "provider-tool-result", toolCallId: "srv1", toolName: "web_search", output: { type: "json", value: [{ url: "https://example.com" }] } },
              { type: "text", text: "Found it." },
            ],
          },
        },
      },
    ]);
    expect(prompt[1]).toEqual({
      role: "assistant",
      content: [
        { type: "tool-call", toolCallId: "srv1", toolName: "web_search", input: { query: "q" }, providerExecuted: true },
        { type: "tool-result", toolCallId: "srv1", toolName: "web_search", output: { type: "json", value: [{ url: "https://example.com" }] } },
        { type: "text", text: "Found it." },
      ],
    });
    expect(prompt).toHaveLength(2);
  });
});
