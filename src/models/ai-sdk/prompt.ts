import type { LanguageModelV3FunctionTool, LanguageModelV3Message, LanguageModelV3Prompt, LanguageModelV3ToolResultPart, SharedV3ProviderOptions } from "@ai-sdk/provider";
import { binarySource, type BinarySource, type ContentPart } from "../content.js";
import type { AssistantMessage, AssistantToolCall, Message, ToolMessage, UserMessage } from "../messages.js";
import type { ToolSpec } from "../model.js";
import { mapToolCallIds } from "../openai/index.js";
import { toolInputObject } from "../tool-input.js";
import { findResults, MISSING_RESULT_TEXT, orphanResultText } from "../tool-results.js";
import { storedParts, type StoredPart } from "./stored-parts.js";

type AssistantContent = Extract<LanguageModelV3Message, { role: "assistant" }>["content"];
type UserContent = Extract<LanguageModelV3Message, { role: "user" }>["content"];
/** Metadata a provider streamed is JSON it sends back as it came. */
type ProviderOptions = SharedV3ProviderOptions;

export { MISSING_RESULT_TEXT } from "../tool-results.js";

/**
 * statecraft's conversation as an AI SDK prompt (the specification's messages): each assistant message's tool calls
 * answered by one `tool` message right after it (a missing result filled in as an error), the provider metadata of
 * each part sent back as its `providerOptions` (Anthropic's thinking signatures, Gemini's thought signatures), a
 * tool result no call claimed kept as user text. One function per kind of content, so new kinds (images) slot in.
 */
export function toPrompt(messages: readonly Message[]): LanguageModelV3Prompt {
  const ids = mapToolCallIds(messages);
  const prompt: LanguageModelV3Prompt = [];
  const consumed = new Set<number>();
  for (let i = 0; i < messages.length; i++) {
    if (consumed.has(i)) continue;
    const message = messages[i];
    switch (message.role) {
      case "system":
        prompt.push({ role: "system", content: message.content });
        break;
      case "user":
        prompt.push({ role: "user", content: userContent(message) });
        break;
      case "assistant": {
        const content = assistantContent(message, ids);
        if (content.length > 0) prompt.push({ role: "assistant", content });
        const calls = message.toolCalls ?? [];
        if (calls.length === 0) break;
        const results = findResults(messages, i, calls, consumed);
        prompt.push({ role: "tool", content: calls.map((call) => toolResult(call, ids, results.get(call.id))) });
        break;
      }
      case "tool":
        prompt.push({ role: "user", content: [{ type: "text", text: orphanResultText(message) }] });
        break;
    }
  }
  return prompt;
}

/** A user message's content: its text, or its parts (images and files as the specification's file parts). */
export function userContent(message: UserMessage): UserContent {
  if (typeof message.content === "string") return [{ type: "text", text: message.content }];
  return message.content.map((part): UserContent[number] => {
    switch (part.type) {
      case "text":
        return { type: "text", text: part.text };
      case "image":
        return filePart(binarySource(part.image, part.mediaType), "image/*");
      case "file":
        return { ...filePart(binarySource(part.data, part.mediaType), part.mediaType), ...(part.filename ? { filename: part.filename } : {}) };
    }
  });
}

/** Bytes or a URL as a file part; a URL is passed as one, so the provider fetches or forwards it. */
function filePart(source: BinarySource, fallbackType: string): { type: "file"; data: string | URL; mediaType: string } {
  return source.kind === "url" ? { type: "file", data: new URL(source.url), mediaType: fallbackType } : { type: "file", data: source.data, mediaType: source.mediaType ?? fallbackType };
}

/**
 * An assistant message's content: the parts the provider streamed, in order, each with its metadata as
 * `providerOptions`, the tool calls with the inputs the engine ran; a message from elsewhere is its text and calls.
 */
