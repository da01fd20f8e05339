import type { ErrorInfo } from "./errors/agent-error.js";
import type { Message, ToolCall, ToolResult, UserMessage } from "./models/messages.js";
import type { Usage } from "./models/model.js";
import type { PendingCall } from "./machine/context.js";
import type { EngineStateName } from "./machine/states.js";
import type { StopReason } from "./machine/stop-reasons.js";

/** Token totals of a run (summed over its model calls). */
export interface RunUsage {
  input: number;
  output: number;
  cached: number;
  reasoning: number;
}

/** What `query()` yields, in order. Exactly one `turn_end` comes last. */
export type AgentEvent =
  | { type: "state"; state: EngineStateName; turn: number }
  | { type: "text_delta"; text: string }
  | { type: "thinking_delta"; text: string }
  | { type: "retry"; attempt: number; delayMs: number; error: { code: string; message: string } }
  | { type: "tool_start"; call: ToolCall }
  | { type: "tool_result"; call: ToolCall; result: ToolResult }
  /** A running tool said how far it has got (MCP progress notifications); optional, any number per call. */
  | { type: "tool_progress"; call: ToolCall; progress: number; total?: number; message?: string }
  | { type: "permission_request"; call: ToolCall; reason: string }
  | { type: "inspector"; url: string }
  /** A queued message entered the conversation (build_context): a steering message, or a follow-up. */
  | { type: "user_message"; message: UserMessage; source: "steering" | "follow_up" }
  /** Older turns were replaced by a summary (build_context). */
  | { type: "compaction"; tokensBefore: number; tokensAfter: number }
  /** An event of a subagent run (or of its own subagents, passed up as they are). */
  | { type: "subagent_event"; sessionId: string; parentSession: string; depth: number; event: AgentEvent }
  /** The run stopped at a permission question (docs/durable.md): it comes last instead of `turn_end`. */
  | { type: "suspended"; sessionId: string; runId: string; pending: PendingCall[] }
  | {
      type: "turn_end";
      reason: StopReason;
      sessionId: string;
      turns: number;
      toolCalls: number;
      usage: RunUsage;
      error?: ErrorInfo;
    };

export type AgentEventType = AgentEvent["type"];

/** The generator's return value: a finished run, or one suspended at a permission question. */
export type RunResult = CompletedRunResult | SuspendedRunResult;

/** A run that ran to its `turn_end`. */
export interface CompletedRunResult {
  status: "completed";
  reason: StopReason;
  /** The final assistant text (the last model output's text). */
  text: string;
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
