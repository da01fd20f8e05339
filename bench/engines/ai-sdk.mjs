// Vercel `ai` 6 generateText with tools and its test mock model (MockLanguageModelV3), stopWhen big enough for N.
import { generateText, jsonSchema, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { FINAL_TEXT, NOOP_SCHEMA, TOOL_DESCRIPTION, TOOL_NAME, probe } from "../lib/common.mjs";

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

export function aiEngine() {
  const tools = {
    [TOOL_NAME]: tool({
      description: TOOL_DESCRIPTION,
      inputSchema: jsonSchema(NOOP_SCHEMA),
      execute: async () => {
        probe();
        return "ok";
      },
    }),
  };
  return {
    async make(N) {
      let call = 0;
      const model = new MockLanguageModelV3({
        doGenerate: async () => {
          // The mock records every call's options (each a full prompt); that is the mock's test bookkeeping, not
          // the SDK's loop, and would hold O(N²) prompts, so it is dropped as it comes.
          model.doGenerateCalls.length = 0;
          const i = call++;
          return i < N
            ? {
                content: [{ type: "tool-call", toolCallId: `c${i}`, toolName: TOOL_NAME, input: `{"i":${i}}` }],
                finishReason: { unified: "tool-calls", raw: "tool_calls" },
                usage: USAGE,
                warnings: [],
              }
            : { content: [{ type: "text", text: FINAL_TEXT }], finishReason: { unified: "stop", raw: "stop" }, usage: USAGE, warnings: [] };
        },
      });
      let result;
      return {
        async run() {
          result = await generateText({ model, tools, prompt: "bench", stopWhen: stepCountIs(N + 1), maxRetries: 0 });
        },
        verify() {
          const toolResults = result?.steps.reduce((n, s) => n + s.toolResults.length, 0);
          if (result?.text !== FINAL_TEXT || toolResults !== N) throw new Error(`ai ended with text ${JSON.stringify(result?.text)} after ${toolResults} tool results`);
          return {};
        },
        dispose() {},
      };
    },
  };
}
