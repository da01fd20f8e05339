/**
 * The Chat Completions wire shapes statecraft sends, and a loose reading of what servers send back. Servers differ
 * (missing keys, nulls, extra fields), so everything read is `unknown` until checked; see stream-accumulator.ts.
 */

export interface WireToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
  /** Provider extras echoed back as received (Gemini's `extra_content.google.thought_signature`). */
  [extra: string]: unknown;
}

/** A part of a user message's content (Chat Completions): text, an image by URL (or data URL), a file as data. */
export type WireContentPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string } }
  | { type: "file"; file: { file_data?: string; file_url?: string; filename?: string } };

export type WireMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | WireContentPart[] }
  | {
      role: "assistant";
      content: string | null;
      tool_calls?: WireToolCall[];
      /** Provider extras echoed back (Gemini's `thought_signature`, DeepSeek's `reasoning_content`). */
      [extra: string]: unknown;
    }
  | { role: "tool"; tool_call_id: string; content: string };

export interface WireTool {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** The body of `POST /chat/completions` as statecraft sends it. */
export interface WireRequestBody {
  model: string;
  messages: WireMessage[];
  stream: true;
  stream_options: { include_usage: true };
  tools?: WireTool[];
  parallel_tool_calls?: boolean;
  response_format?: { type: "json_schema"; json_schema: { name: string; schema: Record<string, unknown>; strict: boolean } };
  temperature?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  [extra: string]: unknown;
}

/** A JSON object as parsed from the wire: keys are checked one by one before use. */
export type WireObject = Record<string, unknown>;

export function isWireObject(value: unknown): value is WireObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
