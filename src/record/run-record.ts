import type { UserContent } from "../models/content.js";
import type { RecordedPart } from "./blob-parts.js";
import type { PendingCall } from "./format.js";
import type { RecordedSettings } from "./settings-record.js";

/** A tool call of the suspended batch as stored (an error kept as `{ code, message }`). */
export interface StoredCall {
  call: { id: string; name: string; input: unknown; sessionId: string };
  raw: { name: string; arguments: string | Record<string, unknown>; providerId?: string; id?: string };
  status: "pending" | "invalid" | "over_limit" | "allowed" | "denied" | "finished";
  error?: { code: string; message: string };
  permission?: { toolCallId: string; decision: "allow" | "allow_always" | "deny"; by: "rule" | "mode" | "human" | "default"; rule?: string; input?: unknown; answeredBy?: string };
  subject?: string;
  hook?: "blocked" | "edited";
  /** `parts`: an image a tool returned (in a file, named by hash: record/blob-parts.ts). */
  result?: { content: string; isError: boolean; parts?: RecordedPart[] };
  durationMs?: number;
  announced?: boolean;
}

/**
 * What a run was started with, so resume() can start it again the same way (overridable by resume's options): its
 * recorded settings, its request, its model as far as data can say, and its trace file.
 */
export interface StoredSettings extends RecordedSettings {
  userInput: UserContent;
  model?: string;
  /** The model's server (`Model.baseUrl`), when it has one: `statecraft resume` talks to it again. */
  baseUrl?: string;
  /** Whether the model sent an API key to `baseUrl`: only then does `statecraft resume` send the user's key to it. */
  keySent?: boolean;
  /** The model's wire (`Model.provider`: "openai", "anthropic"), recorded with `baseUrl`; absent in older records (openai). */
  provider?: string;
  traceFile: string | false;
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
  inbox: { steering: Array<{ role: "user"; content: UserContent }>; followUp: Array<{ role: "user"; content: UserContent }> };
  pending: PendingCall[];
  /** Calls of the batch that had started running (a crash interrupted those without a result). */
  started: string[];
  /** A suspended run: the trace context its observers left for its resumption (EngineObserver.traceContext). */
  traceContext?: TraceContext;
}

/** A W3C Trace Context (https://www.w3.org/TR/trace-context/): its `traceparent` and `tracestate` fields. */
export interface TraceContext {
  readonly traceparent: string;
  readonly tracestate?: string;
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
