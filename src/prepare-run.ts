import { randomUUID } from "./util/node-crypto.js";
import { statSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import type { createActor } from "xstate";
import type { Effects } from "./actors/effects.js";
import { AgentError } from "./errors/agent-error.js";
import { HOOK_NAMES, type AgentHooks } from "./hooks.js";
import type { engineMachine } from "./machine/engine.js";
import type { EngineDeps, EngineInput, Inbox, LoopSettings } from "./machine/context.js";
import type { Message } from "./models/messages.js";
import type { ToolSpec } from "./models/model.js";
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
import type { AnyTool } from "./tools/define-tool.js";
import { agentFolder } from "./record/agent-folder.js";
import { checkStoreOptions } from "./store-option.js";
import type { LineSink } from "./record/jsonl-writer.js";
import { checkSessionId } from "./record/transcript.js";
import { isHttpUrl, type RunStore, type StoredSettings } from "./durable/run-store.js";

// query()'s door: every option checked (each mistake an INVALID_OPTIONS naming the option and the fix) and turned
// into what the engine machine starts with. query(), resume(), sessions, subagents, fork and replay all start here.

/** What a run is started with, after the options were checked. */
export interface PreparedRun {
  input: EngineInput;
  traceFile: string | false;
  runOptions: Record<string, unknown>;
  forkedAt?: { sessionId: string; seq: number };
  /** What the run store keeps of the run's settings if it suspends. */
  settings: StoredSettings;
  /** A resumed run (resume.ts): where its trace goes on, the `resumed` line, and the run store it came from. */
  resumed?: { seq: number; fields: Record<string, unknown>; store: RunStore; release: () => Promise<void>; recovered: boolean };
  /** A run hosted by another engine (statecraft/dbos): its effects, and where its lines go. */
  hosted?: HostedRun;
}

/**
 * What a host (statecraft/dbos) changes in a run: the effects (each a durable step there), and the trace, transcript
 * and audit lines written to its sinks instead of files. A hosted run keeps no checkpoints of its own: the host's
 * journal is what recovers it.
 */
export interface HostedRun {
  /** Default: the engine's own (a subagent of a hosted run runs inside its parent's tool step, journalled as one). */
  effects?: Effects;
  sinks: { trace: LineSink; transcript: LineSink; audit: LineSink };
  /** The host's time for the machine (its deadline and `timedOut` guard) and the clock its timers go through. */
  time?: { machine: Omit<Parameters<typeof engineMachine.provide>[0], "actors">; clock: NonNullable<Parameters<typeof createActor>[1]>["clock"] };
}

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

export function prepare(userInput: string, options: QueryOptions, placement: RunPlacement = {}): PreparedRun {
  const fail = (message: string) => new AgentError("INVALID_OPTIONS", message);
  if (typeof userInput !== "string") throw fail(`query(input, options): input must be a string, got ${typeof userInput}`);
  if (!options || typeof options !== "object") throw fail("query(input, options): options are required, at least { model }");
  const model = options.model;
  if (!model || typeof model.stream !== "function") {
    throw fail("options.model must be a Model (scriptedModel([...]), openaiModel({ model }), or an object with stream())");
  }
  const limit = (name: "maxTurns" | "maxToolCalls" | "timeoutMs", fallback: number, min: number) => {
    const value = options[name];
    if (value === undefined) return fallback;
    if (typeof value !== "number" || !Number.isFinite(value) || value < min || (name !== "timeoutMs" && !Number.isInteger(value))) {
      throw fail(`options.${name} must be ${name === "timeoutMs" ? "a number of milliseconds" : "a whole number"} ≥ ${min}, got ${JSON.stringify(value)}`);
    }
    return value;
  };
  const maxTurns = limit("maxTurns", DEFAULT_MAX_TURNS, 1);
  const maxToolCalls = limit("maxToolCalls", DEFAULT_MAX_TOOL_CALLS, 0);
  const timeoutMs = limit("timeoutMs", DEFAULT_TIMEOUT_MS, 1);
  if (options.cwd !== undefined && typeof options.cwd !== "string") throw fail(`options.cwd must be a folder's path, got ${JSON.stringify(options.cwd)}`);
  const cwd = resolve(options.cwd ?? process.cwd());
  // The workspace is never made up: a mistyped cwd would otherwise get an empty .agent/ and tools that find nothing.
  if (!isFolder(cwd)) throw fail(`options.cwd ${JSON.stringify(options.cwd ?? cwd)} is not an existing folder (resolved to ${cwd}); give the project's folder`);
  const sessionId = placement.sessionId ?? options.sessionId ?? randomUUID();
  if (typeof sessionId !== "string") throw fail("options.sessionId must be a string");
  try {
    checkSessionId(sessionId);
  } catch (error) {
    throw fail(`options.${(error as Error).message}`);
  }
  const tools = new Map<string, AnyTool>();
  for (const tool of options.tools ?? []) {
    if (!tool || typeof tool.validateInput !== "function") {
      throw fail(`options.tools: every tool must be made with defineTool() (got ${JSON.stringify((tool as { name?: unknown })?.name ?? tool)})`);
    }
    if (tools.has(tool.name)) throw fail(`options.tools: two tools are named "${tool.name}"; tool names must be unique`);
    tools.set(tool.name, tool);
  }
  const permissions = options.permissions ?? {};
  if (permissions.whenUnanswered !== undefined && permissions.whenUnanswered !== "deny" && permissions.whenUnanswered !== "suspend") {
    throw fail(`options.permissions.whenUnanswered must be "deny" or "suspend", got ${JSON.stringify(permissions.whenUnanswered)}`);
  }
  if (options.durable !== undefined && typeof options.durable !== "boolean") throw fail("options.durable must be true or false");
  checkStoreOptions(options);
  if (options.runStore !== undefined) {
    const store = options.runStore as Partial<RunStore> | null;
    if (!store || typeof store !== "object" || (["save", "load", "list", "delete"] as const).some((name) => typeof store[name] !== "function")) {
      throw fail("options.runStore must be a RunStore: an object with async save, load, list and delete (fileRunStore(cwd) is the default)");
    }
  }
  // The policy is built when the run starts; built here too so that a bad mode or a malformed rule throws now, not
  // mid-run, with the policy's own message (the one place that checks them).
  try {
    createPermissionPolicy(permissions, [], { cwd });
  } catch (error) {
    throw fail(`options.${(error as Error).message}`);
  }
  if (options.systemPrompt !== undefined && typeof options.systemPrompt !== "string") throw fail("options.systemPrompt must be a string");
  if (options.inspect !== undefined) {
    const port = (options.inspect as { port?: unknown } | null)?.port;
    if (options.inspect === null || typeof options.inspect !== "object" || (port !== undefined && (typeof port !== "number" || !Number.isInteger(port) || port < 0 || port > 65535))) {
      throw fail("options.inspect must be { port?: number (0-65535; 0 picks a free port), keepOpen?: boolean }");
    }
  }
  const traceFile =
    options.traceFile === false
      ? false
      : options.traceFile === undefined
        ? join(agentFolder(cwd), "trace.jsonl")
        : isAbsolute(options.traceFile)
          ? options.traceFile
          : resolve(cwd, options.traceFile);
  const toolSpecs: ToolSpec[] = [...tools.values()].map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
  const hooks: AgentHooks = {};
  for (const name of HOOK_NAMES) {
    const hook = options[name];
    if (hook === undefined) continue;
    if (typeof hook !== "function") throw fail(`options.${name} must be a function`);
    (hooks as Record<string, unknown>)[name] = hook;
  }
  if (options.summarize !== undefined && typeof options.summarize !== "function") throw fail("options.summarize must be a function");
  const positive = (name: "contextWindow" | "reserveTokens" | "keepRecentTokens" | "maxRepeatedCalls" | "maxTokens" | "maxDelegationDepth", min: number) => {
    const value = options[name];
    if (value === undefined) return undefined;
    if (typeof value !== "number" || !Number.isInteger(value) || value < min) throw fail(`options.${name} must be a whole number ≥ ${min}, got ${JSON.stringify(value)}`);
    return value;
  };
  const loop: LoopSettings = {
    steeringMode: placement.steeringMode ?? "one-at-a-time",
    followUpMode: placement.followUpMode ?? "one-at-a-time",
    contextWindow: positive("contextWindow", 1) ?? model.contextWindow ?? 0,
    reserveTokens: positive("reserveTokens", 0) ?? DEFAULT_RESERVE_TOKENS,
    keepRecentTokens: positive("keepRecentTokens", 0) ?? DEFAULT_KEEP_RECENT_TOKENS,
    maxRepeatedCalls: positive("maxRepeatedCalls", 1) ?? DEFAULT_MAX_REPEATED_CALLS,
    ...(options.maxTokens !== undefined ? { maxTokens: positive("maxTokens", 1) } : {}),
    depth: placement.depth ?? 0,
    maxDelegationDepth: placement.maxDelegationDepth ?? positive("maxDelegationDepth", 0) ?? DEFAULT_MAX_DELEGATION_DEPTH,
    ...(placement.parentSession !== undefined ? { parentSession: placement.parentSession } : {}),
    traceFile,
  };
  const deps: EngineDeps = {
    model,
    tools,
    toolSpecs,
    permissions,
    hooks,
    ...(options.summarize ? { summarize: options.summarize } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  };
  const runOptions: Record<string, unknown> = {
    model: model.name,
    maxTurns,
    maxToolCalls,
    timeoutMs,
    cwd,
    ...(options.systemPrompt !== undefined ? { systemPrompt: options.systemPrompt } : {}),
    ...(options.sessionId !== undefined || placement.sessionId !== undefined ? { continued: true } : {}),
    ...(loop.contextWindow > 0 ? { contextWindow: loop.contextWindow, reserveTokens: loop.reserveTokens, keepRecentTokens: loop.keepRecentTokens } : {}),
    maxRepeatedCalls: loop.maxRepeatedCalls,
    ...(placement.steeringMode !== undefined ? { steeringMode: loop.steeringMode, followUpMode: loop.followUpMode } : {}),
    ...(loop.maxTokens !== undefined ? { maxTokens: loop.maxTokens } : {}),
    ...(loop.depth > 0 ? { depth: loop.depth } : {}),
    maxDelegationDepth: loop.maxDelegationDepth,
    hooks: Object.keys(hooks),
    permissions: {
      mode: permissions.mode ?? "default",
      allow: permissions.allow ?? [],
      ask: permissions.ask ?? [],
      deny: permissions.deny ?? [],
      onAsk: permissions.onAsk !== undefined,
      ...(permissions.whenUnanswered !== undefined ? { whenUnanswered: permissions.whenUnanswered } : {}),
    },
    tools: [...tools.values()].map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema,
      risk: t.risk,
      executionMode: t.executionMode,
      ...(t.timeoutMs !== undefined ? { timeoutMs: t.timeoutMs } : {}),
    })),
  };
  return {
    input: {
      sessionId,
      userInput,
      cwd,
      ...(options.systemPrompt !== undefined ? { systemPrompt: options.systemPrompt } : {}),
      maxTurns,
      maxToolCalls,
      timeoutMs,
      deps,
      loop,
      ...(placement.inbox ? { inbox: placement.inbox } : {}),
      ...(placement.history ? { history: placement.history } : {}),
    },
    traceFile,
    runOptions,
    settings: {
      userInput,
      ...(options.systemPrompt !== undefined ? { systemPrompt: options.systemPrompt } : {}),
      ...(model.name !== undefined ? { model: model.name } : {}),
      ...(isHttpUrl(model.baseUrl) ? { baseUrl: model.baseUrl, keySent: model.sendsKey === true } : {}),
      maxTurns,
      maxToolCalls,
      timeoutMs,
      traceFile,
      permissions: {
        mode: permissions.mode ?? "default",
        allow: [...(permissions.allow ?? [])],
        ask: [...(permissions.ask ?? [])],
        deny: [...(permissions.deny ?? [])],
        ...(permissions.whenUnanswered !== undefined ? { whenUnanswered: permissions.whenUnanswered } : {}),
      },
      maxRepeatedCalls: loop.maxRepeatedCalls,
      ...(loop.maxTokens !== undefined ? { maxTokens: loop.maxTokens } : {}),
      ...(options.contextWindow !== undefined ? { contextWindow: options.contextWindow } : {}),
      ...(options.reserveTokens !== undefined ? { reserveTokens: options.reserveTokens } : {}),
      ...(options.keepRecentTokens !== undefined ? { keepRecentTokens: options.keepRecentTokens } : {}),
      maxDelegationDepth: loop.maxDelegationDepth,
    },
    ...(placement.forkedAt ? { forkedAt: placement.forkedAt } : {}),
  };
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
