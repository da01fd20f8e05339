import type { AgentError } from "../errors/agent-error.js";
import type { AgentEvent } from "../events.js";
import type { ToolCall, ToolResult } from "../models/messages.js";
import type { ModelStreamEvent } from "../models/model.js";

/**
 * What work in progress reports to the engine as it happens. Declared here, with the work that sends it, so the
 * actors never name the machine's own event type (the machine's `EngineEvent` includes these).
 */
export type WorkEvent =
  /** A streaming event of the model call in progress (text, thinking, retry). */
  | { type: "model.stream"; event: Exclude<ModelStreamEvent, { type: "response" }> }
  /** A permission question is put to a person. */
  | { type: "permission.asked"; call: ToolCall; reason: string }
  /** A tool call started running. */
  | { type: "tool.started"; call: ToolCall }
  /** A running tool call said how far it has got. */
  | { type: "tool.progress"; call: ToolCall; progress: number; total?: number; message?: string }
  /** A tool call finished: a result, or an error thrown by the tool. */
  | { type: "tool.finished"; id: string; result?: ToolResult; error?: AgentError; fatal?: boolean; durationMs: number }
  /** An event of a subagent run started by a tool of this run. */
  | { type: "subagent.event"; event: Extract<AgentEvent, { type: "subagent_event" }> };

/** How work in progress tells the engine what happens as it happens (a model's text, a tool starting, a question asked). */
export type Report = (event: WorkEvent) => void;
