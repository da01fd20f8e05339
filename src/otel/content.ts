import { binarySource, type ContentPart } from "../models/content.js";
import type { Message } from "../models/messages.js";
import type { ModelResponse } from "../models/model.js";
import { redactLine } from "../record/redact.js";

// Messages as the GenAI conventions' JSON schemas give them (gen_ai.input.messages, gen_ai.output.messages,
// gen_ai.system_instructions): a role and a list of typed parts. Each attribute is serialised once and redacted as
// the trace's lines are (the same secrets, the same patterns).

type Part =
  | { type: "text"; content: string }
  | { type: "reasoning"; content: string }
  | { type: "tool_call"; id: string; name: string; arguments: unknown }
  | { type: "tool_call_response"; id: string; response: string }
  | { type: "uri"; modality: string; mime_type?: string; uri: string }
  | { type: "blob"; modality: string; mime_type?: string; content: string };

interface ChatMessage {
  role: "user" | "assistant" | "tool";
  parts: Part[];
  name?: string;
  finish_reason?: string;
}

/**
 * A content part as the conventions' parts: text, a `uri` part for a URL, a `blob` part for bytes — whose content is
 * left out (its size said instead): a span attribute is no place for megabytes of base64.
 */
function contentPart(part: ContentPart): Part {
  if (part.type === "text") return { type: "text", content: part.text };
  const source = binarySource(part.type === "image" ? part.image : part.data, part.mediaType);
  const modality = part.type === "image" ? "image" : "file";
  const mime = source.kind === "base64" ? (source.mediaType ?? part.mediaType) : part.mediaType;
  const mimeType = mime ? { mime_type: mime } : {};
  if (source.kind === "url") return { type: "uri", modality, ...mimeType, uri: source.url };
  return { type: "blob", modality, ...mimeType, content: `[${Math.floor((source.data.length * 3) / 4)} bytes not recorded]` };
}

function partsOf(message: Exclude<Message, { role: "system" }>): ChatMessage {
  switch (message.role) {
    case "user":
      return { role: "user", parts: typeof message.content === "string" ? [{ type: "text", content: message.content }] : message.content.map(contentPart) };
    case "tool":
      return { role: "tool", parts: [{ type: "tool_call_response", id: message.toolCallId, response: message.content }] };
    case "assistant": {
      const parts: Part[] = [];
      if (message.thinking) parts.push({ type: "reasoning", content: message.thinking });
      if (message.content) parts.push({ type: "text", content: message.content });
      for (const call of message.toolCalls ?? []) parts.push({ type: "tool_call", id: call.id, name: call.name, arguments: call.input });
      return { role: "assistant", parts };
    }
  }
}

/** The JSON text of a value, with the secrets redacted. */
export function redactedJson(value: unknown, secrets: readonly string[]): string {
  return redactLine(JSON.stringify(value) ?? "null", secrets);
}

/** gen_ai.input.messages: the conversation sent (the system prompt goes to gen_ai.system_instructions). */
export function inputMessages(messages: Iterable<Message>, secrets: readonly string[]): string {
  const out: ChatMessage[] = [];
  for (const message of messages) if (message.role !== "system") out.push(partsOf(message));
  return redactedJson(out, secrets);
}

/** gen_ai.system_instructions, or undefined without a system prompt. */
export function systemInstructions(messages: Iterable<Message>, secrets: readonly string[]): string | undefined {
  for (const message of messages) if (message.role === "system") return redactedJson([{ type: "text", content: message.content }], secrets);
  return undefined;
}

/** gen_ai.output.messages of one model call: its answer, reasoning and tool calls, and why it stopped. */
export function outputMessages(response: ModelResponse, callIds: readonly string[], secrets: readonly string[]): string {
  const parts: Part[] = [];
  if (response.thinking) parts.push({ type: "reasoning", content: response.thinking });
  if (response.text) parts.push({ type: "text", content: response.text });
  response.toolCalls.forEach((call, i) => {
    let args: unknown = call.arguments;
    if (typeof args === "string") {
      try {
        args = JSON.parse(args);
      } catch {
        // Kept as the text the model sent.
      }
    }
    parts.push({ type: "tool_call", id: callIds[i] ?? call.providerId ?? "", name: call.name, arguments: args });
  });
  return redactedJson([{ role: "assistant", parts, finish_reason: response.finishReason }], secrets);
}

/** gen_ai.output.messages of a whole run: its final text. */
export function finalOutput(text: string, reason: string, secrets: readonly string[]): string {
  return redactedJson([{ role: "assistant", parts: text ? [{ type: "text", content: text }] : [], finish_reason: reason }], secrets);
}
