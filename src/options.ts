import { AgentError } from "./errors/agent-error.js";
import type { AnyTool, ToolCallOf } from "./tools/define-tool.js";
import type { OutputSchema } from "./tools/output-schema.js";
import { nearestName } from "./util/nearest-name.js";
import type { Model } from "./models/model.js";
import type { PermissionOptions } from "./permissions/types.js";
import type { Logger } from "./logger.js";
import type { AgentHooks } from "./hooks.js";
import type { Summarize } from "./compaction/compact.js";
import type { RunStore } from "./record/run-record.js";
import type { QueueMode } from "./events.js";
import type { EngineObserver } from "./observers/observe.js";
import type { SandboxOption } from "./sandbox/index.js";

/**
 * Options of `query()`. Only `model` is required. `Tools` is the list given as `tools` (query() infers it): the hooks'
 * and events' tool calls are typed by it.
 */
export interface QueryOptions<Tools extends readonly AnyTool[] = readonly AnyTool[]> extends AgentHooks<ToolCallOf<Tools>> {
  /** The model: `scriptedModel(...)`, `openaiModel(...)`, or any `Model`. */
  model: Model;
  tools?: Tools;
  /**
   * The shape of the final answer: a Standard Schema (zod, valibot, arktype, …) or a JSON Schema (an object, an array
   * or a primitive). The model is asked for it; the engine checks the answer in `validate_output` and gives the parsed
   * value as `result.output`. An answer that does not match goes back to the model with the errors.
   */
  output?: OutputSchema;
  /** How many times an answer that does not match `output` is sent back to be answered again (default 2; each is a model call, counted against maxTurns). */
  outputRetries?: number;
  /** At most this many model calls per run (default 8). */
  maxTurns?: number;
  /** At most this many tool executions per run (default 12). */
  maxToolCalls?: number;
  /** Time limit of the whole run in milliseconds (default 120 000). Preempts a hanging model or tool call. */
  timeoutMs?: number;
  /** Aborting it ends the run `user_abort` from any state. */
  signal?: AbortSignal;
  /** Working directory: where tools run and `.agent/` lives. Default `process.cwd()`. */
  cwd?: string;
  systemPrompt?: string;
  /** Continue an earlier session's conversation from its transcript; a new id when absent. */
  sessionId?: string;
  /** Trace file (JSONL). Default `<cwd>/.agent/trace.jsonl`; `false` writes no trace. */
  traceFile?: string | false;
  permissions?: PermissionOptions;
  /** Where a suspended run is kept for resume() (docs/durable.md). Default: files under `<cwd>/.agent/runs/`. */
  runStore?: RunStore;
  /**
   * Where the run keeps what it records (docs/durable.md, "Where a run is kept"). `"file"` (default): the trace,
   * transcript, audit and runs under `<cwd>/.agent/`. `"memory"`: nothing is written anywhere; the trace, transcript
   * and audit are read from the run (`run.trace()`, `run.transcript()`, `run.audit()`), and a session's conversation
   * and a suspended run last as long as the process. A `RunStore`: runs kept there, the rest as `"file"`.
   */
  store?: "file" | "memory" | RunStore;
  /**
   * Observers of the run, after the built-in ones (trace, transcript, audit, checkpoints): each hears every state
   * entered, every event emitted and, once, the run's summary (docs/architecture.md, "Observers").
   */
  observers?: readonly EngineObserver[];
  /**
   * Keep a checkpoint of the run in the run store as it goes, so a run whose process dies (SIGKILL, out of memory)
   * can be resumed (docs/durable.md). Default true; false: a run whose process dies can't be resumed (a suspended
   * run still can). A checkpoint appends what changed since the last one.
   */
  durable?: boolean;
  /** Operational logs (e.g. a trace write failure). Default: pino on stderr at STATECRAFT_LOG_LEVEL (default "warn"). */
  logger?: Logger;
  /** Context window in tokens; overrides the model's. Compaction needs one of the two. */
  contextWindow?: number;
  /** Tokens kept free for the answer: compaction starts above contextWindow − reserveTokens (default 16 384). */
  reserveTokens?: number;
  /** The most recent whole turns that fit in this many tokens are kept when compacting (default 20 000). */
  keepRecentTokens?: number;
  /** Turns older messages into a summary; default: the run's model, asked with no tools offered. */
  summarize?: Summarize;
  /** The same call (name and input) may run this many times in a row (default 3). */
  maxRepeatedCalls?: number;
  /** Once the tokens the model reported reach this, the run ends before the next model call (`max_turns`, `MAX_TOKENS`). */
  maxTokens?: number;
  /** The deepest subagent level allowed in the whole tree, counted from this run (0) (default 2). */
  maxDelegationDepth?: number;
  /**
   * Serve the browser inspector for this run on 127.0.0.1 (port 0: a free one). The first event is
   * `{ type: "inspector", url }`. While a page is connected, a permission request waits for the page (or `onAsk`).
   * The inspector closes when the run ends unless `keepOpen` (then it serves while the process lives).
   */
  inspect?: { port?: number; keepOpen?: boolean };
  /**
   * The OS sandbox around every process the run's tools start (docs/sandbox.md): `"auto"` (default: bubblewrap on
   * Linux, sandbox-exec on macOS, else unsandboxed with one warning per run), `"required"` (a process that cannot be
   * sandboxed is not started: `SANDBOX_UNAVAILABLE`), `"off"`, or `{ mode?, network?, hide?, env? }`. Whatever the
   * mode, the processes get an environment scrubbed of keys, tokens, passwords and credentials.
   */
  sandbox?: SandboxOption;
}

