/**
 * The permission settings of a run as data: the mode and the rules, and what a question gets when nobody answers it
 * (`onAsk` is code and is not part of it). `mode` is a string here: a stored or recorded run is untrusted input,
 * checked as a permission mode where it is used.
 */
export interface PermissionSettings {
  mode: string;
  allow: string[];
  ask: string[];
  deny: string[];
  whenUnanswered?: "deny" | "suspend";
  /** Absent for the default, "end". */
  onDeny?: "continue";
}

/**
 * A run's settings that are plain data (no model, tools or callbacks), as the caller gave them with the defaults
 * filled in: the one serialisable part of a run's settings. What a durable run stores (`StoredSettings`) and what a
 * queued run carries to a worker (statecraft/dbos `RunOptions`) are made of it.
 */
export interface RecordedSettings {
  systemPrompt?: string;
  maxTurns: number;
  maxToolCalls: number;
  timeoutMs: number;
  permissions: PermissionSettings;
  maxRepeatedCalls: number;
  maxTokens?: number;
  /** As given (not the model's): a resumed run asks its model again. */
  contextWindow?: number;
  reserveTokens?: number;
  keepRecentTokens?: number;
  maxDelegationDepth: number;
  /**
   * The JSON Schema of the final answer (`output`), as the model is asked for it: a Standard Schema (code, which can't
   * be stored or queued) is kept as the JSON Schema its library converts it to, and a resumed or queued run checks
   * the answer against that JSON Schema (its transforms and refinements do not apply there).
   */
  output?: Record<string, unknown>;
  /** `outputRetries` as the run applies it (with `output`). */
  outputRetries?: number;
}

/** A tool as the trace's first line records it (what a replay needs to offer the same tools). */
export interface TracedTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  risk: "read" | "write" | "exec";
  executionMode: "parallel" | "sequential";
  timeoutMs?: number;
}

/**
 * The run's options as its trace records them on its first line (`build_context`, `details.options`) and the
 * inspector shows them: the recorded settings as the engine applies them, with what the run was given besides data
 * (the model's name, the names of its hooks, its tools, whether `onAsk` was set). docs/trace.md describes each field.
 */
export interface TracedRunOptions {
  model?: string;
  maxTurns: number;
  maxToolCalls: number;
  timeoutMs: number;
  cwd: string;
  systemPrompt?: string;
  /** The run continues a session (the caller named it, or the run is a session's). */
  continued?: true;
  /** The context window in effect (the option's or the model's), with the compaction settings; absent without one. */
  contextWindow?: number;
  reserveTokens?: number;
  keepRecentTokens?: number;
  maxRepeatedCalls: number;
  /** A session's run: how its queued messages enter. */
  steeringMode?: "one-at-a-time" | "all";
  followUpMode?: "one-at-a-time" | "all";
  maxTokens?: number;
  /** A subagent's level (absent for a top run). */
  depth?: number;
  maxDelegationDepth: number;
  /** Names of the hooks the run had (hooks are code: the trace holds what they did, not what they are). */
  hooks: string[];
  permissions: Omit<PermissionSettings, "whenUnanswered"> & { onAsk: boolean; whenUnanswered?: "deny" | "suspend" };
  /** The JSON Schema of the final answer (`output`, as the model is asked for it) and `outputRetries`. */
  output?: Record<string, unknown>;
  outputRetries?: number;
  tools: TracedTool[];
}
