// @mariozechner/pi-agent-core 0.73.1 runAgentLoop with an injected stream function (its documented model seam).
import { runAgentLoop } from "@mariozechner/pi-agent-core";
import { Type, createAssistantMessageEventStream } from "@mariozechner/pi-ai";
import { FINAL_TEXT, TOOL_DESCRIPTION, TOOL_NAME, probe } from "../lib/common.mjs";

const MODEL = { id: "instant", name: "instant", api: "bench", provider: "bench", baseUrl: "", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1_000_000, maxTokens: 1000 };
const USAGE = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

export function piEngine() {
  const tool = {
    name: TOOL_NAME,
    label: TOOL_NAME,
    description: TOOL_DESCRIPTION,
    parameters: Type.Object({ i: Type.Integer() }, { additionalProperties: false }),
    execute: async () => {
      probe();
      return { content: [{ type: "text", text: "ok" }], details: {} };
    },
  };
  return {
    async make(N) {
      let call = 0;
      const message = (i) => ({
        role: "assistant",
        content: i < N ? [{ type: "toolCall", id: `c${i}`, name: TOOL_NAME, arguments: { i } }] : [{ type: "text", text: FINAL_TEXT }],
        api: "bench",
        provider: "bench",
        model: "instant",
        usage: USAGE,
        stopReason: i < N ? "toolUse" : "stop",
        timestamp: 0,
      });
      const streamFn = () => {
        const stream = createAssistantMessageEventStream();
        const m = message(call++);
        stream.push({ type: "done", reason: m.stopReason, message: m });
        return stream;
      };
      const config = { model: MODEL, convertToLlm: (messages) => messages };
      let produced;
      return {
        async run() {
          const context = { systemPrompt: "", messages: [], tools: [tool] };
          produced = await runAgentLoop([{ role: "user", content: "bench", timestamp: 0 }], context, config, () => {}, undefined, streamFn);
        },
        verify() {
          const results = produced?.filter((m) => m.role === "toolResult") ?? [];
          const last = produced?.[produced.length - 1];
          if (results.length !== N || results.some((r) => r.isError) || last?.content?.[0]?.text !== FINAL_TEXT) {
            throw new Error(`pi-agent-core ran ${results.length} tools (${results.filter((r) => r.isError).length} errors), ended with ${JSON.stringify(last?.content)}`);
          }
          return {};
        },
        dispose() {},
      };
    },
  };
}
