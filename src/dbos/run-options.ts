import { AgentError } from "../errors/agent-error.js";
import type { PermissionMode, PermissionOptions } from "../permissions/types.js";
import { isPermissionMode, PERMISSION_MODE_LIST } from "../permissions/modes.js";
import { createPermissionPolicy } from "../permissions/policy.js";
import type { PermissionSettings, RecordedSettings } from "../record/settings-record.js";
import { compileOutput, type OutputSchema } from "../tools/output-schema.js";

/**
 * What a queued run carries (no callbacks, no model, no tools): a run's recorded settings, each optional (the worker's
 * defaults apply), less the subagent depth, which is the worker's. Its permissions narrow the worker's (a question
 * nobody can answer always suspends a queued run, so `whenUnanswered` is not the run's to set).
 */
export interface RunOptions extends Partial<Omit<RecordedSettings, "permissions" | "maxDelegationDepth" | "output">> {
  permissions?: { mode?: PermissionMode } & Partial<Pick<PermissionSettings, "allow" | "ask" | "deny">>;
  /** The final answer's schema: a JSON Schema, or a Standard Schema (zod, …), queued as the JSON Schema it converts to. */
  output?: OutputSchema;
}

const NUMBERS = ["maxTurns", "maxToolCalls", "timeoutMs", "maxRepeatedCalls", "maxTokens", "contextWindow", "reserveTokens", "keepRecentTokens"] as const satisfies ReadonlyArray<keyof RunOptions>;
// Every option of RunOptions by name; `satisfies` keeps the list equal to the type (a new setting must be added here).
const OPTION_KEYS = {
  maxTurns: true,
  maxToolCalls: true,
  timeoutMs: true,
  maxRepeatedCalls: true,
  maxTokens: true,
  contextWindow: true,
  reserveTokens: true,
  keepRecentTokens: true,
  systemPrompt: true,
  permissions: true,
  output: true,
  outputRetries: true,
} as const satisfies Record<keyof RunOptions, true>;
const KNOWN = new Set<string>(Object.keys(OPTION_KEYS));
const RULES = { mode: true, allow: true, ask: true, deny: true } as const satisfies Record<keyof NonNullable<RunOptions["permissions"]>, true>;

/**
 * The final answer's schema as a queued run carries it: JSON Schema. A Standard Schema (code) is turned into the JSON
 * Schema its library makes, which the worker checks the answer against (transforms and refinements do not travel).
 */
function queuedOutput(schema: unknown, where: string): Record<string, unknown> {
  try {
    return compileOutput(schema as OutputSchema).request.schema;
  } catch (error) {
    throw new AgentError("INVALID_OPTIONS", `${where}: ${(error as Error).message}`);
  }
}

/** Checks what enqueueRun was given and keeps exactly the run options (a callback, a model or tools are refused). */
export function checkRunOptions(options: Record<string, unknown>, where: string): RunOptions {
  const out: RunOptions = {};
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined) continue;
    if (!KNOWN.has(key)) {
      throw new AgentError(
        "INVALID_OPTIONS",
        `${where}: options.${key} can't be queued: a queued run takes only ${[...KNOWN].join(", ")} (the model, tools and callbacks are the worker's: createWorker({ model, tools, permissions }))`,
      );
    }
  }
  for (const key of NUMBERS) {
    const value = options[key];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) throw new AgentError("INVALID_OPTIONS", `${where}: options.${key} must be a number ≥ 0, got ${JSON.stringify(value)}`);
    out[key] = value;
  }
  if (options.systemPrompt !== undefined) {
    if (typeof options.systemPrompt !== "string") throw new AgentError("INVALID_OPTIONS", `${where}: options.systemPrompt must be a string`);
    out.systemPrompt = options.systemPrompt;
  }
  if (options.output !== undefined) out.output = queuedOutput(options.output, where);
  if (options.outputRetries !== undefined) {
    const retries = options.outputRetries;
    if (typeof retries !== "number" || !Number.isInteger(retries) || retries < 0) throw new AgentError("INVALID_OPTIONS", `${where}: options.outputRetries must be a whole number ≥ 0, got ${JSON.stringify(retries)}`);
    out.outputRetries = retries;
  }
  const p = options.permissions as Record<string, unknown> | undefined;
  if (p !== undefined) {
    if (p === null || typeof p !== "object") throw new AgentError("INVALID_OPTIONS", `${where}: options.permissions must be { mode?, allow?, ask?, deny? }`);
    for (const key of Object.keys(p)) {
      if (!Object.hasOwn(RULES, key)) throw new AgentError("INVALID_OPTIONS", `${where}: options.permissions.${key} can't be queued (only mode, allow, ask and deny; onAsk is code: answers come through answer())`);
    }
    if (p.mode !== undefined && !isPermissionMode(p.mode)) {
      throw new AgentError("INVALID_OPTIONS", `${where}: options.permissions.mode must be one of ${PERMISSION_MODE_LIST}, got ${JSON.stringify(p.mode)}`);
    }
    const rules: RunOptions["permissions"] = { ...(p.mode !== undefined ? { mode: p.mode as PermissionMode } : {}) };
    for (const key of ["allow", "ask", "deny"] as const) {
      const list = p[key];
      if (list === undefined) continue;
      if (!Array.isArray(list) || !list.every((r) => typeof r === "string")) throw new AgentError("INVALID_OPTIONS", `${where}: options.permissions.${key} must be a list of rules (strings)`);
      rules[key] = [...list];
    }
    try {
      createPermissionPolicy(rules, [], { cwd: process.cwd() });
    } catch (error) {
      throw new AgentError("INVALID_OPTIONS", `${where}: options.${(error as Error).message}`);
    }
    out.permissions = rules;
  }
  return out;
}

// From the mode that lets least run without asking to the one that lets most.
const MODE_RANK: Record<PermissionMode, number> = { plan: 0, default: 1, acceptEdits: 2, bypassPermissions: 3 };

/**
 * The permissions a queued run gets on a worker: the worker's, narrowed by the run's rules, never widened. The run's
 * deny and ask rules are added; its allow rules count only where the worker allows the same rule; its mode applies
 * only when it lets less run than the worker's. A question nobody can answer suspends the run (answer() goes on).
 */
export function narrowPermissions(worker: Omit<PermissionOptions, "onAsk">, run: RunOptions["permissions"] = {}): PermissionOptions {
  const workerMode = worker.mode ?? "default";
  const mode = run.mode !== undefined && MODE_RANK[run.mode] < MODE_RANK[workerMode] ? run.mode : workerMode;
  const workerAllow = worker.allow ?? [];
  const allow = run.allow === undefined ? [...workerAllow] : run.allow.filter((rule) => workerAllow.includes(rule));
  return {
    mode,
    allow,
    ask: [...(worker.ask ?? []), ...(run.ask ?? [])],
    deny: [...(worker.deny ?? []), ...(run.deny ?? [])],
    whenUnanswered: "suspend",
  };
}
