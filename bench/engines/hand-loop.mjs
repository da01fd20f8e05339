// A hand-written while loop with ajv validation: no machine, no trace. What the loop costs with nothing around it.
import Ajv from "ajv";
import { FINAL_TEXT, NOOP_SCHEMA, TOOL_NAME, probe } from "../lib/common.mjs";

export function handLoopEngine() {
  const ajv = new Ajv({ allErrors: true, coerceTypes: true });
  const tools = new Map([[TOOL_NAME, { validate: ajv.compile(NOOP_SCHEMA), execute: async () => (probe(), "ok") }]]);
  return {
    async make(N) {
      let call = 0;
      const model = async () => {
        const i = call++;
        return i < N
          ? { text: "", toolCalls: [{ id: `c${i}`, name: TOOL_NAME, arguments: `{"i":${i}}` }] }
          : { text: FINAL_TEXT, toolCalls: [] };
      };
      let result;
      return {
        async run() {
          const messages = [{ role: "user", content: "bench" }];
          let toolCalls = 0;
          for (;;) {
            const response = await model(messages);
            messages.push({ role: "assistant", content: response.text, toolCalls: response.toolCalls });
            if (response.toolCalls.length === 0) {
              result = { text: response.text, toolCalls };
              break;
            }
            for (const call of response.toolCalls) {
              const tool = tools.get(call.name);
              let content;
              if (!tool) content = `unknown tool ${call.name}`;
              else {
                const input = JSON.parse(call.arguments);
                content = tool.validate(input) ? await tool.execute(input) : ajv.errorsText(tool.validate.errors);
              }
              toolCalls++;
              messages.push({ role: "tool", toolCallId: call.id, content });
            }
          }
        },
        verify() {
          if (result?.text !== FINAL_TEXT || result.toolCalls !== N) throw new Error(`hand loop ended with ${JSON.stringify(result)}`);
          return {};
        },
        dispose() {},
      };
    },
  };
}
