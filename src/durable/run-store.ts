import { createHmac, timingSafeEqual } from "node:crypto";
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import type { PendingCall } from "../machine/context.js";

/** The stored form of a run's record format. */
export const RUN_RECORD_VERSION = 1;

/** A tool call of the suspended batch as stored (an error kept as `{ code, message }`). */
export interface StoredCall {
  call: { id: string; name: string; input: unknown; sessionId: string };
  raw: { name: string; arguments: string | Record<string, unknown>; providerId?: string; id?: string };
  status: "pending" | "invalid" | "over_limit" | "allowed" | "denied" | "finished";
  error?: { code: string; message: string };
  permission?: { toolCallId: string; decision: "allow" | "allow_always" | "deny"; by: "rule" | "mode" | "human" | "default"; rule?: string; input?: unknown; answeredBy?: string };
  subject?: string;
  hook?: "blocked" | "edited";
  result?: { content: string; isError: boolean };
  durationMs?: number;
  announced?: boolean;
}

/** What a run was started with, so resume() can start it again the same way (overridable by resume's options). */
export interface StoredSettings {
  userInput: string;
  systemPrompt?: string;
  model?: string;
  /** The model's server (`Model.baseUrl`), when it has one: `statecraft resume` talks to it again. */
  baseUrl?: string;
  /** Whether the model sent an API key to `baseUrl`: only then does `statecraft resume` send the user's key to it. */
  keySent?: boolean;
  maxTurns: number;
  maxToolCalls: number;
  timeoutMs: number;
  traceFile: string | false;
  permissions: { mode: string; allow: string[]; ask: string[]; deny: string[]; whenUnanswered?: "deny" | "suspend" };
  maxRepeatedCalls: number;
  maxTokens?: number;
  contextWindow?: number;
  reserveTokens?: number;
  keepRecentTokens?: number;
  maxDelegationDepth: number;
}

/** Where a stored run stands: the state it was in when it was stored. */
export type StoredAt = "ask_permission" | "call_model" | "execute_tool";

/**
 * What resume() needs of a run: written when it suspends, and as it goes (a checkpoint as each model call and tool
 * batch starts and as each tool call finishes), so a run whose process died can be resumed too (docs/durable.md).
 */
export interface StoredRun {
  v: number;
  sessionId: string;
  runId: string;
  /** `suspended`: stopped at questions; `running`: a checkpoint of a run going on (or whose process died). */
  status: "suspended" | "running";
  at: StoredAt;
  /** ISO time the run suspended, or of the checkpoint. */
  since: string;
  /** The workspace (the run's cwd). */
  cwd: string;
  settings: StoredSettings;
  /** How long the run was active before it suspended: the time it has left is timeoutMs minus this. */
  activeMs: number;
  /** The next trace line's seq (the resumed run goes on from it). */
  traceSeq: number;
  turn: number;
  toolCallCount: number;
  usage: { input: number; output: number; cached: number; reasoning: number };
  /** The conversation, system prompt included, as the model saw it. */
  messages: unknown[];
  batch: StoredCall[];
  batchState: { open: boolean; hitToolLimit: boolean; repeat: { key: string; count: number; refused: boolean } };
  call: { usageAnchor?: { tokens: number; messageCount: number }; overflowCompacted: boolean; modelErrorAttempts: number };
  inbox: { steering: Array<{ role: "user"; content: string }>; followUp: Array<{ role: "user"; content: string }> };
  pending: PendingCall[];
  /** Calls of the batch that had started running (a crash interrupted those without a result). */
  started: string[];
}

/** What a checkpoint knows of the save before it, so a store may write only what changed. */
export interface SaveHint {
  /**
   * How many leading messages of `run.messages` are the very ones of this run's previous save (by this process):
   * the conversation only grows between saves, except when it is rebuilt (compaction), when this is 0.
   */
  unchangedMessages: number;
}

/**
 * Where durable runs are kept. The file store (`fileRunStore`) is the default; a database can stand behind the same
 * four calls. `load` gives undefined when the session has no stored run and throws (naming what is wrong) when the
 * stored run can't be trusted.
 */
export interface RunStore {
  /**
   * Keeps the run (replacing what was kept of it). The run goes on meanwhile: take what you keep of `run` before
   * the first `await`. `hint` lets a store write only what changed since its last save of the run.
   */
  save(run: StoredRun, hint?: SaveHint): Promise<void>;
  load(sessionId: string): Promise<StoredRun | undefined>;
  list(): Promise<StoredRun[]>;
  delete(sessionId: string): Promise<void>;
  /** Takes the run for this process, or throws an AgentError `RUN_BUSY`; the returned function gives it back. */
  lock?(sessionId: string): Promise<() => Promise<void>>;
}

const SIGNATURE_PREFIX = "hmac-sha256:";

function workspaceOf(cwd: string): string {
  try {
    return realpathSync.native(resolve(cwd));
  } catch {
    return resolve(cwd);
  }
}

function mac(key: Buffer, run: StoredRun): Buffer {
  return createHmac("sha256", key).update(JSON.stringify(["statecraft run 1", workspaceOf(run.cwd), run.sessionId, run])).digest();
}

