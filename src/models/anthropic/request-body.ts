import type { ModelRequest, ToolSpec } from "../model.js";
import { outputInstructions } from "../output.js";
import type { ResolvedAnthropicConfig } from "./options.js";
import { toWireConversation } from "./request-messages.js";
import type { WireBlock, WireMessage, WireRequestBody, WireTool } from "./wire-types.js";

const EPHEMERAL = { type: "ephemeral" } as const;

/**
 * The request body of one model call: the conversation, tools, thinking and, with `cache` on, three cache
 * breakpoints. `paused` is what a paused turn (`pause_turn`) produced so far: sent back as the last assistant turn,
 * the API continues it.
 */
export function buildRequestBody(config: ResolvedAnthropicConfig, request: ModelRequest, paused?: readonly WireBlock[]): WireRequestBody {
  const conversation = toWireConversation(request.messages);
  const { system } = conversation;
  const messages = paused !== undefined && paused.length > 0 ? [...conversation.messages, { role: "assistant" as const, content: [...paused] }] : conversation.messages;
  const body: WireRequestBody = { model: config.model, max_tokens: config.maxTokens, messages, stream: true };
  // A run's `output`: the schema and the ask for JSON alone, at the end of the system prompt (read in validate_output).
  const withOutput = request.output ? [...system, { type: "text", text: outputInstructions(request.output) }] : system;
  if (withOutput.length > 0) body.system = withOutput;
  if (request.tools.length > 0) body.tools = request.tools.map(toWireTool);
  if (config.thinking !== undefined) body.thinking = { type: "enabled", budget_tokens: config.thinking.budgetTokens };
  if (config.temperature !== undefined) body.temperature = config.temperature;
  return config.cache ? withCacheBreakpoints(body) : body;
}

export function toWireTool(tool: ToolSpec): WireTool {
  return { name: tool.name, description: tool.description, input_schema: tool.inputSchema };
}

/**
 * Marks the end of the tools, of the system prompt and of the last message as cacheable (`cache_control`): the API
 * caches the prefix up to each mark, so the next call of the run reads all of it from the cache and pays only for
 * what is new. Three of the four breakpoints the API allows; copies are made, the body's parts are not changed.
 */
export function withCacheBreakpoints(body: WireRequestBody): WireRequestBody {
  const marked: WireRequestBody = { ...body };
  if (body.tools !== undefined && body.tools.length > 0) {
    marked.tools = body.tools.map((tool, i) => (i === body.tools!.length - 1 ? { ...tool, cache_control: EPHEMERAL } : tool));
  }
  if (body.system !== undefined && body.system.length > 0) marked.system = markLast(body.system);
  const last = body.messages[body.messages.length - 1];
  if (last !== undefined) {
    const content = markLast(last.content);
    marked.messages = [...body.messages.slice(0, -1), { ...last, content } satisfies WireMessage];
  }
  return marked;
}

/** The blocks with the last one that may carry `cache_control` marked (thinking blocks may not). */
function markLast(blocks: readonly WireBlock[]): WireBlock[] {
  for (let i = blocks.length - 1; i >= 0; i--) {
    const type = blocks[i].type;
    if (type === "thinking" || type === "redacted_thinking") continue;
    return blocks.map((block, j) => (j === i ? { ...block, cache_control: EPHEMERAL } : block));
  }
  return [...blocks];
}
