import type { ModelResponse, Usage } from "../model.js";
import { ServerErrorPayload } from "./server-error-payload.js";
import { normalizeFinishReason } from "./finish-reason.js";
import { ToolCallAssembler } from "./tool-call-assembler.js";
import { parseUsage } from "./wire-usage.js";
import { isWireObject, type WireObject } from "./wire-types.js";

/** A piece of output to stream to the caller as it arrives. */
export type StreamDelta = { type: "text_delta"; text: string } | { type: "thinking_delta"; text: string };

/** Response-level fields a server needs echoed back verbatim (Gemini). */
const MESSAGE_METADATA_FIELDS = ["thought_signature", "extra_content"] as const;

type ReasoningField = "reasoning_content" | "reasoning" | "reasoning_details";

/**
 * Accumulates raw Chat Completions chunks into a ModelResponse, tolerating every quirk in the openai-wire fixtures:
 * `choices: []` chunks, choices without `delta`, usage on any chunk (the last one wins, never summed), missing or
 * unknown finish reasons, reasoning under three names, refusals, and an `error` key inside a chunk.
 */
export class StreamAccumulator {
  private text = "";
  private thinking = "";
  private refusal = "";
  private finishReason: string | undefined;
  private usage: Usage | undefined;
  private reasoningField: ReasoningField | undefined;
  private readonly metadata: Record<string, unknown> = {};
  private readonly toolCalls = new ToolCallAssembler();
  private chunkCount = 0;

  /** Chunks read so far (including ones without choices). */
  get chunks(): number {
    return this.chunkCount;
  }

  /** Reads one streamed chunk and returns the deltas to stream out. Throws `ServerErrorPayload` for an error chunk. */
  addChunk(chunk: unknown): StreamDelta[] {
    if (!isWireObject(chunk)) return [];
    this.chunkCount++;
    if (chunk.error !== undefined && chunk.error !== null) throw new ServerErrorPayload(chunk.error);
    // vLLM streams errors as `{"object": "error", "message", "code"}`; others as `{"type": "error", ...}`.
    if (chunk.object === "error" || chunk.type === "error") throw new ServerErrorPayload(chunk);

    const deltas: StreamDelta[] = [];
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    for (const choice of choices) {
      if (!isWireObject(choice)) continue;
      // statecraft never asks for n > 1; other choices would only interleave.
      if (choice.index !== undefined && choice.index !== 0) continue;
      const delta = isWireObject(choice.delta) ? choice.delta : isWireObject(choice.message) ? choice.message : undefined;
      if (delta) deltas.push(...this.addDelta(delta));
      if (typeof choice.finish_reason === "string" && choice.finish_reason !== "") this.finishReason = choice.finish_reason;
      this.takeUsage(choice.usage);
    }
    this.takeUsage(chunk.usage);
    if (chunk.usage === undefined || chunk.usage === null) {
      const groq = isWireObject(chunk.x_groq) ? chunk.x_groq : undefined;
      if (groq) this.takeUsage(groq.usage);
    }
    return deltas;
  }

  /** Reads a whole non-streaming response body (a server that ignored `stream: true`) as a stream of one chunk. */
  addCompletion(body: unknown): StreamDelta[] {
    if (!isWireObject(body)) throw new ServerErrorPayload({ message: "the server answered with a body that is not a chat completion" });
    if (body.error !== undefined && body.error !== null) throw new ServerErrorPayload(body.error);
    const choices = Array.isArray(body.choices) ? body.choices : [];
    const asChunk: WireObject = {
      ...body,
      choices: choices.map((choice) => {
        if (!isWireObject(choice) || !isWireObject(choice.message)) return choice;
        const { message, ...rest } = choice;
        const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
        // Whole calls: each one's position is its index, whatever the server put there.
        const toolCalls = calls.map((call, position) => (isWireObject(call) ? { ...call, index: position } : call));
        return { ...rest, delta: { ...message, tool_calls: toolCalls } };
      }),
    };
    return this.addChunk(asChunk);
  }

  private addDelta(delta: WireObject): StreamDelta[] {
    const deltas: StreamDelta[] = [];

    const reasoning = this.reasoningText(delta);
    if (reasoning !== "") {
      this.thinking += reasoning;
      deltas.push({ type: "thinking_delta", text: reasoning });
    }

    const content = contentText(delta.content);
    if (content !== "") {
      this.text += content;
      deltas.push({ type: "text_delta", text: content });
    }

    // A refusal is what the model says instead of an answer: the user should see it as text.
    if (typeof delta.refusal === "string" && delta.refusal !== "") {
      this.refusal += delta.refusal;
      this.text += delta.refusal;
      deltas.push({ type: "text_delta", text: delta.refusal });
    }

    if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) this.toolCalls.add(call);

    for (const field of MESSAGE_METADATA_FIELDS) {
      if (delta[field] !== undefined && delta[field] !== null) this.metadata[field] = delta[field];
    }
    return deltas;
  }

  /** Reasoning arrives as `reasoning_content` (DeepSeek, xAI, Z.ai), `reasoning` (Groq, Ollama, vLLM) or `reasoning_details` (OpenRouter); OpenRouter sends the same text twice, so details count only alone. */
  private reasoningText(delta: WireObject): string {
    for (const field of ["reasoning_content", "reasoning"] as const) {
      const value = delta[field];
      if (typeof value === "string" && value !== "") {
        this.reasoningField ??= field;
        return value;
      }
    }
    if (Array.isArray(delta.reasoning_details)) {
      let text = "";
      for (const detail of delta.reasoning_details) {
        if (!isWireObject(detail)) continue;
        if (typeof detail.text === "string") text += detail.text;
        else if (typeof detail.summary === "string") text += detail.summary;
      }
      if (text !== "") this.reasoningField ??= "reasoning_details";
      return text;
    }
    return "";
  }

  private takeUsage(value: unknown): void {
    const usage = parseUsage(value);
    if (usage) this.usage = usage;
  }

  /** Whether anything at all was produced (text, reasoning or tool calls). */
  get hasOutput(): boolean {
    return this.text !== "" || this.thinking !== "" || this.toolCalls.count > 0;
  }

  /** The response so far; after the stream ended, the response. */
  response(): ModelResponse {
    const toolCalls = this.toolCalls.result();
    const metadata: Record<string, unknown> = { ...this.metadata };
    if (this.reasoningField) metadata.reasoningField = this.reasoningField;
    if (this.refusal !== "") metadata.refusal = this.refusal;
    return {
      text: this.text,
      toolCalls,
      finishReason: normalizeFinishReason(this.finishReason, toolCalls.length > 0),
      ...(this.usage ? { usage: this.usage } : {}),
      ...(this.thinking !== "" ? { thinking: this.thinking } : {}),
      ...(Object.keys(metadata).length > 0 ? { providerMetadata: metadata } : {}),
    };
  }
}

/** `content` is a string, null, or (some servers) an array of `{ type: "text", text }` parts. */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  let text = "";
  for (const part of content) {
    if (typeof part === "string") text += part;
    else if (isWireObject(part) && typeof part.text === "string") text += part.text;
  }
  return text;
}
