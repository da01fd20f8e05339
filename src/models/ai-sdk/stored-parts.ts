/**
 * What an assistant message keeps of an AI SDK model's output (`providerMetadata.aiSdk.content`): its parts in
 * order, each with the provider metadata it streamed, so the next request can send every part back with it as
 * `providerOptions`. A tool call keeps its place and metadata; its input is the engine's. Calls the provider ran
 * itself (`providerExecuted`) and their results are kept whole: the engine never runs them.
 */
export type StoredPart =
  | { type: "text"; text: string; providerOptions?: Record<string, unknown> }
  | { type: "reasoning"; text: string; providerOptions?: Record<string, unknown> }
  | { type: "tool-call"; toolCallId: string; toolName: string }
  | { type: "provider-tool-call"; toolCallId: string; toolName: string; input: unknown; providerOptions?: Record<string, unknown> }
  | { type: "provider-tool-result"; toolCallId: string; toolName: string; output: unknown; providerOptions?: Record<string, unknown> };

const TYPES = new Set(["text", "reasoning", "tool-call", "provider-tool-call", "provider-tool-result"]);

/** The stored parts of an assistant message, when an AI SDK model made it. */
export function storedParts(metadata: Record<string, unknown> | undefined): StoredPart[] | undefined {
  const aiSdk = metadata?.aiSdk;
  if (typeof aiSdk !== "object" || aiSdk === null || !Array.isArray((aiSdk as { content?: unknown }).content)) return undefined;
  return ((aiSdk as { content: unknown[] }).content as StoredPart[]).filter((part) => typeof part === "object" && part !== null && TYPES.has(part.type));
}
