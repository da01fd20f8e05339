import type { ModelResponse, RawToolCall, Usage } from "../model.js";
import { mapStopReason } from "./stop-reason.js";
import { addWireUsage, readWireUsage, toUsage, type WireUsage } from "./wire-usage.js";
import { isWireObject, type AnthropicMessageMetadata, type WireBlock, type WireObject } from "./wire-types.js";

/** A piece of output to stream to the caller as it arrives. */
export type StreamDelta = { type: "text_delta"; text: string } | { type: "thinking_delta"; text: string };

/** A content block as it streams in: the block, and the tool input's JSON text so far. */
interface OpenBlock {
  block: WireBlock;
  json: string;
}

/** What earlier segments of the same turn produced, when the API paused it (`pause_turn`) and it was continued. */
export interface EarlierSegments {
  blocks: WireBlock[];
  usage: WireUsage;
}

/**
 * Accumulates the Messages API's stream events (message_start, content_block_start/delta/stop, message_delta,
 * message_stop) into a ModelResponse: text and thinking streamed out as deltas, tool inputs gathered from
 * `input_json_delta`, thinking signatures from `signature_delta`, every block kept in order so it can be sent back
 * unchanged, and usage (cache reads and writes included) from message_start and message_delta.
 */
export class StreamAccumulator {
  private readonly blocks = new Map<number, OpenBlock>();
  private usage: WireUsage = {};
  private stopReason: string | undefined;
  private stopped = false;
  private eventCount = 0;

  constructor(private readonly earlier: EarlierSegments = { blocks: [], usage: {} }) {}

  /** Events read so far. */
  get events(): number {
    return this.eventCount;
  }

  /** Whether `message_stop` arrived: the response is complete. */
  get complete(): boolean {
    return this.stopped;
  }

  /** The stop reason the API gave (`end_turn`, `tool_use`, `pause_turn`…), once message_delta said it. */
  get rawStopReason(): string | undefined {
    return this.stopReason;
  }

  /** Reads one stream event and returns the deltas to stream out. */
  add(event: unknown): StreamDelta[] {
    if (!isWireObject(event)) return [];
    this.eventCount++;
    switch (event.type) {
      case "message_start":
        if (isWireObject(event.message)) this.takeUsage(event.message.usage);
        return [];
      case "content_block_start":
        this.start(event);
        return [];
      case "content_block_delta":
        return this.delta(event);
      case "content_block_stop":
        this.stop(event);
        return [];
      case "message_delta":
        if (isWireObject(event.delta) && typeof event.delta.stop_reason === "string") this.stopReason = event.delta.stop_reason;
        this.takeUsage(event.usage);
        return [];
      case "message_stop":
        this.stopped = true;
        return [];
      default:
        // ping, and event types newer than this code: nothing to keep.
        return [];
    }
  }

  private start(event: WireObject): void {
    if (typeof event.index !== "number" || !isWireObject(event.content_block) || typeof event.content_block.type !== "string") return;
    this.blocks.set(event.index, { block: { ...(event.content_block as WireBlock) }, json: "" });
  }

  private delta(event: WireObject): StreamDelta[] {
    const open = typeof event.index === "number" ? this.blocks.get(event.index) : undefined;
    const delta = event.delta;
    if (open === undefined || !isWireObject(delta)) return [];
    const { block } = open;
    switch (delta.type) {
      case "text_delta":
        if (typeof delta.text !== "string" || delta.text === "") return [];
        block.text = (typeof block.text === "string" ? block.text : "") + delta.text;
        return [{ type: "text_delta", text: delta.text }];
      case "thinking_delta":
        if (typeof delta.thinking !== "string" || delta.thinking === "") return [];
        block.thinking = (typeof block.thinking === "string" ? block.thinking : "") + delta.thinking;
        return [{ type: "thinking_delta", text: delta.thinking }];
      case "signature_delta":
        if (typeof delta.signature === "string") block.signature = (typeof block.signature === "string" ? block.signature : "") + delta.signature;
        return [];
      case "input_json_delta":
        if (typeof delta.partial_json === "string") open.json += delta.partial_json;
        return [];
      case "citations_delta":
        if (delta.citation !== undefined) block.citations = [...(Array.isArray(block.citations) ? block.citations : []), delta.citation];
        return [];
      default:
        return [];
    }
  }

