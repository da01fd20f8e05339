import type { UserMessage } from "../../models/messages.js";
import type { EngineContext, Inbox } from "../context.js";
import type { QueueMode } from "../../events.js";

/**
 * build_context takes queued messages into the conversation: steering first (one, or all, per `steeringMode`); when
 * none is queued and the agent would otherwise have stopped (its last answer had no tool calls), follow-ups (per
 * `followUpMode`). A taken message leaves the inbox at the moment it joins the conversation: never lost, never twice.
 */
export function claimInbox(context: EngineContext): Partial<EngineContext> {
  const { steering, followUp } = context.inbox;
  let claimed: UserMessage[] = [];
  let inbox: Inbox = context.inbox;
  let source: "steering" | "follow_up" = "steering";
  if (steering.length > 0) {
    const n = take(steering.length, context.loop.steeringMode);
    claimed = steering.slice(0, n);
    inbox = { steering: steering.slice(n), followUp };
  } else if (followUp.length > 0 && context.call.response !== undefined && context.call.response.toolCalls.length === 0) {
    const n = take(followUp.length, context.loop.followUpMode);
    claimed = followUp.slice(0, n);
    inbox = { steering, followUp: followUp.slice(n) };
    source = "follow_up";
  }
  if (claimed.length === 0) return context.inbox.claimed.length ? { inbox: { ...context.inbox, claimed: [] } } : {};
  return { messages: context.messages.append(...claimed), inbox: { steering: inbox.steering, followUp: inbox.followUp, claimed, claimedFrom: source } };
}

function take(available: number, mode: QueueMode): number {
  return mode === "all" ? available : Math.min(1, available);
}

/** A message queued while the run goes on (session.steer / session.followUp). */
export function enqueue(context: EngineContext, kind: "steering" | "follow_up", message: UserMessage): Partial<EngineContext> {
  return kind === "steering"
    ? { inbox: { ...context.inbox, steering: [...context.inbox.steering, message] } }
    : { inbox: { ...context.inbox, followUp: [...context.inbox.followUp, message] } };
}