export function assistantContent(message: AssistantMessage, ids: ReadonlyMap<string, string>): AssistantContent {
  const calls = message.toolCalls ?? [];
  const stored = storedParts(message.providerMetadata);
  if (stored === undefined) {
    return [...(message.content !== "" ? [{ type: "text" as const, text: message.content }] : []), ...calls.map((call) => toolCallPart(call, ids))];
  }
  const unsent = [...calls];
  const content: AssistantContent = [];
  for (const part of stored) {
    if (part.type === "tool-call") {
      const at = unsent.findIndex((call) => call.providerId === part.toolCallId);
      const call = unsent.splice(at >= 0 ? at : 0, 1)[0];
      if (call !== undefined) content.push(toolCallPart(call, ids));
    } else {
      content.push(storedPart(part));
    }
  }
  for (const call of unsent) content.push(toolCallPart(call, ids));
  return content;
}

function storedPart(part: Exclude<StoredPart, { type: "tool-call" }>): AssistantContent[number] {
  const options = part.providerOptions !== undefined ? { providerOptions: part.providerOptions as unknown as ProviderOptions } : {};
  if (part.type === "provider-tool-call") {
    return { type: "tool-call", toolCallId: part.toolCallId, toolName: part.toolName, input: part.input, providerExecuted: true, ...options };
  }
  if (part.type === "provider-tool-result") {
    return { type: "tool-result", toolCallId: part.toolCallId, toolName: part.toolName, output: part.output as LanguageModelV3ToolResultPart["output"], ...options };
  }
  return part.type === "text" ? { type: "text", text: part.text, ...options } : { type: "reasoning", text: part.text, ...options };
}

export function toolCallPart(call: AssistantToolCall, ids: ReadonlyMap<string, string>): AssistantContent[number] {
  const metadata = call.providerMetadata;
  return {
    type: "tool-call",
    toolCallId: ids.get(call.id) ?? call.id,
    toolName: call.name,
    input: toolInputObject(call),
    ...(metadata !== undefined && Object.keys(metadata).length > 0 ? { providerOptions: metadata as unknown as ProviderOptions } : {}),
  };
}

/** A result as the specification's tool-result part: text, or error text when the tool failed or the result is missing. */
export function toolResult(call: AssistantToolCall, ids: ReadonlyMap<string, string>, result: ToolMessage | undefined): LanguageModelV3ToolResultPart {
  const output: LanguageModelV3ToolResultPart["output"] =
    result === undefined
      ? { type: "error-text", value: MISSING_RESULT_TEXT }
      : result.isError
        ? { type: "error-text", value: result.content }
        : result.parts?.some((p) => p.type !== "text")
          ? { type: "content", value: result.parts.map(resultContent) }
          : { type: "text", value: result.content };
  return { type: "tool-result", toolCallId: ids.get(call.id) ?? call.id, toolName: call.name, output };
}

type ResultContent = Extract<LanguageModelV3ToolResultPart["output"], { type: "content" }>["value"][number];

/** One part of a tool's result with an image: text, image data or an image URL, a file's data or URL. */
function resultContent(part: ContentPart): ResultContent {
  if (part.type === "text") return { type: "text", text: part.text };
  const source = binarySource(part.type === "image" ? part.image : part.data, part.mediaType);
  if (part.type === "image") return source.kind === "url" ? { type: "image-url", url: source.url } : { type: "image-data", data: source.data, mediaType: source.mediaType ?? "image/*" };
  return source.kind === "url"
    ? { type: "file-url", url: source.url, mediaType: part.mediaType }
    : { type: "file-data", data: source.data, mediaType: source.mediaType ?? part.mediaType, ...(part.filename ? { filename: part.filename } : {}) };
}

export function toTool(tool: ToolSpec): LanguageModelV3FunctionTool {
  return { type: "function", name: tool.name, description: tool.description, inputSchema: tool.inputSchema as LanguageModelV3FunctionTool["inputSchema"] };
}
