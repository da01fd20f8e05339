// @openai/agents run() with a custom Model (its documented model seam), tracing disabled (no exporter, no network).
import { Agent, Usage, run, setTracingDisabled, tool } from "@openai/agents";
import { FINAL_TEXT, NOOP_SCHEMA, TOOL_DESCRIPTION, TOOL_NAME, probe } from "../lib/common.mjs";

setTracingDisabled(true);

export function openaiAgentsEngine() {
  const noop = tool({
    name: TOOL_NAME,
    description: TOOL_DESCRIPTION,
    parameters: NOOP_SCHEMA,
    strict: false,
    execute: async () => {
      probe();
      return "ok";
    },
  });
  return {
    async make(N) {
      let call = 0;
      const model = {
        async getResponse() {
          const i = call++;
          const output =
            i < N
              ? [{ type: "function_call", callId: `c${i}`, name: TOOL_NAME, arguments: `{"i":${i}}`, status: "completed" }]
              : [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: FINAL_TEXT }] }];
          return { usage: new Usage({ requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 }), output, responseId: `r${i}` };
        },
        async *getStreamedResponse() {
          throw new Error("not used: the benchmark runs without streaming");
        },
      };
      const agent = new Agent({ name: "bench", instructions: "", model, tools: [noop] });
      let result;
      return {
        async run() {
          result = await run(agent, "bench", { maxTurns: N + 5 });
        },
        verify() {
          const outputs = result?.newItems.filter((item) => item.type === "tool_call_output_item").length;
          if (result?.finalOutput !== FINAL_TEXT || outputs !== N) throw new Error(`@openai/agents ended with ${JSON.stringify(result?.finalOutput)} after ${outputs} tool outputs`);
          return {};
        },
        dispose() {},
      };
    },
  };
}
