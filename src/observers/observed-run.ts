import type { UserContent } from "../models/content.js";
import type { AgentError, ErrorInfo } from "../errors/agent-error.js";
import type { RunUsage } from "../events.js";
import type { Message, ToolCall, ToolResult } from "../models/messages.js";
import type { Model, ModelResponse } from "../models/model.js";
import type { PermissionRecord } from "../permissions/types.js";
import type { StopReason } from "../record/stop-reasons.js";
import type { TraceContext } from "../record/run-record.js";

// The public face of the engine's context for observers. The engine hands observers its context itself (no copy per
// state: a step enters several), so this view names only the parts a caller may rely on, each read-only, and is
// checked against the context at compile time (observe.ts): the context's other fields may change with the engine.

/** The run's conversation: a value (the engine makes a new one when it adds a message; this one never changes). */
export interface ObservedConversation extends Iterable<Message> {
  readonly length: number;
  /** The message at `index` (negative counts from the end), or undefined past either end. */
  at(index: number): Message | undefined;
  /** The messages, for reading now (copy them with `slice()` to keep them). */
  toArray(): readonly Message[];
  /** A copy of the messages from `start` to `end` (as `Array.prototype.slice`). */
  slice(start?: number, end?: number): Message[];
}

/** Where a tool call of the current model response stands. */
export type ObservedCallStatus = "pending" | "invalid" | "over_limit" | "allowed" | "denied" | "finished";

/** One tool call of the current model response and what the run learned about it so far. */
export interface ObservedCall {
  readonly call: ToolCall;
  readonly status: ObservedCallStatus;
  /** Why the call was refused or how it failed. */
  readonly error?: AgentError;
  readonly permission?: PermissionRecord;
  readonly result?: ToolResult;
  readonly durationMs?: number;
}

/** What a run was started with: fixed for the whole run. */
export interface ObservedRunConfig {
  readonly sessionId: string;
  readonly userInput: UserContent;
  readonly cwd: string;
  readonly systemPrompt?: string;
  readonly maxTurns: number;
  readonly maxToolCalls: number;
  readonly timeoutMs: number;
  /** Epoch milliseconds. */
  readonly startedAt: number;
  /** Epoch milliseconds: startedAt + timeoutMs. */
  readonly deadline: number;
  /** The trace context the run continues: the one its enqueuing client was in (statecraft/dbos). */
  readonly traceContext?: TraceContext;
  /** A resumed run: the trace context its suspended part left (EngineObserver.traceContext). */
  readonly resumedFrom?: TraceContext;
}

export type { TraceContext } from "../record/run-record.js";

/** A run as an observer sees it when a state is entered or an event is emitted (docs/architecture.md, "Observers"). */
export interface ObservedRun {
  readonly run: ObservedRunConfig;
  /** Model calls started so far. */
  readonly turn: number;
  /** Tool executions so far. */
  readonly toolCallCount: number;
  readonly usage: Readonly<RunUsage>;
  readonly messages: ObservedConversation;
  /** Tool calls of the current model response, in call order. */
  readonly batch: readonly ObservedCall[];
  /** The model call in progress or just ended: its streamed text, and its response once it came. */
  readonly call: { readonly streamingText: string; readonly response?: ModelResponse };
  /** How the run is ending: set from the moment `done` is entered. */
  readonly outcome: {
    readonly stopReason?: StopReason;
    readonly stopError?: ErrorInfo;
    readonly finalText: string;
    /** The failure the run is recovering from in `recover` (a failed model request, a context that could not be built). */
    readonly failure?: AgentError;
  };
  /** The model the run talks to (its name, provider, context window, server). */
  readonly deps: { readonly model: Pick<Model, "name" | "provider" | "contextWindow" | "baseUrl"> };
}
