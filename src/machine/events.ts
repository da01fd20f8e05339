import type { AgentError } from "../errors/agent-error.js";
import type { ToolCall, ToolResult, UserMessage } from "../models/messages.js";
import type { AgentEvent } from "../events.js";
import type { ModelStreamEvent } from "../models/model.js";
import type { EffectResult } from "../actors/effects.js";

/** Events the engine machine receives from outside and from its effects actor. */
export type EngineEvent =
  /** A piece of work the engine asked for ended: `<name>.done` with its output, or `<name>.error`. */
  | EffectResult
  /** The caller aborted (options.signal or run.abort()). */
  | { type: "ABORT" }
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
  /** A message queued while the run goes on: steering enters before the next model call, a follow-up when it would stop. */
  | { type: "inbox.steer"; message: UserMessage }
  | { type: "inbox.followUp"; message: UserMessage }
  /** An event of a subagent run started by a tool of this run. */
  | { type: "subagent.event"; event: Extract<AgentEvent, { type: "subagent_event" }> };

/**
 * The event a named action is bound to: the machine attaches such an action to that event's transitions only, so the
 * check never fails; it narrows the type where XState's named actions see the whole union.
 */
export function eventOf<T extends EngineEvent["type"]>(event: EngineEvent, type: T): Extract<EngineEvent, { type: T }> {
  if (event.type !== type) throw new Error(`an action bound to ${type} ran on ${event.type}`);
  return event as Extract<EngineEvent, { type: T }>;
}
