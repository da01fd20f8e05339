import type { FinishReason, ModelResponse, RawToolCall, Usage } from "../model.js";
import type { StoredPart } from "./stored-parts.js";

/** A piece of output to stream to the caller as it arrives. */
export type StreamDelta = { type: "text_delta"; text: string } | { type: "thinking_delta"; text: string };

type Metadata = Record<string, unknown>;
type Part = Record<string, unknown> & { type: string };

/** Thrown for an `error` stream part: the provider's error, for classification. */
export class StreamErrorPart extends Error {
  constructor(readonly error: unknown) {
    super(messageOf(error));
    this.name = "StreamErrorPart";
  }
}

interface OpenPart {
  kind: "text" | "reasoning";
  text: string;
  metadata?: Metadata;
}

/**
 * Reads the stream parts of an AI SDK language model (specification v3, and v2's) into a ModelResponse: text and
 * reasoning streamed out as deltas and kept as parts with their provider metadata, tool calls from `tool-call`
 * (whose input is the complete JSON text; the tool-input-start/delta/end parts before it only preview it), calls
 * the provider ran itself kept apart, usage and finish reason from `finish`. An `error` part throws.
 */
export class StreamReader {
  private readonly parts: (OpenPart | StoredPart)[] = [];
  private readonly open = new Map<string, OpenPart>();
  private readonly calls: RawToolCall[] = [];
  private usage: Usage | undefined;
  private finish: FinishReason | undefined;
  private finished = false;
  private responseMetadata: Metadata | undefined;

  get complete(): boolean {
    return this.finished;
  }

  get hasOutput(): boolean {
    return this.parts.length > 0;
  }

  add(value: unknown): StreamDelta[] {
    if (typeof value !== "object" || value === null || typeof (value as Part).type !== "string") return [];
    const part = value as Part;
    switch (part.type) {
      case "text-start":
      case "reasoning-start":
        this.startPart(part.type === "text-start" ? "text" : "reasoning", String(part.id), part.providerMetadata);
        return [];
      case "text-delta":
      case "reasoning-delta":
        return this.delta(part.type === "text-delta" ? "text" : "reasoning", part);
      case "text-end":
      case "reasoning-end": {
        const open = this.open.get(`${part.type === "text-end" ? "text" : "reasoning"}:${String(part.id)}`);
        if (open) open.metadata = merge(open.metadata, part.providerMetadata);
        return [];
      }
      case "tool-call":
        this.toolCall(part);
        return [];
      case "tool-result":
        this.parts.push({ type: "provider-tool-result", toolCallId: String(part.toolCallId), toolName: String(part.toolName), output: { type: "json", value: part.result ?? null }, ...options(part.providerMetadata) });
        return [];
      case "finish":
        this.finished = true;
        this.usage = readUsage(part.usage);
        this.finish = readFinishReason(part.finishReason, this.calls.length > 0);
        this.responseMetadata = merge(this.responseMetadata, part.providerMetadata);
        return [];
      case "error":
        throw new StreamErrorPart(part.error);
      default:
        // stream-start, response-metadata, tool-input-*, source, file, raw: nothing the response keeps.
        return [];
    }
  }

  private startPart(kind: OpenPart["kind"], id: string, metadata: unknown): OpenPart {
    const open: OpenPart = { kind, text: "", ...(isObject(metadata) ? { metadata: { ...metadata } } : {}) };
    this.open.set(`${kind}:${id}`, open);
    this.parts.push(open);
    return open;
  }

  private delta(kind: OpenPart["kind"], part: Part): StreamDelta[] {
    // v3 names it `delta`; v2 text parts had `text` before their ids existed.
    const text = typeof part.delta === "string" ? part.delta : typeof part.text === "string" ? part.text : "";
    const id = String(part.id ?? "");
    const open = this.open.get(`${kind}:${id}`) ?? this.startPart(kind, id, undefined);
    open.text += text;
    open.metadata = merge(open.metadata, part.providerMetadata);
    if (text === "") return [];
    return [{ type: kind === "text" ? "text_delta" : "thinking_delta", text }];
  }

