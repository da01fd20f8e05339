import type { AnyTool } from "../tools/define-tool.js";

// Declared below the tools (src/record/, with the trace that records them) so a tool's RunInfo can name them.
export { PERMISSION_MODES } from "../record/permission-options.js";
export type { AskAnswer, PermissionAnswer, PermissionMode, PermissionOptions, PermissionRequest, WhenUnanswered } from "../record/permission-options.js";
import type { PermissionMode } from "../record/permission-options.js";

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
