/** Who made a permission decision. */
export type DecidedBy = "rule" | "mode" | "human" | "default";

/** The recorded decision for one call (trace line after `ask_permission`, audit line). */
export interface PermissionRecord {
  toolCallId: string;
  decision: "allow" | "allow_always" | "deny";
  by: DecidedBy;
  /** The rule's text, when a rule decided (or the rule `allow_always` added). */
  rule?: string;
  /** The input the decision covered. */
  input?: unknown;
  /** Who or where answered, as given to resume() (`answeredBy`, free text); only on answers given there. */
  answeredBy?: string;
}
