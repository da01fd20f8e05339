// What a run's permissions are set with: recorded as given on the run's first trace line, and passed on to a
// subagent through a tool's RunInfo.

/**
 * `default`: read allowed, write and exec asked. `acceptEdits`: read and write allowed, exec asked.
 * `bypassPermissions`: everything allowed. `plan`: read only (write and exec denied).
 */
export type PermissionMode = "default" | "acceptEdits" | "bypassPermissions" | "plan";

export const PERMISSION_MODES: readonly PermissionMode[] = ["default", "acceptEdits", "bypassPermissions", "plan"];

/** What a person (or the `onAsk` callback) answers. */
export type PermissionAnswer = "allow" | "deny" | "allow_always";

/** What `onAsk` may answer besides a decision: stop the run here, to be resumed with the answer later (docs/durable.md). */
export type AskAnswer = PermissionAnswer | "suspend";

/** What a question gets when no `onAsk` is there to answer it. */
export type WhenUnanswered = "deny" | "suspend";

/** A call that must be asked about: bound to this call id and exactly this input. */
export interface PermissionRequest {
  call: { id: string; name: string; input: unknown };
  /** Why it is asked (the mode or the `ask` rule that asked), in words for a person. */
  reason: string;
  /** Fires when the question no longer needs an answer (answered elsewhere, e.g. in the inspector, or the run ended). */
  signal?: AbortSignal;
}

export interface PermissionOptions {
  mode?: PermissionMode;
  /** Rules `Tool` or `Tool(pattern)`; precedence deny, then ask, then allow, then the mode. */
  allow?: readonly string[];
  ask?: readonly string[];
  deny?: readonly string[];
  /**
   * Answers calls that must be asked; `"suspend"` stops the run at the question (resume() answers it later). An
   * async answer is typed `string` too: TypeScript widens `async () => "allow"` to `Promise<string>` when the
   * expected return type is a union (the literal is kept only for a plain Promise), so any other answer is refused
   * at run time instead (the run ends naming it).
   */
  onAsk?: (request: PermissionRequest) => AskAnswer | Promise<AskAnswer | (string & {})>;
  /** What a question gets with no `onAsk`: `"deny"` (default) or `"suspend"` (the run waits for resume()). */
  whenUnanswered?: WhenUnanswered;
  /**
   * What a denied call does to the run. `"end"` (default): the run stops `permission_denied` and nothing of that
   * response runs. `"continue"`: the denied call (by a rule, the mode, a person, a protected path) gets its denial
   * as its error result, the response's other calls are decided and run as usual, and the model goes on; the run then
   * ends by its answer or its limits.
   */
  onDeny?: OnDeny;
}

/** What a denied call does to the run: end it (`permission_denied`) or go back to the model as the call's error. */
export type OnDeny = "end" | "continue";
