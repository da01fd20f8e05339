import type { Message } from "./messages.js";

/** Token usage as a provider reports it. Totals for a run are summed per model call. */
export interface Usage {
  input: number;
  output: number;
  /** Input tokens served from a prompt cache, where the provider says. */
  cached?: number;
  /** Output tokens spent on reasoning, where the provider says. */
  reasoning?: number;
  /** Input tokens written to a prompt cache (counted in `input` too), where the provider says (Anthropic). */
  cacheWrite?: number;
}

/** Why the model stopped. Unknown values from a server are kept as they are. */
export type FinishReason = "stop" | "tool_calls" | "length" | "content_filter" | "error" | (string & {});

/** A tool offered to the model. */
export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** A tool call as the model produced it, before the engine parses it. */
export interface RawToolCall {
  /** The server's id, if any; the engine assigns its own. */
  providerId?: string;
  name: string;
  /** The argument text as streamed (may be invalid JSON), or an object when a server sent one. */
  arguments: string | Record<string, unknown>;
  providerMetadata?: Record<string, unknown>;
}

/** What one model call produced. */
export interface ModelResponse {
  text: string;
  toolCalls: RawToolCall[];
  finishReason: FinishReason;
  usage?: Usage;
  thinking?: string;
  providerMetadata?: Record<string, unknown>;
}

/**
 * The shape the run's final answer must have (`query(prompt, { output })`). A provider asks for it natively where it
 * can (OpenAI-compatible `response_format: { type: "json_schema" }`, a final-answer tool, …) or adds
 * `outputInstructions(output)` to the request; the engine checks the answer in `validate_output` either way, and asks
 * again with the errors when it does not match.
 */
export interface OutputRequest {
  /** The JSON Schema of the answer: an object, an array or a primitive. */
  schema: Record<string, unknown>;
  /** A name for the schema, for providers that take one (letters, digits, `_`, `-`). */
  name: string;
  /**
   * Whether the schema meets strict structured-output rules (every object closed with `additionalProperties: false`
   * and every property required), so a provider may ask the server to keep to it exactly.
   */
  strict: boolean;
}

export interface ModelRequest {
  /** The conversation to send, the system prompt first when there is one. */
  messages: readonly Message[];
  tools: readonly ToolSpec[];
  /** Set when the run wants its final answer in a shape: the answer is JSON text matching `output.schema`. */
  output?: OutputRequest;
  sessionId: string;
  /** Model calls made before this one in the run (0 for the first). */
  turn: number;
}

/** Events a model streams while it works; the last one is always `response`. */
export type ModelStreamEvent =
  | { type: "text_delta"; text: string }
  | { type: "thinking_delta"; text: string }
  | { type: "retry"; attempt: number; delayMs: number; error: { code: string; message: string } }
  | { type: "response"; response: ModelResponse };

export interface ModelCallOptions {
  /** Fires when the run is aborted, times out, or leaves the state that made the call. */
  signal: AbortSignal;
}

/**
 * A provider-agnostic model. `stream` must honour the signal (stop promptly, reject with an abort error), stream text
 * as it arrives and end with exactly one `response` event; a failed request throws an `AgentError` (code
 * `MODEL_ERROR`, `CONTEXT_OVERFLOW`…, with `status` and `retryable`).
 */
export interface Model {
  /** A name for traces and logs, e.g. "gpt-4o-mini" or "script". */
  readonly name: string;
  /**
   * Who serves it, as the OpenTelemetry GenAI conventions name providers (`gen_ai.provider.name`): "openai",
   * "anthropic", … An OpenAI-compatible server is "openai". Also the wire it speaks, for a model `statecraft` can build
   * again: recorded with a durable run beside `baseUrl`, so that `statecraft resume` talks to the recorded server the
   * same way.
   */
  readonly provider?: string;
  /** The context window in tokens, when known. */
  readonly contextWindow?: number;
  /**
   * The server it talks to, when it has one (an OpenAI-compatible base URL). Recorded with a durable run, so that
   * `statecraft resume` can talk to the same server.
   */
  readonly baseUrl?: string;
  /**
   * Whether its requests carry an API key. Recorded with a durable run: `statecraft resume` sends the user's key to the
   * recorded server only if the run had sent one to it.
   */
  readonly sendsKey?: boolean;
  stream(request: ModelRequest, options: ModelCallOptions): AsyncIterable<ModelStreamEvent>;
}