  /** A finished block of a server tool (`server_tool_use`) keeps its input as an object, as it must go back. */
  private stop(event: WireObject): void {
    const open = typeof event.index === "number" ? this.blocks.get(event.index) : undefined;
    if (open === undefined || open.block.type === "tool_use" || open.json.trim() === "") return;
    try {
      open.block.input = JSON.parse(open.json) as unknown;
    } catch {
      // Left as it started; the API would refuse a half input anyway, and the turn is over.
    }
  }

  private takeUsage(value: unknown): void {
    const usage = readWireUsage(value);
    if (usage !== undefined) this.usage = { ...this.usage, ...usage };
  }

  /** Whether anything at all was produced (text, thinking or tool calls), in this segment or an earlier one. */
  get hasOutput(): boolean {
    return this.earlier.blocks.length > 0 || this.blocks.size > 0;
  }

  /** Every block so far, in order, complete (tool inputs included): what a continued turn sends back. */
  allBlocks(): WireBlock[] {
    return this.ordered().map(({ block }) => block);
  }

  /** Usage of this segment and the earlier ones, summed. */
  totalUsage(): WireUsage {
    return addWireUsage(this.earlier.usage, this.usage);
  }

  /** The response so far; after message_stop, the response. */
  response(): ModelResponse {
    const toolCalls: RawToolCall[] = [];
    const kept: WireBlock[] = [];
    let text = "";
    let thinking = "";
    for (const { block, json } of this.ordered()) {
      if (block.type === "text" && typeof block.text === "string") text += block.text;
      else if (block.type === "thinking" && typeof block.thinking === "string") thinking += block.thinking;
      if (block.type === "tool_use" && typeof block.name === "string") {
        toolCalls.push(toRawCall(block, json));
        // The engine keeps the call's input itself (and runs that one): the block keeps its place, not a second copy.
        const { input: _input, ...place } = block;
        kept.push(place as WireBlock);
      } else {
        kept.push(block);
      }
    }
    const metadata: AnthropicMessageMetadata = { content: kept, ...(this.stopReason !== undefined ? { stopReason: this.stopReason } : {}) };
    const usage: Usage | undefined = toUsage(this.totalUsage());
    return {
      text,
      toolCalls,
      finishReason: mapStopReason(this.stopReason, toolCalls.length > 0),
      ...(usage !== undefined ? { usage } : {}),
      ...(thinking !== "" ? { thinking } : {}),
      providerMetadata: { anthropic: metadata },
    };
  }

  /** The earlier segments' blocks, then this one's by index, each finished, with a tool call's streamed JSON text. */
  private ordered(): { block: WireBlock; json?: string }[] {
    const current = [...this.blocks.entries()].sort(([a], [b]) => a - b).map(([, open]) => ({ block: finished(open), json: open.json }));
    return [...this.earlier.blocks.map((block) => ({ block })), ...current];
  }
}

/** A block as it ended: a tool call's input is the streamed JSON when it parses, the start's input otherwise. */
function finished(open: OpenBlock): WireBlock {
  if (open.block.type !== "tool_use" || open.json.trim() === "") return open.block;
  try {
    return { ...open.block, input: JSON.parse(open.json) as unknown };
  } catch {
    return open.block;
  }
}

/** The call as the engine parses it: the argument text as streamed (it may not be JSON), or the block's input. */
function toRawCall(block: WireBlock, json: string | undefined): RawToolCall {
  const args = json !== undefined && json.trim() !== "" ? json : isWireObject(block.input) ? block.input : {};
  return { ...(typeof block.id === "string" ? { providerId: block.id } : {}), name: block.name as string, arguments: args };
}
