/**
 * The Messages API shapes statecraft sends, kept loose: a content block is an object with a `type`, and blocks the
 * API made (thinking, redacted thinking, server tool blocks) go back exactly as they came.
 */
export interface WireBlock {
  type: string;
  [field: string]: unknown;
}

export interface WireMessage {
  role: "user" | "assistant";
  content: WireBlock[];
}

export interface WireTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  cache_control?: { type: "ephemeral" };
}

export interface WireRequestBody {
  model: string;
  max_tokens: number;
  messages: WireMessage[];
  system?: WireBlock[];
  tools?: WireTool[];
  thinking?: { type: "enabled"; budget_tokens: number };
  temperature?: number;
  stream: true;
}

export type WireObject = Record<string, unknown>;

export function isWireObject(value: unknown): value is WireObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * What an assistant message keeps of the API's own content (`providerMetadata.anthropic`): every block in order, so
 * thinking blocks and their signatures go back unchanged. A `tool_use` block is kept without its input (the call's
 * input, as the engine parsed it, is sent instead).
 */
export interface AnthropicMessageMetadata {
  content: WireBlock[];
  stopReason?: string;
}

/** The stored blocks of an assistant message, when it came from this provider. */
export function storedBlocks(metadata: Record<string, unknown> | undefined): WireBlock[] | undefined {
  const anthropic = metadata?.anthropic;
  if (!isWireObject(anthropic) || !Array.isArray(anthropic.content)) return undefined;
  return anthropic.content.filter((block): block is WireBlock => isWireObject(block) && typeof block.type === "string");
}
