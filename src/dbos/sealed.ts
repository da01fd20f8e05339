import { createHash } from "node:crypto";
import type { Message } from "../models/messages.js";
import type { RunSpec } from "./names.js";
import type { RunKey } from "./run-key.js";

/** JSON with every object's keys sorted: the same value gives the same text whichever way it was stored (jsonb sorts). */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, (v as Record<string, unknown>)[k]])) : v,
  );
}

/** A digest of what a run was queued with (its input and options), which its stored run is bound to. */
export function specDigest(spec: Pick<RunSpec, "input" | "options">): string {
  return createHash("sha256").update(canonical([spec.input, spec.options])).digest("hex");
}

/** A digest of pending calls (id, tool, input): what was shown to whoever answered, and what the run waits on. */
export function pendingDigest(pending: ReadonlyArray<{ callId: string; name: string; input?: unknown }>): string {
  return createHash("sha256").update(canonical(pending.map((p) => [p.callId, p.name, p.input ?? null]))).digest("hex");
}

/** The scope `statecraft.runs.pending` is sealed for (under the run key). */
export const pendingScope = (sessionId: string, runId: string) => ["pending", sessionId, runId];

const historyScope = (sessionId: string, runId: string) => ["statecraft/dbos conversation 1", sessionId, runId];

/** A finished run's conversation as `statecraft.runs.messages` keeps it: its text and the run key's signature. */
export function sealHistory(key: RunKey, sessionId: string, runId: string, text: string): string {
  return JSON.stringify({ text, sig: key.sign(historyScope(sessionId, runId), text) });
}

/**
 * The conversation a session's next run goes on from, if it is the one a worker wrote for that run of that session;
 * otherwise the reason it is not (the new run then starts afresh, as a file transcript's forged lines are ignored).
 */
export function historyOf(key: RunKey, sessionId: string, runId: string, stored: unknown): { messages: Message[] } | { problem: string } {
  const e = stored as { text?: unknown; sig?: unknown } | null;
  if (!e || typeof e !== "object" || typeof e.text !== "string") return { problem: "it is not a signed conversation { text, sig }" };
  if (!key.verify(historyScope(sessionId, runId), e.text, e.sig)) return { problem: "its signature does not match (it was changed outside statecraft, copied from another run, or signed with another run key)" };
  const messages = JSON.parse(e.text) as unknown;
  if (!Array.isArray(messages)) return { problem: "it is not a list of messages" };
  return { messages: messages as Message[] };
}
