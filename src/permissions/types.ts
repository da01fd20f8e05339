import type { AnyTool } from "../tools/define-tool.js";

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
}

// Declared with the trace format (src/record/), which writes them on every decision line.
export type { DecidedBy, PermissionRecord } from "../record/permission-record.js";

/**
 * What the policy says before anyone is asked. `rule` is the text of the rule that decided; `subject` what the
 * rules were matched against (the command, the workspace-relative path), when the tool has one.
 */
export type PolicyVerdict =
  | {
      kind: "allow";
      by: "rule" | "mode";
      rule?: string;
      /** When a compound command was allowed part by part: every allow rule that matched a part. */
      rules?: string[];
      subject?: string;
    }
  | { kind: "deny"; by: "rule" | "mode"; rule?: string; reason: string; subject?: string }
  | { kind: "ask"; reason: string; rule?: string; subject?: string };

/** Where the policy runs: the workspace root that path rules are relative to. */
export interface PolicyContext {
  /** The run's `cwd`. Default `process.cwd()` at evaluation time. */
  cwd?: string;
}

export interface PermissionPolicy {
  readonly mode: PermissionMode;
  /**
   * Resolves when `evaluate` can decide every call: shell commands need the bash parser, which loads asynchronously
   * (once per process). `evaluate` on a command before then throws; `query()` waits for it itself.
   */
  readonly ready: Promise<void>;
  /**
   * Decides a call from rules and mode alone; never asks anyone. Precedence: protected paths (a write tool on
   * `.agent/`, `statecraft.config.json` or the statecraft folder is denied, `by: "rule"`), deny rules, then (in `plan` mode)
   * the read-only limit, then ask rules, then allow rules, then the mode. `context` overrides the policy's own.
   */
  evaluate(tool: AnyTool, input: unknown, context?: PolicyContext): PolicyVerdict;
  /** Adds the allow rule an `allow_always` answer stands for (this tool, this exact subject); returns its text. */
  rememberAllow(tool: AnyTool, input: unknown, context?: PolicyContext): string;
  /**
   * Adds allow rules the session already holds (earlier `allow_always` answers, read from its transcript or its
   * database): the run's policy is built once, before they are read. They are not listed in `sessionRules`.
   */
  addSessionRules(rules: readonly string[]): void;
  /** Rules added by `allow_always` so far (to persist with the session). */
  readonly sessionRules: readonly string[];
}