  private toolCall(part: Part): void {
    const toolCallId = String(part.toolCallId);
    const toolName = String(part.toolName);
    const input = typeof part.input === "string" ? part.input : JSON.stringify(part.input ?? {});
    if (part.providerExecuted === true) {
      let parsed: unknown = input;
      try {
        parsed = JSON.parse(input) as unknown;
      } catch {
        // Kept as the text it was.
      }
      this.parts.push({ type: "provider-tool-call", toolCallId, toolName, input: parsed, ...options(part.providerMetadata) });
      return;
    }
    this.parts.push({ type: "tool-call", toolCallId, toolName });
    this.calls.push({ providerId: toolCallId, name: toolName, arguments: input, ...(isObject(part.providerMetadata) ? { providerMetadata: part.providerMetadata } : {}) });
  }

  response(): ModelResponse {
    let text = "";
    let thinking = "";
    const content: StoredPart[] = [];
    for (const part of this.parts) {
      if ("kind" in part) {
        if (part.kind === "text") text += part.text;
        else thinking += part.text;
        content.push({ type: part.kind, text: part.text, ...options(part.metadata) });
      } else {
        content.push(part);
      }
    }
    const metadata: Metadata = { aiSdk: { content, ...(this.responseMetadata ? { providerMetadata: this.responseMetadata } : {}) } };
    return {
      text,
      toolCalls: [...this.calls],
      finishReason: this.finish ?? (this.calls.length > 0 ? "tool_calls" : "stop"),
      ...(this.usage ? { usage: this.usage } : {}),
      ...(thinking !== "" ? { thinking } : {}),
      providerMetadata: metadata,
    };
  }
}

const FINISH: Record<string, FinishReason> = {
  stop: "stop",
  length: "length",
  "content-filter": "content_filter",
  "tool-calls": "tool_calls",
  error: "error",
};

/** v3: `{ unified, raw }`; v2: the unified string. `other` keeps the provider's own word when it said one. */
export function readFinishReason(value: unknown, hasToolCalls: boolean): FinishReason {
  const unified = isObject(value) ? value.unified : value;
  const raw = isObject(value) && typeof value.raw === "string" ? value.raw : undefined;
  if (typeof unified === "string" && FINISH[unified] !== undefined) return FINISH[unified];
  if (typeof unified === "string" && unified !== "unknown") return raw ?? unified;
  return hasToolCalls ? "tool_calls" : "stop";
}

/** v3's nested counts (`inputTokens.total`, `.cacheRead`, `.cacheWrite`; `outputTokens.total`, `.reasoning`), or v2's flat ones. */
export function readUsage(value: unknown): Usage | undefined {
  if (!isObject(value)) return undefined;
  const input = value.inputTokens;
  const output = value.outputTokens;
  if (isObject(input) || isObject(output)) {
    const i = isObject(input) ? input : {};
    const o = isObject(output) ? output : {};
    if (num(i.total) === undefined && num(o.total) === undefined) return undefined;
    return {
      input: num(i.total) ?? 0,
      output: num(o.total) ?? 0,
      ...(num(i.cacheRead) !== undefined ? { cached: num(i.cacheRead) } : {}),
      ...(num(o.reasoning) !== undefined ? { reasoning: num(o.reasoning) } : {}),
      ...(num(i.cacheWrite) !== undefined ? { cacheWrite: num(i.cacheWrite) } : {}),
    };
  }
  if (num(input) === undefined && num(output) === undefined) return undefined;
  return {
    input: num(input) ?? 0,
    output: num(output) ?? 0,
    ...(num(value.cachedInputTokens) !== undefined ? { cached: num(value.cachedInputTokens) } : {}),
    ...(num(value.reasoningTokens) !== undefined ? { reasoning: num(value.reasoningTokens) } : {}),
  };
}

function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

function isObject(value: unknown): value is Metadata {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function options(metadata: unknown): { providerOptions?: Metadata } {
  return isObject(metadata) && Object.keys(metadata).length > 0 ? { providerOptions: metadata } : {};
}

/** Metadata of one part arriving in pieces (a signature on the last reasoning delta): later keys win, per provider. */
function merge(a: Metadata | undefined, b: unknown): Metadata | undefined {
  if (!isObject(b)) return a;
  const out: Metadata = { ...(a ?? {}) };
  for (const [provider, value] of Object.entries(b)) {
    out[provider] = isObject(value) && isObject(out[provider]) ? { ...(out[provider] as Metadata), ...value } : value;
  }
  return out;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (isObject(error) && typeof error.message === "string") return error.message;
  if (isObject(error) && isObject(error.error) && typeof error.error.message === "string") return error.error.message;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}
