import type { AgentEvent } from "../events.js";
import type { ToolCall } from "../models/messages.js";

/** The AG-UI protocol version these events follow. */
export const AG_UI_PROTOCOL_VERSION = "1.0";

/**
 * An AG-UI 1.0 event as `toAgUiEvents` makes it: `type` is the protocol's event type (`@ag-ui/core`'s `EventType`
 * values) and the fields are the spec's for it.
 */
export type AgUiEvent = { type: string; timestamp: number } & Record<string, unknown>;

export interface AgUiEventsOptions {
  /** The AG-UI thread (statecraft's session). */
  threadId: string;
  /** The AG-UI run (the client's `RunAgentInput.runId`). */
  runId: string;
  /** Echoed in RUN_STARTED.input. */
  input?: unknown;
  /** Tool calls the client already has (those it answered): not started again. */
  knownCalls?: readonly string[];
}

/**
 * A run's events as AG-UI 1.0 events: `RUN_STARTED`; the answer text as `TEXT_MESSAGE_START/CONTENT/END`; reasoning
 * as `REASONING_START`, `REASONING_MESSAGE_*`, `REASONING_END`; each tool call as `TOOL_CALL_START/ARGS/END` and its
 * `TOOL_CALL_RESULT`; each engine state as a step (`STEP_STARTED`/`STEP_FINISHED`, named by the state) followed by a
 * `STATE_SNAPSHOT` of the run's counters (`{ turns, toolCalls, elapsedMs }`); and last `RUN_FINISHED` (outcome
 * `success`; `interrupt` at a permission question, one interrupt per pending call, its id the call id, answered by the
 * next run's `resume`; `cancelled` for an aborted run) or `RUN_ERROR` for a run that failed.
 */
export async function* toAgUiEvents(run: AsyncIterable<AgentEvent>, options: AgUiEventsOptions): AsyncGenerator<AgUiEvent, void, undefined> {
  const state = new AgUiState(options);
  yield state.event("RUN_STARTED", { threadId: options.threadId, runId: options.runId, protocolVersion: AG_UI_PROTOCOL_VERSION, ...(options.input !== undefined ? { input: options.input } : {}) });
  for await (const event of run) {
    yield* state.eventsOf(event);
    if (event.type === "turn_end" || event.type === "suspended") return;
  }
  yield* state.close();
  yield state.event("RUN_ERROR", { code: "RUN_INCOMPLETE", message: "the run's events ended before its last event" });
}

class AgUiState {
  private text: string | undefined;
  private reasoning: string | undefined;
  private step: string | undefined;
  private messages = 0;
  private toolCalls = 0;
  private turns = 0;
  private readonly started = Date.now();
  private readonly shown = new Set<string>();

  constructor(private readonly options: AgUiEventsOptions) {
    for (const id of options.knownCalls ?? []) this.shown.add(id);
  }

  event(type: string, fields: Record<string, unknown>): AgUiEvent {
    return { type, timestamp: Date.now(), ...fields };
  }

  *eventsOf(event: AgentEvent): Generator<AgUiEvent> {
    switch (event.type) {
      case "text_delta":
        yield* this.endReasoning();
        if (this.text === undefined) {
          this.text = this.messageId();
          yield this.event("TEXT_MESSAGE_START", { messageId: this.text, role: "assistant" });
        }
        return yield this.event("TEXT_MESSAGE_CONTENT", { messageId: this.text, delta: event.text });
      case "thinking_delta":
        yield* this.endText();
        if (this.reasoning === undefined) {
          this.reasoning = this.messageId();
          yield this.event("REASONING_START", { messageId: this.reasoning });
          yield this.event("REASONING_MESSAGE_START", { messageId: this.reasoning, role: "reasoning" });
        }
        return yield this.event("REASONING_MESSAGE_CONTENT", { messageId: this.reasoning, delta: event.text });
      case "state":
        yield* this.close();
        this.turns = event.turn;
        this.step = event.state;
        yield this.event("STEP_STARTED", { stepName: event.state });
        return yield this.snapshot();
      case "permission_request":
      case "tool_start":
        yield* this.endText();
        yield* this.endReasoning();
        return yield* this.call(event.call);
      case "tool_result":
        yield* this.endText();
        yield* this.endReasoning();
        yield* this.call(event.call);
        this.toolCalls += 1;
        return yield this.event("TOOL_CALL_RESULT", { messageId: this.messageId(), toolCallId: event.call.id, content: event.result.content, role: "tool" });
      case "suspended": {
        yield* this.close();
        for (const call of event.pending) yield* this.call({ id: call.callId, name: call.name, input: call.input, sessionId: event.sessionId });
        const interrupts = event.pending.map((call) => ({
          id: call.callId,
          reason: "tool_approval",
          message: `${call.name} ${JSON.stringify(call.input)}: ${call.reason}`,
          toolCallId: call.callId,
          responseSchema: { type: "string", enum: ["allow", "deny", "allow_always"] },
        }));
        return yield this.event("RUN_FINISHED", { threadId: this.options.threadId, runId: this.options.runId, outcome: { type: "interrupt", interrupts } });
      }
      case "turn_end":
        yield* this.close();
        yield this.snapshot();
        if (event.reason === "user_abort") return yield this.event("RUN_FINISHED", { threadId: this.options.threadId, runId: this.options.runId, outcome: { type: "cancelled" } });
        // A denial the person chose ends the run as they wanted: not a failure.
        if (event.reason !== "final_answer" && event.reason !== "permission_denied" && event.error) return yield this.event("RUN_ERROR", { code: event.error.code, message: event.error.message });
        return yield this.event("RUN_FINISHED", { threadId: this.options.threadId, runId: this.options.runId, result: { reason: event.reason, turns: event.turns, toolCalls: event.toolCalls }, outcome: { type: "success" } });
      default:
        return;
    }
  }

  *close(): Generator<AgUiEvent> {
    yield* this.endText();
    yield* this.endReasoning();
    if (this.step === undefined) return;
    yield this.event("STEP_FINISHED", { stepName: this.step });
    this.step = undefined;
  }

  private snapshot(): AgUiEvent {
    return this.event("STATE_SNAPSHOT", { snapshot: { turns: this.turns, toolCalls: this.toolCalls, elapsedMs: Date.now() - this.started } });
  }

  private messageId(): string {
    return `${this.options.runId}-${++this.messages}`;
  }

  private *endText(): Generator<AgUiEvent> {
    if (this.text === undefined) return;
    yield this.event("TEXT_MESSAGE_END", { messageId: this.text });
    this.text = undefined;
  }

  private *endReasoning(): Generator<AgUiEvent> {
    if (this.reasoning === undefined) return;
    yield this.event("REASONING_MESSAGE_END", { messageId: this.reasoning });
    yield this.event("REASONING_END", { messageId: this.reasoning });
    this.reasoning = undefined;
  }

  /** The call as TOOL_CALL_START/ARGS/END, the first time it is seen (the engine has its input whole). */
  private *call(call: ToolCall): Generator<AgUiEvent> {
    if (this.shown.has(call.id)) return;
    this.shown.add(call.id);
    yield this.event("TOOL_CALL_START", { toolCallId: call.id, toolCallName: call.name });
    yield this.event("TOOL_CALL_ARGS", { toolCallId: call.id, delta: JSON.stringify(call.input) ?? "" });
    yield this.event("TOOL_CALL_END", { toolCallId: call.id });
  }
}
