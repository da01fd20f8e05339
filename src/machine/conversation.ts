import type { Message } from "../models/messages.js";

/**
 * The run's conversation as a value: a conversation never changes once made, and adding messages makes a new one.
 *
 * A run's conversation grows by a message or two a step and is read whole by every model call, so copying it on every
 * addition would make a run quadratic in its length. Conversations made from one another share one list of messages
 * instead, kept out of sight, that only ever grows at its end: each conversation is the list's first `length`
 * entries, which nothing changes afterwards. Adding to a conversation that is not the list's whole (an older one
 * again) copies its part of the list first, so the conversations made from it before are left as they were.
 */
export class Conversation implements Iterable<Message> {
  readonly length: number;
  /** Shared by the conversations made from one another; entries below every sharer's length are never changed. */
  readonly #log: Message[];

  private constructor(log: Message[], length: number) {
    this.#log = log;
    this.length = length;
  }

  /** A conversation of these messages (copied: the list given stays the caller's). */
  static of(messages: readonly Message[] = []): Conversation {
    return new Conversation(messages.slice(), messages.length);
  }

  /** This conversation with `messages` added at its end. */
  append(...messages: Message[]): Conversation {
    if (messages.length === 0) return this;
    const log = this.#log.length === this.length ? this.#log : this.#log.slice(0, this.length);
    for (const message of messages) log.push(message);
    return new Conversation(log, log.length);
  }

  /** The message at `index` (negative counts from the end), or undefined past either end. */
  at(index: number): Message | undefined {
    const i = index < 0 ? this.length + index : index;
    return i >= 0 && i < this.length ? this.#log[i] : undefined;
  }

  /**
   * The messages as an array, for a reader that does not keep it (a model request, an estimate). It is the shared list
   * itself when this conversation is all of it (no copy per model call), so it may grow after the reader is done.
   * A reader that keeps the messages copies them (`slice`).
   */
  toArray(): readonly Message[] {
    return this.#log.length === this.length ? this.#log : this.#log.slice(0, this.length);
  }

  /** A copy of the messages from `start` to `end` (as `Array.prototype.slice`). */
  slice(start = 0, end = this.length): Message[] {
    const from = clip(start, this.length);
    return this.#log.slice(from, Math.max(from, clip(end, this.length)));
  }

  filter(keep: (message: Message, index: number) => boolean): Message[] {
    const out: Message[] = [];
    for (let i = 0; i < this.length; i++) if (keep(this.#log[i], i)) out.push(this.#log[i]);
    return out;
  }

  /**
   * True when this conversation was made from `earlier` by adding messages (or is `earlier`). A conversation made
   * anew (`of`: a compaction, a history a hook replaced) never continues another, even with the same messages.
   */
  continues(earlier: Conversation): boolean {
    return this.#log === earlier.#log && earlier.length <= this.length;
  }

  *[Symbol.iterator](): Iterator<Message> {
    for (let i = 0; i < this.length; i++) yield this.#log[i];
  }

  /** What `JSON.stringify` writes: the messages. */
  toJSON(): readonly Message[] {
    return this.toArray();
  }
}

/** An index as `Array.prototype.slice` reads it, within 0..length. */
function clip(index: number, length: number): number {
  return index < 0 ? Math.max(length + index, 0) : Math.min(index, length);
}
