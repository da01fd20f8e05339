import type { AgentEvent } from "../events.js";
import type { ToolCall } from "../models/messages.js";

/**
 * A chunk of the AI SDK UI message stream (protocol v1, as `ai`@6's `UIMessageChunk`): the parts of it a statecraft
 * run produces.
 */
export type UIMessageChunk =
  | { type: "start"; messageId?: string }
  | { type: "start-step" }
  | { type: "finish-step" }
  | { type: "text-start"; id: string }
  | { type: "text-delta"; id: string; delta: string }
  | { type: "text-end"; id: string }
  | { type: "reasoning-start"; id: string }
  | { type: "reasoning-delta"; id: string; delta: string }
  | { type: "reasoning-end"; id: string }
  | { type: "tool-input-start"; toolCallId: string; toolName: string }
  | { type: "tool-input-delta"; toolCallId: string; inputTextDelta: string }
  | { type: "tool-input-available"; toolCallId: string; toolName: string; input: unknown }
  | { type: "tool-approval-request"; approvalId: string; toolCallId: string }
  | { type: "tool-output-available"; toolCallId: string; output: unknown }
  | { type: "tool-output-error"; toolCallId: string; errorText: string }
  | { type: "tool-output-denied"; toolCallId: string }
  | { type: "error"; errorText: string }
  | { type: "abort"; reason?: string }
  | { type: "finish"; finishReason?: "stop" | "length" | "content-filter" | "tool-calls" | "error" | "other" };

export interface UIMessageStreamOptions {
  /** The assistant message's id in the `start` chunk (a chat goes on with its last message's id after an approval). */
  messageId?: string;
  /** Tool calls the client already has (the calls it approved): their input is not sent again. */
  knownCalls?: readonly string[];
  /**
   * How many of the run's `suspended` events were answered already: each shows its approval requests and the stream
   * goes on past it (a client that reconnects gets the run replayed from its start).
   */
  answered?: number;
}

/**
 * A run's events as the AI SDK UI message stream's chunks (what `useChat` reads): text and reasoning as
 * `text-*`/`reasoning-*`, each tool call as `tool-input-*` then `tool-output-available`, `tool-output-error` or
 * `tool-output-denied`, a permission question as `tool-approval-request` (its `approvalId` is the call id, answered
 * by the next request's approval response), each model call a step, and `finish` last. Give the stream to
 * `createUIMessageStreamResponse({ stream })` of `ai`, or let `serve()`'s `POST /api/chat` send it. The events of
 * subagents, retries, compactions and queued messages have no part in the protocol and are not sent.
 */
export function toUIMessageStream(run: AsyncIterable<AgentEvent>, options: UIMessageStreamOptions = {}): ReadableStream<UIMessageChunk> {
  const chunks = uiChunks(run, options)[Symbol.asyncIterator]();
  return new ReadableStream<UIMessageChunk>({
    async pull(controller) {
      try {
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      } catch (error) {
        controller.error(error);
      }
    },
    async cancel() {
      await chunks.return?.(undefined);
    },
  });
}

/** The chunks of `toUIMessageStream`, as an async generator. */
export async function* uiChunks(run: AsyncIterable<AgentEvent>, options: UIMessageStreamOptions = {}): AsyncGenerator<UIMessageChunk, void, undefined> {
  const encoder = new UIChunker(options);
  yield { type: "start", ...(options.messageId !== undefined ? { messageId: options.messageId } : {}) };
  let passed = 0;
  for await (const event of run) {
    if (event.type === "suspended" && passed < (options.answered ?? 0)) {
      passed += 1;
      yield* encoder.approvals(event);
      continue;
    }
    yield* encoder.chunksOf(event);
    if (event.type === "turn_end" || event.type === "suspended") return;
  }
  yield* encoder.close();
  yield { type: "finish", finishReason: "other" };
}

/** Turns events into chunks, remembering the open text and reasoning parts, the step, and the calls seen. */
class UIChunker {
  private text: string | undefined;
  private reasoning: string | undefined;
  private parts = 0;
  private step = false;
  private readonly shown = new Set<string>();
  private readonly started = new Set<string>();
  private readonly asked = new Set<string>();

  constructor(private readonly options: UIMessageStreamOptions) {
    // The calls the client answered were asked about: a result without a start is their denial.
    for (const id of options.knownCalls ?? []) {
      this.shown.add(id);
      this.asked.add(id);
    }
  }

