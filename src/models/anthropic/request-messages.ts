import { AgentError } from "../../errors/agent-error.js";
import { binarySource, type BinarySource, type ContentPart, type FilePart } from "../content.js";
import type { AssistantMessage, AssistantToolCall, Message, ToolMessage, UserMessage } from "../messages.js";
import { mapToolCallIds } from "../openai/index.js";
import { toolInputObject } from "../tool-input.js";
import { findResults, MISSING_RESULT_TEXT, orphanResultText } from "../tool-results.js";
import { storedBlocks, type WireBlock, type WireMessage, type WireObject } from "./wire-types.js";

export { MISSING_RESULT_TEXT } from "../tool-results.js";
/** The API refuses empty text blocks; an empty tool result or user turn is said in words. */
export const EMPTY_RESULT_TEXT = "(no output)";

/** The system prompt and the conversation in the Messages API's shape. */
export interface WireConversation {
  system: WireBlock[];
  messages: WireMessage[];
}

/**
 * Maps statecraft's conversation to Messages API turns the API accepts: the leading system messages become `system`;
 * each assistant turn's tool results go, all of them and first, into the user turn after it (a missing one filled in
 * as an error); turns of the same role are merged (the API wants them alternating); a tool result with no call
 * before it is kept as user text rather than dropped. Each kind of content has its own function below, so that new
 * kinds (images) slot in beside them.
 */
export function toWireConversation(messages: readonly Message[]): WireConversation {
  const wireIds = wireToolIds(messages);
  const system: WireBlock[] = [];
  const turns: WireMessage[] = [];
  const consumed = new Set<number>();
  let leading = true;
  for (let i = 0; i < messages.length; i++) {
    if (consumed.has(i)) continue;
    const message = messages[i];
    if (message.role === "system" && leading) {
      if (message.content !== "") system.push(textBlock(message.content));
      continue;
    }
    leading = false;
    switch (message.role) {
      case "system":
        // A system message inside the conversation (after it started) is an instruction the model reads in turn.
        push(turns, "user", [textBlock(message.content || EMPTY_RESULT_TEXT)]);
        break;
      case "user":
        push(turns, "user", userBlocks(message));
        break;
      case "assistant": {
        const blocks = assistantBlocks(message, wireIds);
        const calls = message.toolCalls ?? [];
        if (blocks.length > 0) push(turns, "assistant", blocks);
        if (calls.length === 0) break;
        const results = findResults(messages, i, calls, consumed);
        push(
          turns,
          "user",
          calls.map((call) => toolResultBlock(wireIds.get(call.id) ?? call.id, results.get(call.id))),
        );
        break;
      }
      case "tool":
        push(turns, "user", [orphanResultBlock(message)]);
        break;
    }
  }
  return { system, messages: turns };
}

/** A user turn's content: its text, or its parts, one block per part. */
export function userBlocks(message: UserMessage): WireBlock[] {
  if (typeof message.content === "string") return [textBlock(message.content === "" ? EMPTY_RESULT_TEXT : message.content)];
  const blocks = message.content.map(partBlock);
  return blocks.length > 0 ? blocks : [textBlock(EMPTY_RESULT_TEXT)];
}

/** One content part as a Messages API block: text, an `image` block, or a `document` (PDF, plain text). */
export function partBlock(part: ContentPart): WireBlock {
  switch (part.type) {
    case "text":
      return textBlock(part.text);
    case "image":
      return { type: "image", source: imageSource(binarySource(part.image, part.mediaType)) };
    case "file":
      return documentBlock(part);
  }
}

function imageSource(source: BinarySource): WireObject {
  if (source.kind === "url") return { type: "url", url: source.url };
  if (!source.mediaType) throw new AgentError("INVALID_OPTIONS", 'an image part given as base64 data needs its mediaType (e.g. "image/png")');
  return { type: "base64", media_type: source.mediaType, data: source.data };
}