// Declared with the machine, whose inbox takes them.
export type { QueueMode } from "./events.js";

/** Options of `createSession()`: those of `query()` plus how queued messages are delivered. */
export interface SessionOptions<Tools extends readonly AnyTool[] = readonly AnyTool[]> extends QueryOptions<Tools> {
  steeringMode?: QueueMode;
  followUpMode?: QueueMode;
}

export const DEFAULT_RESERVE_TOKENS = 16_384;
export const DEFAULT_KEEP_RECENT_TOKENS = 20_000;
export const DEFAULT_MAX_REPEATED_CALLS = 3;
export const DEFAULT_MAX_DELEGATION_DEPTH = 2;

export const DEFAULT_MAX_TURNS = 8;
export const DEFAULT_MAX_TOOL_CALLS = 12;
export const DEFAULT_TIMEOUT_MS = 120_000;

// Every option by name; `satisfies` keeps the lists equal to the interfaces (a new option must be added here).
const QUERY_KEYS = {
  model: true,
  tools: true,
  maxTurns: true,
  maxToolCalls: true,
  timeoutMs: true,
  signal: true,
  cwd: true,
  systemPrompt: true,
  sessionId: true,
  traceFile: true,
  permissions: true,
  runStore: true,
  store: true,
  observers: true,
  durable: true,
  logger: true,
  contextWindow: true,
  reserveTokens: true,
  keepRecentTokens: true,
  summarize: true,
  maxRepeatedCalls: true,
  maxTokens: true,
  maxDelegationDepth: true,
  inspect: true,
  sandbox: true,
  transformContext: true,
  beforeToolCall: true,
  afterToolCall: true,
  prepareNextTurn: true,
  shouldStopAfterTurn: true,
  onModelError: true,
  output: true,
  outputRetries: true,
} as const satisfies Record<keyof QueryOptions, true>;
const PERMISSION_KEYS = { mode: true, allow: true, ask: true, deny: true, onAsk: true, whenUnanswered: true, onDeny: true } as const satisfies Record<keyof PermissionOptions, true>;

/** The names of query()'s options. */
export const QUERY_OPTION_NAMES: readonly string[] = Object.keys(QUERY_KEYS);
/** The names of createSession()'s options: query()'s and the queue modes. */
export const SESSION_OPTION_NAMES: readonly string[] = [...QUERY_OPTION_NAMES, ...Object.keys({ steeringMode: true, followUpMode: true } satisfies Record<Exclude<keyof SessionOptions, keyof QueryOptions>, true>)];

/**
 * Refuses option names the function does not know, which would otherwise be ignored without a word (`maxturns`
 * for `maxTurns`): `INVALID_OPTIONS` naming the option and the nearest known name. `permissions` is checked too.
 * `notHere` names options that belong elsewhere, with what to do instead.
 */
export function checkOptionNames(options: object, known: readonly string[], where: string, notHere: Readonly<Record<string, string>> = {}): void {
  const unknown = (name: string, names: readonly string[], path: string) => {
    const near = nearestName(name, names);
    return new AgentError(
      "INVALID_OPTIONS",
      `${path}${name} is not an option of ${where}; ${near !== undefined ? `did you mean ${near}?` : `the options are ${names.join(", ")}`}`,
    );
  };
  for (const name of Object.keys(options)) {
    if (Object.hasOwn(notHere, name)) throw new AgentError("INVALID_OPTIONS", `options.${name} is not an option of ${where}: ${notHere[name]}`);
    if (!known.includes(name)) throw unknown(name, known, "options.");
  }
  const permissions = (options as { permissions?: unknown }).permissions;
  if (permissions !== null && typeof permissions === "object" && !Array.isArray(permissions)) {
    const names = Object.keys(PERMISSION_KEYS);
    for (const name of Object.keys(permissions)) if (!names.includes(name)) throw unknown(name, names, "options.permissions.");
  }
}
