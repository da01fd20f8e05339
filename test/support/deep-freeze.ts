import type { EngineContext } from "../../src/machine/context.js";
import { Conversation } from "../../src/machine/conversation.js";
import type { Message } from "../../src/models/messages.js";

/**
 * Freezes an engine context deeply, so that an action that edits what the context holds instead of replacing it
 * throws (a TypeError in strict mode) at the edit. Left unfrozen, and why:
 * - `deps`: the run's collaborators, not its data (the model, the tools' Map, hooks, the permission policy, which
 *   remembers "allow always" answers, the abort signal);
 * - a conversation's shared list of messages (out of reach: a private field), which grows at its end as conversations
 *   are made from one another; each conversation's own messages are frozen, and `conversations` keeps every one
 *   seen with its messages then, for `conversationsChanged` to compare afterwards.
 */
export class ContextFreezer {
  private readonly frozen = new WeakSet<object>();
  private readonly conversations: Array<{ conversation: Conversation; messages: Message[] }> = [];

  freeze(context: EngineContext): void {
    if (this.frozen.has(context)) return;
    this.frozen.add(context);
    for (const key of Object.keys(context) as Array<keyof EngineContext>) if (key !== "deps") this.deep(context[key]);
    Object.freeze(context);
  }

  /** Conversations whose messages are no longer the ones they had when first seen. */
  conversationsChanged(): string[] {
    const changed: string[] = [];
    for (const { conversation, messages } of this.conversations) {
      const now = conversation.slice();
      if (now.length !== messages.length || now.some((m, i) => m !== messages[i])) changed.push(`a conversation of ${messages.length} messages now has ${now.length}, or other ones`);
    }
    return changed;
  }

  private deep(value: unknown): void {
    if (value === null || typeof value !== "object" || this.frozen.has(value)) return;
    this.frozen.add(value);
    if (value instanceof Conversation) {
      const messages = value.slice();
      this.conversations.push({ conversation: value, messages });
      for (const message of messages) this.deep(message);
    } else {
      for (const key of Object.keys(value)) this.deep((value as Record<string, unknown>)[key]);
    }
    Object.freeze(value);
  }
}