/** The Messages API takes PDFs (by URL or base64) and plain text as documents; other files are refused by name. */
function documentBlock(part: FilePart): WireBlock {
  const source = binarySource(part.data, part.mediaType);
  const title = part.filename ? { title: part.filename } : {};
  if (source.kind === "url") return { type: "document", source: { type: "url", url: source.url }, ...title };
  const mediaType = source.mediaType ?? part.mediaType;
  if (mediaType === "application/pdf") return { type: "document", source: { type: "base64", media_type: mediaType, data: source.data }, ...title };
  if (mediaType.startsWith("text/")) return { type: "document", source: { type: "text", media_type: "text/plain", data: Buffer.from(source.data, "base64").toString("utf8") }, ...title };
  throw new AgentError("INVALID_OPTIONS", `a file part of type ${mediaType}${part.filename ? ` (${part.filename})` : ""} can't be sent to Anthropic: it takes PDF and text files as documents, and images as image parts`);
}

/**
 * An assistant turn's content. A message this provider made goes back block for block as the API sent it (thinking
 * and redacted thinking with their signatures, server tool blocks), its text unchanged and its tool calls with the
 * inputs the engine ran; any other assistant message is its text and then its tool calls.
 */
export function assistantBlocks(message: AssistantMessage, wireIds: ReadonlyMap<string, string>): WireBlock[] {
  const calls = message.toolCalls ?? [];
  const stored = storedBlocks(message.providerMetadata);
  if (stored === undefined) {
    return [...(message.content !== "" ? [textBlock(message.content)] : []), ...calls.map((call) => toolUseBlock(call, wireIds))];
  }
  const unsent = [...calls];
  const blocks: WireBlock[] = [];
  for (const block of stored) {
    if (block.type === "tool_use") {
      const at = unsent.findIndex((call) => call.providerId === block.id);
      const call = unsent.splice(at >= 0 ? at : 0, 1)[0];
      if (call !== undefined) blocks.push(toolUseBlock(call, wireIds));
    } else if (block.type === "text") {
      if (typeof block.text === "string" && block.text !== "") blocks.push(block);
    } else if (block.type === "thinking") {
      // A thinking block cut off before its signature arrived can't be sent back: the API checks every signature.
      if (typeof block.signature === "string" && block.signature !== "") blocks.push(block);
    } else {
      blocks.push(block);
    }
  }
  for (const call of unsent) blocks.push(toolUseBlock(call, wireIds));
  return blocks;
}

export function textBlock(text: string): WireBlock {
  return { type: "text", text };
}

export function toolUseBlock(call: AssistantToolCall, wireIds: ReadonlyMap<string, string>): WireBlock {
  return { type: "tool_use", id: wireIds.get(call.id) ?? call.id, name: call.name, input: toolInputObject(call) };
}

/** The result of one call; a call whose result is missing is told so, as an error. */
export function toolResultBlock(toolUseId: string, result: ToolMessage | undefined): WireBlock {
  if (result === undefined) return { type: "tool_result", tool_use_id: toolUseId, content: MISSING_RESULT_TEXT, is_error: true };
  return {
    type: "tool_result",
    tool_use_id: toolUseId,
    // A result with an image goes as blocks (text and images); a text result as its string.
    content: result.parts?.some((p) => p.type !== "text") ? result.parts.map(partBlock) : result.content === "" ? EMPTY_RESULT_TEXT : result.content,
    ...(result.isError ? { is_error: true } : {}),
  };
}

/** A tool result no assistant call before it claimed: what the tool said is kept, as context. */
function orphanResultBlock(message: ToolMessage): WireBlock {
  return textBlock(orphanResultText(message, message.content || EMPTY_RESULT_TEXT));
}

/** Tool-use ids the API accepts (letters, digits, `_` and `-`), consistent between a call and its result. */
function wireToolIds(messages: readonly Message[]): Map<string, string> {
  const ids = mapToolCallIds(messages);
  for (const [engineId, wireId] of ids) {
    if (!/^[A-Za-z0-9_-]+$/.test(wireId)) ids.set(engineId, /^[A-Za-z0-9_-]+$/.test(engineId) ? engineId : engineId.replace(/[^A-Za-z0-9_-]/g, "_"));
  }
  return ids;
}

/** Appends a turn, merging it into the last one when the role is the same (tool results stay first in a user turn). */
function push(turns: WireMessage[], role: WireMessage["role"], blocks: WireBlock[]): void {
  if (blocks.length === 0) return;
  const last = turns[turns.length - 1];
  if (last !== undefined && last.role === role) {
    last.content = [...last.content, ...blocks];
    return;
  }
  turns.push({ role, content: blocks });
}
