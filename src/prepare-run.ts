import { randomUUID } from "./util/node-crypto.js";
import { statSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { AgentError } from "./errors/agent-error.js";
import { HOOK_NAMES, type AgentHooks } from "./hooks.js";
import type { EngineDeps, EngineInput, Inbox, LoopSettings } from "./machine/context.js";
import { normalizeInput, type QueryInput } from "./models/input.js";
import type { Message } from "./models/messages.js";
import type { Model } from "./models/model.js";
import {
  DEFAULT_KEEP_RECENT_TOKENS,
  DEFAULT_MAX_DELEGATION_DEPTH,
  DEFAULT_MAX_REPEATED_CALLS,
  DEFAULT_MAX_TOOL_CALLS,
  DEFAULT_MAX_TURNS,
  DEFAULT_RESERVE_TOKENS,
  DEFAULT_TIMEOUT_MS,
  type QueryOptions,
  type QueueMode,
} from "./options.js";
import { createPermissionPolicy } from "./permissions/policy.js";
import type { PermissionPolicy } from "./permissions/types.js";
import type { AnyTool } from "./tools/define-tool.js";
import { compileOutput } from "./tools/output-schema.js";
import { agentFolder } from "./record/agent-folder.js";
import type { RecordedSettings } from "./record/settings-record.js";
import { checkStoreOptions, isRunStore } from "./store-option.js";
import { checkSessionId } from "./record/transcript.js";
import type { RunSettings } from "./run-settings.js";
import { resolveSandbox, runSandbox } from "./sandbox/index.js";

// query()'s door: every option checked (each mistake an INVALID_OPTIONS naming the option and the fix) and turned
// into the run's settings. query(), resume(), sessions, subagents, fork and replay all start here.

/** How a run sits in a tree of runs (subagents) or a session (queues); not options a caller sets. */
export interface RunPlacement {
  sessionId?: string;
  inbox?: Inbox;
  steeringMode?: QueueMode;
  followUpMode?: QueueMode;
  parentSession?: string;
  depth?: number;
  maxDelegationDepth?: number;
  /** A conversation to start from instead of the session's transcript (a fork). */
  history?: readonly Message[];
  forkedAt?: { sessionId: string; seq: number };
}

const fail = (message: string) => new AgentError("INVALID_OPTIONS", message);

/** Checks query()'s options and makes the run's settings (its permission policy included, built here once). */
export function prepare(given: QueryInput, options: QueryOptions, placement: RunPlacement = {}): RunSettings {
  const { userInput, history: givenHistory } = normalizeInput(given);
  if (!options || typeof options !== "object") throw fail("query(input, options): options are required, at least { model }");
  if (givenHistory && (placement.history || placement.sessionId !== undefined || options.sessionId !== undefined)) {
    throw fail("query(input, options): a list of messages starts a new conversation; to continue a session, give it a prompt or one user message");
  }
  const model = checkModel(options.model);
  const output = options.output !== undefined ? { ...compileOutput(options.output), retries: checkOutputRetries(options.outputRetries) } : undefined;
  const recorded = recordedSettings(options, placement);
  // The answer's schema as data: what a resumed or queued run checks the answer against.
  if (output) Object.assign(recorded, { output: output.request.schema, outputRetries: output.retries });
  const cwd = checkCwd(options.cwd);
  const sessionId = checkedSessionId(placement.sessionId ?? options.sessionId ?? randomUUID());
  const tools = checkTools(options.tools);
  checkStorage(options);
  // The policy is the run's own from here on: a bad mode or a malformed rule throws now, with the policy's message.
  let policy: PermissionPolicy;
  try {
    policy = createPermissionPolicy(options.permissions ?? {}, [], { cwd });
  } catch (error) {
    throw fail(`options.${(error as Error).message}`);
  }
  checkInspect(options.inspect);
  const traceFile = options.traceFile === false ? false : options.traceFile === undefined ? join(agentFolder(cwd), "trace.jsonl") : isAbsolute(options.traceFile) ? options.traceFile : resolve(cwd, options.traceFile);
  const deps: EngineDeps = {
    model,
    tools,
    toolSpecs: [...tools.values()].map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
    permissions: options.permissions ?? {},
    policy,
    hooks: checkHooks(options),
    ...(options.summarize ? { summarize: options.summarize } : {}),
    ...(output ? { output } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  };
  // The warning ("not sandboxed here") goes where the run's warnings go, once, when a first process starts.
  deps.sandbox = runSandbox(resolveSandbox(options.sandbox), cwd, () => deps.warn);
  const input: EngineInput = {
    sessionId,
    userInput,
    cwd,
    ...(recorded.systemPrompt !== undefined ? { systemPrompt: recorded.systemPrompt } : {}),
    maxTurns: recorded.maxTurns,
    maxToolCalls: recorded.maxToolCalls,
    timeoutMs: recorded.timeoutMs,
    deps,
    loop: loopOf(recorded, model, placement, traceFile),
    ...(placement.inbox ? { inbox: placement.inbox } : {}),
    ...(placement.history ? { history: placement.history } : givenHistory ? { history: givenHistory } : {}),
  };
  return {
    input,
    recorded,
    traceFile,
    continued: options.sessionId !== undefined || placement.sessionId !== undefined,
    queueModes: placement.steeringMode !== undefined,
    ...(placement.forkedAt ? { forkedAt: placement.forkedAt } : {}),
    ...(givenHistory ? { givenHistory: true } : {}),
  };
}

export const DEFAULT_OUTPUT_RETRIES = 2;

function checkOutputRetries(given: unknown): number {
  if (given === undefined) return DEFAULT_OUTPUT_RETRIES;
  if (typeof given !== "number" || !Number.isInteger(given) || given < 0) throw fail(`options.outputRetries must be a whole number ≥ 0, got ${JSON.stringify(given)}`);
  return given;
}

function checkModel(model: Model | undefined): Model {
  if (!model || typeof model.stream !== "function") {
    throw fail("options.model must be a Model (scriptedModel([...]), openaiModel({ model }), or an object with stream())");
  }
  return model;
}

/** The workspace is never made up: a mistyped cwd would otherwise get an empty .agent/ and tools that find nothing. */
function checkCwd(given: unknown): string {
  if (given !== undefined && typeof given !== "string") throw fail(`options.cwd must be a folder's path, got ${JSON.stringify(given)}`);
  const cwd = resolve(given ?? process.cwd());
  if (!isFolder(cwd)) throw fail(`options.cwd ${JSON.stringify(given ?? cwd)} is not an existing folder (resolved to ${cwd}); give the project's folder`);
  return cwd;
}

function checkedSessionId(sessionId: unknown): string {
  if (typeof sessionId !== "string") throw fail("options.sessionId must be a string");
  try {
    checkSessionId(sessionId);
  } catch (error) {
    throw fail(`options.${(error as Error).message}`);
  }
  return sessionId;
}

function checkTools(given: readonly AnyTool[] | undefined): Map<string, AnyTool> {
  const tools = new Map<string, AnyTool>();
  for (const tool of given ?? []) {
    if (!tool || typeof tool.validateInput !== "function") {
      throw fail(`options.tools: every tool must be made with defineTool() (got ${JSON.stringify((tool as { name?: unknown })?.name ?? tool)})`);
    }
    if (tools.has(tool.name)) throw fail(`options.tools: two tools are named "${tool.name}"; tool names must be unique`);
    tools.set(tool.name, tool);
  }
  return tools;
}

/** `durable` and `runStore`: where the run is kept for resume(). */
function checkStorage(options: QueryOptions): void {
  if (options.durable !== undefined && typeof options.durable !== "boolean") throw fail("options.durable must be true or false");
  checkStoreOptions(options);
  if (options.runStore !== undefined && !isRunStore(options.runStore)) {
    throw fail("options.runStore must be a RunStore: an object with async save, load, list and delete (fileRunStore(cwd) is the default)");
  }
}

function checkInspect(inspect: unknown): void {
  if (inspect === undefined) return;
  const port = (inspect as { port?: unknown } | null)?.port;
  if (inspect === null || typeof inspect !== "object" || (port !== undefined && (typeof port !== "number" || !Number.isInteger(port) || port < 0 || port > 65535))) {
    throw fail("options.inspect must be { port?: number (0-65535; 0 picks a free port), keepOpen?: boolean }");
  }
}

function checkHooks(options: QueryOptions): AgentHooks {
  const hooks: AgentHooks = {};
  for (const name of HOOK_NAMES) {
    const hook = options[name];
    if (hook === undefined) continue;
    if (typeof hook !== "function") throw fail(`options.${name} must be a function`);
    (hooks as Record<string, unknown>)[name] = hook;
  }
  if (options.summarize !== undefined && typeof options.summarize !== "function") throw fail("options.summarize must be a function");
  return hooks;
}

/** The options that are plain data, checked, with the defaults filled in (a subagent's depth limit is its tree's). */
function recordedSettings(options: QueryOptions, placement: RunPlacement): RecordedSettings {
  const limit = (name: "maxTurns" | "maxToolCalls" | "timeoutMs", fallback: number, min: number) => {
    const value = options[name];
    if (value === undefined) return fallback;
    if (typeof value !== "number" || !Number.isFinite(value) || value < min || (name !== "timeoutMs" && !Number.isInteger(value))) {
      throw fail(`options.${name} must be ${name === "timeoutMs" ? "a number of milliseconds" : "a whole number"} ≥ ${min}, got ${JSON.stringify(value)}`);
    }
    return value;
  };
  const whole = (name: "contextWindow" | "reserveTokens" | "keepRecentTokens" | "maxRepeatedCalls" | "maxTokens" | "maxDelegationDepth", min: number) => {
    const value = options[name];
    if (value === undefined) return undefined;
    if (typeof value !== "number" || !Number.isInteger(value) || value < min) throw fail(`options.${name} must be a whole number ≥ ${min}, got ${JSON.stringify(value)}`);
    return value;
  };
  if (options.systemPrompt !== undefined && typeof options.systemPrompt !== "string") throw fail("options.systemPrompt must be a string");
  const permissions = options.permissions ?? {};
  if (permissions.whenUnanswered !== undefined && permissions.whenUnanswered !== "deny" && permissions.whenUnanswered !== "suspend") {
    throw fail(`options.permissions.whenUnanswered must be "deny" or "suspend", got ${JSON.stringify(permissions.whenUnanswered)}`);
  }
  if (permissions.onDeny !== undefined && permissions.onDeny !== "end" && permissions.onDeny !== "continue") {
    throw fail(`options.permissions.onDeny must be "end" or "continue", got ${JSON.stringify(permissions.onDeny)}`);
  }
  const optional = (name: "maxTokens" | "contextWindow" | "reserveTokens" | "keepRecentTokens", min: number) => {
    const value = whole(name, min);
    return value === undefined ? {} : { [name]: value };
  };
  return {
    ...(options.systemPrompt !== undefined ? { systemPrompt: options.systemPrompt } : {}),
    maxTurns: limit("maxTurns", DEFAULT_MAX_TURNS, 1),
    maxToolCalls: limit("maxToolCalls", DEFAULT_MAX_TOOL_CALLS, 0),
    timeoutMs: limit("timeoutMs", DEFAULT_TIMEOUT_MS, 1),
    permissions: {
      mode: permissions.mode ?? "default",
      allow: [...(permissions.allow ?? [])],
      ask: [...(permissions.ask ?? [])],
      deny: [...(permissions.deny ?? [])],
      ...(permissions.whenUnanswered !== undefined ? { whenUnanswered: permissions.whenUnanswered } : {}),
      ...(permissions.onDeny === "continue" ? { onDeny: "continue" as const } : {}),
    },
    maxRepeatedCalls: whole("maxRepeatedCalls", 1) ?? DEFAULT_MAX_REPEATED_CALLS,
    ...optional("maxTokens", 1),
    ...optional("contextWindow", 1),
    ...optional("reserveTokens", 0),
    ...optional("keepRecentTokens", 0),
    maxDelegationDepth: placement.maxDelegationDepth ?? whole("maxDelegationDepth", 0) ?? DEFAULT_MAX_DELEGATION_DEPTH,
  };
}

/** The loop's settings as the engine applies them: the model's context window when none was given, the run's place. */
function loopOf(recorded: RecordedSettings, model: Model, placement: RunPlacement, traceFile: string | false): LoopSettings {
  return {
    steeringMode: placement.steeringMode ?? "one-at-a-time",
    followUpMode: placement.followUpMode ?? "one-at-a-time",
    contextWindow: recorded.contextWindow ?? model.contextWindow ?? 0,
    reserveTokens: recorded.reserveTokens ?? DEFAULT_RESERVE_TOKENS,
    keepRecentTokens: recorded.keepRecentTokens ?? DEFAULT_KEEP_RECENT_TOKENS,
    maxRepeatedCalls: recorded.maxRepeatedCalls,
    ...(recorded.maxTokens !== undefined ? { maxTokens: recorded.maxTokens } : {}),
    depth: placement.depth ?? 0,
    maxDelegationDepth: recorded.maxDelegationDepth,
    ...(placement.parentSession !== undefined ? { parentSession: placement.parentSession } : {}),
    traceFile,
  };
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
