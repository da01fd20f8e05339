import type { ErrorInfo } from "./errors/agent-error.js";
import type { Message, ToolCall, ToolResult, UserMessage } from "./models/messages.js";
import type { Usage } from "./models/model.js";
import type { PendingCall } from "./record/format.js";
import type { EngineStateName } from "./record/engine-states.js";
import type { StopReason } from "./record/stop-reasons.js";

/** Token totals of a run (summed over its model calls). */
export interface RunUsage {
  input: number;
  output: number;
  cached: number;
  reasoning: number;
}

/** The machine entered a state (every state but `done`, which `turn_end` stands for). */
export interface StateEvent {
  type: "state";
  state: EngineStateName;
  turn: number;
}
/** A piece of the model's answer text, as it streams. */
export interface TextDeltaEvent {
  type: "text_delta";
  text: string;
}
/** A piece of the model's reasoning text, as it streams. */
export interface ThinkingDeltaEvent {
  type: "thinking_delta";
  text: string;
}
/** The provider retries a failed request after `delayMs`. */
export interface RetryEvent {
  type: "retry";
  attempt: number;
  delayMs: number;
  error: { code: string; message: string };
}
/** A tool call starts (it was validated and allowed). */
export interface ToolStartEvent<Call extends ToolCall = ToolCall> {
  type: "tool_start";
  call: Call;
}
/** A tool call produced its result (or was denied, blocked, or failed: `result.isError`). */
export interface ToolResultEvent<Call extends ToolCall = ToolCall> {
  type: "tool_result";
  call: Call;
  result: ToolResult;
}
/** A running tool said how far it has got (MCP progress notifications); optional, any number per call. */
export interface ToolProgressEvent<Call extends ToolCall = ToolCall> {
  type: "tool_progress";
  call: Call;
  progress: number;
  total?: number;
  message?: string;
}
/** A call must be asked about: `onAsk` (or the inspector) is asked now. */
export interface PermissionRequestEvent<Call extends ToolCall = ToolCall> {
  type: "permission_request";
  call: Call;
  reason: string;
}
/** The run's inspector serves at `url` (the first event, with `inspect`). */
export interface InspectorEvent {
  type: "inspector";
  url: string;
}
/** A queued message entered the conversation (build_context): a steering message, or a follow-up. */
export interface UserMessageEvent {
  type: "user_message";
  message: UserMessage;
  source: "steering" | "follow_up";
}
/** Older turns were replaced by a summary (build_context). */
export interface CompactionEvent {
  type: "compaction";
  tokensBefore: number;
  tokensAfter: number;
}
/** An event of a subagent run (or of its own subagents, passed up as they are). */
export interface SubagentEvent {
  type: "subagent_event";
  sessionId: string;
  parentSession: string;
  depth: number;
  event: AgentEvent;
}
/** The run stopped at a permission question (docs/durable.md): it comes last instead of `turn_end`. */
export interface SuspendedEvent {
  type: "suspended";
  sessionId: string;
  runId: string;
  pending: PendingCall[];
}
/** The run ended: always the last event of a run that did not suspend. */
export interface TurnEndEvent {
  type: "turn_end";
  reason: StopReason;
  sessionId: string;
  turns: number;
  toolCalls: number;
  usage: RunUsage;
  error?: ErrorInfo;
  /** With `query()`'s `output`: the validated final answer (as `result.output`). */
  output?: unknown;
}

/**
 * What `query()` yields, in order. Exactly one `turn_end` (or `suspended`) comes last. `Call` is the type of the
 * tool calls in `tool_*` and `permission_request` events: with the run's tools known (query() infers it from
 * `options.tools`), `event.call.name === "x"` narrows `event.call.input` to tool x's input.
 */
export type AgentEvent<Call extends ToolCall = ToolCall> =
  | StateEvent
  | TextDeltaEvent
  | ThinkingDeltaEvent
  | RetryEvent
  | ToolStartEvent<Call>
  | ToolResultEvent<Call>
  | ToolProgressEvent<Call>
  | PermissionRequestEvent<Call>
  | InspectorEvent
  | UserMessageEvent
  | CompactionEvent
  | SubagentEvent
  | SuspendedEvent
  | TurnEndEvent;

export type AgentEventType = AgentEvent["type"];

/**
 * The events the engine machine emits itself (observers' `emitted`); the query bridge derives the rest of
 * AgentEvent (`state`, `turn_end`, `inspector`) from the states entered and the run's end.
 */
export type EmittedEvent = Extract<
  AgentEvent,
  {
    type:
      | "text_delta"
      | "thinking_delta"
      | "retry"
      | "tool_start"
      | "tool_result"
      | "tool_progress"
      | "permission_request"
      | "user_message"
      | "compaction"
      | "subagent_event"
      | "suspended";
  }
>;

/** Which queued messages enter at once: one per model call (default), or all that are queued. */
export type QueueMode = "one-at-a-time" | "all";

/** The generator's return value: a finished run, or one suspended at a permission question. */
export type RunResult<Output = unknown> = CompletedRunResult<Output> | SuspendedRunResult;

/** A run that ran to its `turn_end`. */
export interface CompletedRunResult<Output = unknown> {
  status: "completed";
  reason: StopReason;
  /** The final assistant text (the last model output's text). */
  text: string;
  /**
   * With `query()`'s `output`: the final answer as the schema parsed it, typed from the schema. Set when the run
   * ended `final_answer`; absent otherwise (an answer that never matched ends `model_error`, `OUTPUT_INVALID`).
   */
  output?: Output;
  /** The whole conversation after the run, as stored in the transcript. */
  messages: Message[];
  usage: RunUsage;
  sessionId: string;
  turns: number;
  toolCalls: number;
  error?: ErrorInfo;
}

/** A run that stopped at permission questions and waits for `resume(sessionId, { answers })`. */
export interface SuspendedRunResult {
  status: "suspended";
  reason?: undefined;
  runId: string;
  /** Every call of the batch that still needs an answer. */
  pending: PendingCall[];
  text: string;
  messages: Message[];
  usage: RunUsage;
  sessionId: string;
  turns: number;
  toolCalls: number;
  error?: undefined;
}

export function emptyUsage(): RunUsage {
  return { input: 0, output: 0, cached: 0, reasoning: 0 };
}

export function addUsage(total: RunUsage, usage: Usage | undefined): RunUsage {
  if (!usage) return total;
  return {
    input: total.input + (usage.input || 0),
    output: total.output + (usage.output || 0),
    cached: total.cached + (usage.cached ?? 0),
    reasoning: total.reasoning + (usage.reasoning ?? 0),
  };
}
