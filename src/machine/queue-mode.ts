/** Which queued messages enter at once: one per model call (default), or all that are queued. */
export type QueueMode = "one-at-a-time" | "all";
