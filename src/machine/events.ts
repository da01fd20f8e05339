import type { UserMessage } from "../models/messages.js";
import type { EffectResult } from "../actors/effects.js";
import type { WorkEvent } from "../actors/report.js";

/** Events the engine machine receives from outside and from its effects actor. */
export type EngineEvent =
  /** A piece of work the engine asked for ended: `<name>.done` with its output, or `<name>.error`. */
  | EffectResult
  /** The caller aborted (options.signal or run.abort()). */
  | { type: "ABORT" }
  /** What work in progress reports (a model's stream, a question asked, a tool started, progressed, finished). */
  | WorkEvent
  /** A message queued while the run goes on: steering enters before the next model call, a follow-up when it would stop. */
  | { type: "inbox.steer"; message: UserMessage }
  | { type: "inbox.followUp"; message: UserMessage };

/**
 * The event a named action is bound to: the machine attaches such an action to that event's transitions only, so the
 * check never fails; it narrows the type where XState's named actions see the whole union.
 */
export function eventOf<T extends EngineEvent["type"]>(event: EngineEvent, type: T): Extract<EngineEvent, { type: T }> {
  if (event.type !== type) throw new Error(`an action bound to ${type} ran on ${event.type}`);
  return event as Extract<EngineEvent, { type: T }>;
}