/**
 * The stored run's signature. It covers everything resume() trusts (permission settings, the batch's decisions, the
 * conversation): the agent can write `.agent/` through a tool asked about, but has no key to sign what it wrote.
 */
export function signRun(key: Buffer, run: StoredRun): string {
  return SIGNATURE_PREFIX + mac(key, run).toString("hex");
}

export function verifyRun(key: Buffer, run: StoredRun, sig: unknown): boolean {
  if (typeof sig !== "string" || !sig.startsWith(SIGNATURE_PREFIX)) return false;
  const given = Buffer.from(sig.slice(SIGNATURE_PREFIX.length), "hex");
  const expected = mac(key, run);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
/** An http(s) URL, as a recorded `baseUrl` must be. */
export function isHttpUrl(value: unknown): boolean {
  if (typeof value !== "string") return false;
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}
const AT = new Set(["ask_permission", "call_model", "execute_tool"]);
const STATUSES = new Set(["pending", "invalid", "over_limit", "allowed", "denied", "finished"]);

/**
 * Checks a stored run's shape (its content is untrusted input: a torn or edited file); returns what is wrong, or
 * undefined. The signature is checked separately.
 */
export function runRecordProblem(value: unknown): string | undefined {
  if (!isObject(value)) return "it is not a JSON object";
  if (value.v !== RUN_RECORD_VERSION) return `its version is ${JSON.stringify(value.v)}, this statecraft reads version ${RUN_RECORD_VERSION}`;
  for (const key of ["sessionId", "runId", "since", "cwd"]) if (typeof value[key] !== "string") return `"${key}" is not a string`;
  if (value.status !== "suspended" && value.status !== "running") return `"status" is ${JSON.stringify(value.status)}, not "suspended" or "running"`;
  if (!AT.has(value.at as string)) return `"at" is ${JSON.stringify(value.at)}, not one of ${[...AT].join(", ")}`;
  for (const key of ["activeMs", "traceSeq", "turn", "toolCallCount"]) {
    const n = value[key];
    if (typeof n !== "number" || !Number.isFinite(n) || n < 0) return `"${key}" is not a number ≥ 0`;
  }
  const settings = value.settings;
  if (!isObject(settings)) return `"settings" is not an object`;
  if (typeof settings.userInput !== "string") return `"settings.userInput" is not a string`;
  for (const key of ["maxTurns", "maxToolCalls", "timeoutMs", "maxRepeatedCalls", "maxDelegationDepth"]) {
    if (typeof settings[key] !== "number") return `"settings.${key}" is not a number`;
  }
  if (settings.model !== undefined && typeof settings.model !== "string") return `"settings.model" is not a string`;
  if (settings.baseUrl !== undefined && !isHttpUrl(settings.baseUrl)) return `"settings.baseUrl" is not an http(s) URL`;
  if (settings.keySent !== undefined && typeof settings.keySent !== "boolean") return `"settings.keySent" is not true or false`;
  if (settings.traceFile !== false && typeof settings.traceFile !== "string") return `"settings.traceFile" is neither a path nor false`;
  const p = settings.permissions;
  if (!isObject(p) || typeof p.mode !== "string" || !["allow", "ask", "deny"].every((k) => Array.isArray(p[k]) && (p[k] as unknown[]).every((r) => typeof r === "string"))) {
    return `"settings.permissions" is not { mode, allow, ask, deny }`;
  }
  const usage = value.usage;
  if (!isObject(usage) || !["input", "output", "cached", "reasoning"].every((k) => typeof usage[k] === "number")) return `"usage" is not { input, output, cached, reasoning }`;
  if (!Array.isArray(value.messages) || !value.messages.every((m) => isObject(m) && typeof m.role === "string")) return `"messages" is not a list of messages`;
  if (!Array.isArray(value.batch)) return `"batch" is not a list`;
  for (const [i, r] of value.batch.entries()) {
    if (!isObject(r) || !isObject(r.call) || typeof r.call.id !== "string" || typeof r.call.name !== "string" || !isObject(r.raw) || !STATUSES.has(r.status as string)) {
      return `"batch[${i}]" is not a tool call record`;
    }
  }
  const bs = value.batchState;
  if (!isObject(bs) || typeof bs.open !== "boolean" || !isObject(bs.repeat)) return `"batchState" is not { open, hitToolLimit, repeat }`;
  if (!isObject(value.call) || typeof value.call.modelErrorAttempts !== "number") return `"call" is not { overflowCompacted, modelErrorAttempts }`;
  const inbox = value.inbox;
  if (!isObject(inbox) || !Array.isArray(inbox.steering) || !Array.isArray(inbox.followUp)) return `"inbox" is not { steering, followUp }`;
  if (!Array.isArray(value.pending) || (value.status === "suspended" && value.pending.length === 0)) return `"pending" is not a list of calls (a suspended run has at least one)`;
  for (const [i, c] of value.pending.entries()) {
    if (!isObject(c) || typeof c.callId !== "string" || typeof c.name !== "string" || typeof c.reason !== "string") return `"pending[${i}]" is not { callId, name, input, reason }`;
  }
  if (!Array.isArray(value.started) || !value.started.every((id) => typeof id === "string")) return `"started" is not a list of call ids`;
  return undefined;
}
