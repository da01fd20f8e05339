import { AgentError } from "../errors/agent-error.js";
import type { BinaryInput, ContentPart, ContentPartInput, UserContent } from "./content.js";
import { sniffImageType } from "./media-type.js";
import type { AssistantMessage, Message, ToolMessage } from "./messages.js";

/** A user message as `query()` takes it: text, or parts whose images and files may be bytes, base64 text or URLs. */
export interface UserMessageInput {
  role: "user";
  content: string | readonly ContentPartInput[];
}

/** A tool result as `query()` takes it in a message list (its parts' binary data as for a user message). */
export interface ToolMessageInput extends Omit<ToolMessage, "parts"> {
  parts?: readonly ContentPartInput[];
}

/** A message of a conversation to start from: the user's, the assistant's (with its tool calls), a tool's result. */
export type InputMessage = UserMessageInput | AssistantMessage | ToolMessageInput;

/**
 * What `query()` runs on: a prompt, a user message (text and images or files), or a conversation to start from (its
 * last message, when it is the user's, is the run's request; otherwise the run goes on from the conversation as is).
 */
export type QueryInput = string | UserMessageInput | readonly InputMessage[];

const fail = (message: string) => new AgentError("INVALID_OPTIONS", `query(input, options): ${message}`);

/** The run's request and the conversation before it, binary data as base64 (the engine's messages are JSON values). */
export function normalizeInput(input: QueryInput): { userInput: UserContent; history?: Message[] } {
  if (typeof input === "string") return { userInput: input };
  if (Array.isArray(input)) {
    const messages = (input as readonly InputMessage[]).map((message, i) => normalizeMessage(message, `input[${i}]`));
    const last = messages.at(-1);
    if (last?.role === "user") return { userInput: last.content, history: messages.slice(0, -1) };
    return { userInput: "", history: messages };
  }
  if (input !== null && typeof input === "object" && (input as { role?: unknown }).role === "user") {
    return { userInput: normalizeMessage(input as UserMessageInput, "input").content as UserContent };
  }
  throw fail(`input must be a string, a user message { role: "user", content } or a list of messages, got ${describe(input)}`);
}

function normalizeMessage(message: InputMessage, where: string): Message {
  if (message === null || typeof message !== "object") throw fail(`${where} must be a message object, got ${describe(message)}`);
  switch (message.role) {
    case "user":
      return { role: "user", content: userContent(message.content, `${where}.content`) };
    case "assistant": {
      if (typeof message.content !== "string") throw fail(`${where}.content must be a string (the assistant's text)`);
      for (const [j, call] of (message.toolCalls ?? []).entries()) {
        if (!call || typeof call.id !== "string" || typeof call.name !== "string") throw fail(`${where}.toolCalls[${j}] needs an id and a name`);
      }
      return message;
    }
    case "tool": {
      if (typeof message.toolCallId !== "string" || typeof message.name !== "string" || typeof message.content !== "string") {
        throw fail(`${where}: a tool message needs toolCallId, name and content (strings) and isError`);
      }
      const { parts, ...rest } = message;
      return { ...rest, isError: message.isError === true, ...(parts ? { parts: contentParts(parts, `${where}.parts`) } : {}) };
    }
    default:
      throw fail(`${where}.role must be "user", "assistant" or "tool", got ${describe((message as { role?: unknown }).role)}`);
  }
}

function userContent(content: UserMessageInput["content"], where: string): UserContent {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw fail(`${where} must be a string or a list of parts, got ${describe(content)}`);
  return contentParts(content as readonly ContentPartInput[], where);
}

/** Parts with their binary data as base64 text (or a URL); an image's type is read from its bytes when not given. */
export function contentParts(parts: readonly ContentPartInput[], where: string): ContentPart[] {
  return parts.map((part, i): ContentPart => {
    const at = `${where}[${i}]`;
    switch (part?.type) {
      case "text":
        if (typeof part.text !== "string") throw fail(`${at}.text must be a string`);
        return { type: "text", text: part.text };
      case "image": {
        const { data, mediaType } = binary(part.image, part.mediaType, `${at}.image`);
        if (mediaType === undefined && !isUrl(data)) throw fail(`${at}: give the image's mediaType ("image/png", "image/jpeg", "image/gif" or "image/webp"); its bytes are not one of those`);
        return { type: "image", image: data, ...(mediaType ? { mediaType } : {}) };
      }
      case "file": {
        if (typeof part.mediaType !== "string" || part.mediaType === "") throw fail(`${at}.mediaType must be the file's type, e.g. "application/pdf"`);
        const { data } = binary(part.data, part.mediaType, `${at}.data`);
        return { type: "file", data, mediaType: part.mediaType, ...(part.filename !== undefined ? { filename: String(part.filename) } : {}) };
      }
      default:
        throw fail(`${at}.type must be "text", "image" or "file", got ${describe((part as { type?: unknown } | null)?.type)}`);
    }
  });
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function binary(value: BinaryInput, mediaType: string | undefined, where: string): { data: string; mediaType?: string } {
  if (value instanceof Uint8Array) {
    return { data: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64"), ...typeOf(mediaType ?? sniffImageType(value)) };
  }
  const text = value instanceof URL ? value.href : value;
  if (typeof text !== "string") throw fail(`${where} must be a Uint8Array, base64 text or a URL, got ${describe(value)}`);
  const dataUrl = /^data:([^;,]+)?(;base64)?,(.*)$/s.exec(text);
  if (dataUrl) {
    if (!dataUrl[2]) throw fail(`${where}: a data: URL must be base64 (data:<type>;base64,...)`);
    return { data: dataUrl[3], ...typeOf(mediaType ?? dataUrl[1]) };
  }
  if (/^https?:/i.test(text)) return { data: text, ...typeOf(mediaType) };
  if (/^[a-z][a-z0-9+.-]*:/i.test(text) && !BASE64.test(text)) throw fail(`${where}: only http(s) and data: URLs can be sent to a model, got ${text.split(":")[0]}: (read the file and pass its bytes)`);
  const compact = text.replace(/\s+/g, "");
  if (!BASE64.test(compact)) throw fail(`${where} is neither base64 data nor an http(s) or data: URL`);
  return { data: compact, ...typeOf(mediaType ?? sniffImageType(Buffer.from(compact.slice(0, 24), "base64"))) };
}

const typeOf = (mediaType: string | undefined) => (mediaType ? { mediaType } : {});
const isUrl = (value: string) => /^https?:/i.test(value);

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "string" ? JSON.stringify(value) : typeof value;
}

/** A run's request (text or parts) as `query()` input again: a resumed or forked run starts from the same request. */
export function userInputOf(content: UserContent): string | UserMessageInput {
  return typeof content === "string" ? content : { role: "user", content };
}
