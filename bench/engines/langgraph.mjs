// @langchain/langgraph createReactAgent with a fake chat model (a BaseChatModel answering from a counter).
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { FINAL_TEXT, NOOP_SCHEMA, TOOL_DESCRIPTION, TOOL_NAME, probe } from "../lib/common.mjs";

class InstantChatModel extends BaseChatModel {
  constructor(steps) {
    super({});
    this.steps = steps;
    this.call = 0;
  }
  _llmType() {
    return "instant";
  }
  bindTools() {
    return this;
  }
  async _generate() {
    const i = this.call++;
    const message =
      i < this.steps
        ? new AIMessage({ content: "", tool_calls: [{ id: `c${i}`, name: TOOL_NAME, args: { i }, type: "tool_call" }] })
        : new AIMessage({ content: FINAL_TEXT });
    return { generations: [{ text: typeof message.content === "string" ? message.content : "", message }] };
  }
}

export function langgraphEngine() {
  const noop = tool(
    async () => {
      probe();
      return "ok";
    },
    { name: TOOL_NAME, description: TOOL_DESCRIPTION, schema: NOOP_SCHEMA },
  );
  return {
    async make(N) {
      const agent = createReactAgent({ llm: new InstantChatModel(N), tools: [noop] });
      let result;
      return {
        async run() {
          result = await agent.invoke({ messages: [{ role: "user", content: "bench" }] }, { recursionLimit: 2 * N + 10 });
        },
        verify() {
          const tools = result?.messages.filter((m) => m.getType() === "tool").length;
          const last = result?.messages[result.messages.length - 1];
          if (last?.content !== FINAL_TEXT || tools !== N) throw new Error(`langgraph ended with ${JSON.stringify(last?.content)} after ${tools} tool messages`);
          return {};
        },
        dispose() {},
      };
    },
  };
}
