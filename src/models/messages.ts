import type { ContentPart, UserContent } from "./content.js";

/**
 * The conversation as statecraft stores it: provider-agnostic messages. Providers map these to their wire format.
 */

/**
 * A tool call as the engine knows it: the id is the engine's own (never a server's "0" or ""). `Input` and `Name` are
 * the tool's when the run's tools are known to the compiler (events and hooks of `query({ tools: [...] })`); the input
 * is the one the tool's schema validated.
 */
export interface ToolCall<Input = unknown, Name extends string = string> {
  id: string;
  name: Name;
  input: Input;
  sessionId: string;
}

/** What a tool call produced, as the model will see it. */
export interface ToolResult {
  content: string;
  isError: boolean;
  /** The result's parts when the tool returned more than text (an image): its text parts joined are `content`. */
  parts?: ContentPart[];
  /** What the tool returned beside its text (an MCP tool's `structuredContent`): for the caller and the trace, never sent to the model. */
  details?: Record<string, unknown>;
}

/** A tool call as kept in an assistant message, with what a provider needs to send it back. */
export interface AssistantToolCall {
  id: string;
  name: string;
  /** The parsed input, or the raw argument text when it was not valid JSON. */
  input: unknown;
  /** The argument text exactly as the model sent it, when it differed from JSON.stringify(input) or did not parse. */
  rawArguments?: string;
  /** The server's own id for this call, when it sent one. */
  providerId?: string;
  /** Provider extras that must be echoed back (e.g. Gemini's thought_signature). */
  providerMetadata?: Record<string, unknown>;
}

export interface SystemMessage {
  role: "system";
  content: string;
}

export interface UserMessage {
  role: "user";
  content: UserContent;
}

export interface AssistantMessage {
  role: "assistant";
  content: string;
  toolCalls?: AssistantToolCall[];
  /** Reasoning text the model streamed, kept for the record (not sent back unless a provider needs it). */
  thinking?: string;
  /** True when the message was cut off by an abort, a timeout or an error before the model finished. */
  cutOff?: boolean;
  providerMetadata?: Record<string, unknown>;
}

export interface ToolMessage {
  role: "tool";
  toolCallId: string;
  name: string;
  /** The result's text; with `parts`, the text parts joined (for providers and readers that take text only). */
  content: string;
  /** The result's parts when it has more than text (an image a tool returned): providers that take them send these. */
  parts?: ContentPart[];
  isError: boolean;
}

export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;
