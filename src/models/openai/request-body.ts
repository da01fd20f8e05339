import type { ModelRequest, ToolSpec } from "../model.js";
import type { ResolvedOpenAIConfig } from "./options.js";
import { toWireMessages } from "./request-messages.js";
import { applyOutput } from "./structured-output.js";
import type { WireRequestBody, WireTool } from "./wire-types.js";

/** The full request body of one model call: messages, tools as JSON Schema, streaming with usage, options. */
export function buildRequestBody(config: ResolvedOpenAIConfig, request: ModelRequest): WireRequestBody {
  const body: WireRequestBody = {
    model: config.model,
    messages: toWireMessages(request.messages),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (request.tools.length > 0) {
    body.tools = request.tools.map(toWireTool);
    // Servers reject parallel_tool_calls without tools, so it is only sent beside them.
    if (config.parallelToolCalls !== undefined) body.parallel_tool_calls = config.parallelToolCalls;
  }
  if (request.output) applyOutput(body, request.output, config.structuredOutput);
  if (config.temperature !== undefined) body.temperature = config.temperature;
  if (config.maxTokens !== undefined) {
    // OpenAI's reasoning models refuse max_tokens; most other servers only know max_tokens.
    if (isOpenAIHost(config.baseURL)) body.max_completion_tokens = config.maxTokens;
    else body.max_tokens = config.maxTokens;
  }
  return { ...body, ...config.extraBody, stream: true, stream_options: { include_usage: true } };
}

export function toWireTool(tool: ToolSpec): WireTool {
  return {
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
  };
}

function isOpenAIHost(baseURL: string): boolean {
  try {
    return new URL(baseURL).hostname === "api.openai.com";
  } catch {
    return false;
  }
}
