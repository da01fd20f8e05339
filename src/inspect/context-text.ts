import { redactLine } from "../record/redact.js";
import { isSecretKey, toJsonTextAt } from "./serialize.js";

/** Context keys that are not the run's data: collaborators (model client, tools, signal) and the conversation, sent on its own. */
export const NOT_DATA: ReadonlySet<string> = new Set(["deps", "messages"]);

/**
 * Groups of the engine's context that its actions replace whole and never change in place (`run` and `loop` never
 * change at all). The batch's call records do change in place, so `batch` is never among them.
 */
const REPLACED_WHOLE: ReadonlySet<string> = new Set(["run", "loop", "usage", "call", "batchState", "inbox", "outcome"]);

/**
 * Writes a run's context (without `deps` and `messages`) as `toJsonText` would, state after state, keeping the text
 * of each group that is still the same object as last time: most states change one or two groups, and serialising
 * the whole context at every state was the inspector's largest cost with no page connected. Each group's text is
 * redacted as a trace line is (`secrets` from `secretValues()`), and kept redacted.
 */
export class ContextText {
  private readonly kept = new Map<string, { value: object; text: string }>();

  constructor(private readonly secrets: readonly string[] = []) {}

  of(context: Record<string, unknown>): string {
    let out = "{";
    for (const key in context) {
      if (!Object.prototype.hasOwnProperty.call(context, key) || NOT_DATA.has(key)) continue;
      const value = context[key];
      if (value === undefined || key === "__proto__") continue;
      out += `${out.length > 1 ? "," : ""}${JSON.stringify(key)}:${value !== null && value !== "" && isSecretKey(key) ? '"[redacted]"' : this.field(key, value)}`;
    }
    return `${out}}`;
  }

  private field(key: string, value: unknown): string {
    // A count or a flag (turn, toolCallCount): its text is digits, true or false, which no pattern matches.
    if ((typeof value === "number" && Number.isFinite(value)) || typeof value === "boolean") return JSON.stringify(value);
    if (!REPLACED_WHOLE.has(key) || typeof value !== "object" || value === null) return redactLine(toJsonTextAt(value, 1), this.secrets);
    const kept = this.kept.get(key);
    if (kept?.value === value) return kept.text;
    const text = redactLine(toJsonTextAt(value, 1), this.secrets);
    this.kept.set(key, { value, text });
    return text;
  }
}