  *chunksOf(event: AgentEvent): Generator<UIMessageChunk> {
    switch (event.type) {
      case "text_delta":
        yield* this.endReasoning();
        if (this.text === undefined) {
          this.text = `text-${++this.parts}`;
          yield { type: "text-start", id: this.text };
        }
        return yield { type: "text-delta", id: this.text, delta: event.text };
      case "thinking_delta":
        yield* this.endText();
        if (this.reasoning === undefined) {
          this.reasoning = `reasoning-${++this.parts}`;
          yield { type: "reasoning-start", id: this.reasoning };
        }
        return yield { type: "reasoning-delta", id: this.reasoning, delta: event.text };
      case "state":
        yield* this.close();
        if (event.state === "call_model") {
          this.step = true;
          yield { type: "start-step" };
        }
        return;
      case "permission_request":
        yield* this.close(false);
        this.asked.add(event.call.id);
        return yield* this.input(event.call);
      case "tool_start":
        yield* this.close(false);
        this.started.add(event.call.id);
        return yield* this.input(event.call);
      case "tool_result": {
        yield* this.close(false);
        yield* this.input(event.call);
        const id = event.call.id;
        if (!event.result.isError) return yield { type: "tool-output-available", toolCallId: id, output: event.result.details ?? event.result.content };
        if (!this.started.has(id) && this.asked.has(id)) return yield { type: "tool-output-denied", toolCallId: id };
        return yield { type: "tool-output-error", toolCallId: id, errorText: event.result.content };
      }
      case "suspended":
        yield* this.approvals(event);
        yield* this.close();
        return yield { type: "finish", finishReason: "tool-calls" };
      case "turn_end":
        yield* this.close();
        if (event.reason === "user_abort") return yield { type: "abort", reason: event.error?.message ?? "the run was aborted" };
        // A denial the person chose is shown by its tool part (output-denied), not as the chat's error.
        if (event.error && event.reason !== "final_answer" && event.reason !== "permission_denied") yield { type: "error", errorText: `${event.error.code}: ${event.error.message}` };
        return yield { type: "finish", finishReason: finishReasonOf(event.reason) };
      default:
        return;
    }
  }

  /** The approval requests of a suspension: each pending call's input (once) and its request. */
  *approvals(event: Extract<AgentEvent, { type: "suspended" }>): Generator<UIMessageChunk> {
    yield* this.close(false);
    for (const call of event.pending) {
      this.asked.add(call.callId);
      yield* this.input({ id: call.callId, name: call.name, input: call.input, sessionId: event.sessionId });
      yield { type: "tool-approval-request", approvalId: call.callId, toolCallId: call.callId };
    }
  }

  /** Closes the open text or reasoning part, and (unless `step` is false) the step. */
  *close(step = true): Generator<UIMessageChunk> {
    yield* this.endText();
    yield* this.endReasoning();
    if (step && this.step) {
      this.step = false;
      yield { type: "finish-step" };
    }
  }

  private *endText(): Generator<UIMessageChunk> {
    if (this.text === undefined) return;
    yield { type: "text-end", id: this.text };
    this.text = undefined;
  }

  private *endReasoning(): Generator<UIMessageChunk> {
    if (this.reasoning === undefined) return;
    yield { type: "reasoning-end", id: this.reasoning };
    this.reasoning = undefined;
  }

  /** The call's input, the first time the call is seen (the engine has it whole: one delta). */
  private *input(call: ToolCall): Generator<UIMessageChunk> {
    if (this.shown.has(call.id)) return;
    this.shown.add(call.id);
    yield { type: "tool-input-start", toolCallId: call.id, toolName: call.name };
    yield { type: "tool-input-delta", toolCallId: call.id, inputTextDelta: JSON.stringify(call.input) ?? "" };
    yield { type: "tool-input-available", toolCallId: call.id, toolName: call.name, input: call.input };
  }
}

function finishReasonOf(reason: string): "stop" | "length" | "error" | "other" {
  if (reason === "final_answer" || reason === "permission_denied") return "stop";
  if (reason === "max_turns" || reason === "max_tool_calls" || reason === "timeout") return "length";
  if (reason === "model_error" || reason === "tool_error") return "error";
  return "other";
}

/** The chunks as the protocol's Server-Sent Events: one `data:` line each, `[DONE]` last. */
export async function* uiMessageSse(chunks: AsyncIterable<UIMessageChunk>): AsyncGenerator<string, void, undefined> {
  try {
    for await (const chunk of chunks) yield `data: ${JSON.stringify(chunk)}\n\n`;
  } catch (error) {
    // A run that failed without its last event: the client is told, and the stream ends as the protocol's do.
    yield `data: ${JSON.stringify({ type: "error", errorText: (error as Error)?.message ?? String(error) })}\n\n`;
  }
  yield "data: [DONE]\n\n";
}

/** The header by which the AI SDK knows the UI message stream. */
export const UI_MESSAGE_STREAM_HEADERS: Record<string, string> = { "x-vercel-ai-ui-message-stream": "v1" };
