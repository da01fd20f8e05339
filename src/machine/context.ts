import type { UserContent } from "../models/content.js";
import type { AgentError, ErrorInfo } from "../errors/agent-error.js";
import type { RunUsage } from "../events.js";
import type { Message, ToolCall, ToolResult } from "../models/messages.js";
import type { Model, ModelResponse, RawToolCall, ToolSpec } from "../models/model.js";
import type { PermissionAnswer, PermissionOptions, PermissionPolicy, PermissionRecord } from "../permissions/types.js";
import type { AnyTool } from "../tools/define-tool.js";
import type { CompiledOutput } from "../tools/output-schema.js";
import type { StopReason } from "./stop-reasons.js";
import type { Conversation } from "./conversation.js";
import type { AgentHooks } from "../hooks.js";
import type { Summarize } from "../compaction/compact.js";
import type { UsageAnchor } from "../compaction/estimate.js";
import type { QueueMode } from "../events.js";
import type { UserMessage } from "../models/messages.js";
import type { EngineEmitted } from "./engine.js";
import type { PendingCall } from "../record/format.js";
import type { TraceContext } from "../record/run-record.js";
import type { SubagentStart } from "../tools/define-tool.js";

/** Where a call of the current response stands. */
export type CallStatus =
  /** parsed; waiting for validation or permission */
  | "pending"
  /** refused before running (unknown tool, invalid input, truncated response): `error` says why */
  | "invalid"
  /** not run because the run's tool-call budget was spent */
  | "over_limit"
  /** allowed: will run in execute_tool */
  | "allowed"
  /** denied, or not run because another call of the response was denied */
  | "denied"
  /** ran (or failed while running); `result` or `error` is set */
  | "finished";

/** One tool call of the current model response and everything the run learns about it. */
export interface CallRecord {
  call: ToolCall;
  raw: RawToolCall;
  status: CallStatus;
  /** Why the call was refused or how it failed (recover turns it into the call's error result). */
  error?: AgentError;
  /** A tool error that ends the run (`TOOL_FATAL`). */
  fatal?: boolean;
  permission?: PermissionRecord;
  /** What the permission decision saw (the real path, the command): execute_tool re-checks the call against it. */
  subject?: string;
  /** What `beforeToolCall` did to the call. */
  hook?: "blocked" | "edited";
  result?: ToolResult;
  durationMs?: number;
  /** Set once a `tool_result` event was announced for this call. */
  announced?: boolean;
}

/** The run's collaborators: what the actors use to do I/O. Not data; kept apart from the run's state. */
export interface EngineDeps {
  model: Model;
  tools: ReadonlyMap<string, AnyTool>;
  toolSpecs: readonly ToolSpec[];
  permissions: PermissionOptions;
  /** Built in build_context from `permissions` and the session's remembered rules. */
  policy?: PermissionPolicy;
  signal?: AbortSignal;
  hooks: AgentHooks;
  summarize?: Summarize;
  /** Where a subagent's events go: up to the parent run's caller. */
  relay?: (event: EngineEmitted) => void;
  /** A hosted run's (statecraft/dbos) way to host its subagents' runs as itself: their lines go where its lines go. */
  hostSubagent?: (child: unknown) => void;
  /** The observers the run's own observers give a subagent started by one of its tool calls (EngineObserver.subagent). */
  observeSubagent?: (start: SubagentStart) => unknown[];
  /** Where warnings go (the run's logger): e.g. a transcript line the engine did not write, ignored. */
  warn?: (message: string) => void;
  /**
   * Before each model call and each event it streams: a promise while the run's caller lags too far behind the
   * run's events (the query bridge's backlog), undefined otherwise. It settles when the caller caught up or the
   * signal aborts, so a run never holds more undelivered events than the bound plus one step's.
   */
  pace?: (signal: AbortSignal) => Promise<void> | undefined;
  /** The run's sandbox (src/sandbox/): the tools' processes run inside it. */
  sandbox?: import("../sandbox/index.js").RunSandbox;
  /** Makes the engine's own tool-call ids (default random): a replayed DBOS workflow must make the same ones. */
  newCallId?: () => string;
  /** The run's `output` option, compiled, and how many times a non-matching answer is sent back (`outputRetries`). */
  output?: CompiledOutput & { retries: number };
}

/** Messages waiting to enter the conversation. */
export interface Inbox {
  /** Enter before the next model call. */
  steering: UserMessage[];
  /** Enter only when the agent would otherwise stop. */
  followUp: UserMessage[];
}

/** Run settings of the two-level loop (steering, compaction, loop guards, delegation). */
export interface LoopSettings {
  steeringMode: QueueMode;
  followUpMode: QueueMode;
  /** Tokens; 0 when neither the option nor the model gives one (no compaction). */
  contextWindow: number;
  reserveTokens: number;
  keepRecentTokens: number;
  maxRepeatedCalls: number;
  maxTokens?: number;
  depth: number;
  maxDelegationDepth: number;
  parentSession?: string;
  /** The trace file, which subagents inherit. */
  traceFile: string | false;
}

/** What a run was started with: fixed for the whole run. */
export interface RunConfig {
  sessionId: string;
  userInput: UserContent;
  cwd: string;
  systemPrompt?: string;
  maxTurns: number;
  maxToolCalls: number;
  timeoutMs: number;
  startedAt: number;
  deadline: number;
  /** The W3C trace context the run continues (a queued run's client's), for observers (statecraft/otel). */
  traceContext?: TraceContext;
  /** A resumed run: the trace context its suspended part left. */
  resumedFrom?: TraceContext;
}

/** The model call in progress, and what prepares the next one. */
export interface CallState {
  /** Text streamed by the model call in progress (kept if the call is cut off). */
  streamingText: string;
  /** The last model output. */
  response?: ModelResponse;
  /** True once build_context assembled the first request of the run. */
  contextBuilt: boolean;
  /** Tokens known at the last reported usage, for the compaction estimate. */
  usageAnchor?: UsageAnchor;
  /** The last compaction, for the trace. */
  compaction?: { tokensBefore: number; tokensAfter: number; summary: string };
  /** build_context must compact now (after an overflow), keeping at most this many recent tokens. */
  compactNow?: number;
  /** The next model call repeats the failed request: not a new turn. */
  retrying: boolean;
  /** `onModelError` answers so far for the failing request (attempt numbers from 1). */
  modelErrorAttempts: number;
  /** A context overflow was already handled by compaction in this run (never a cascade). */
  overflowCompacted: boolean;
}

/** Where the current response's tool calls stand as a whole. */
export interface BatchState {
  /** True while the current response's assistant message awaits its tool results in `messages`. */
  open: boolean;
  /** True when some call of the batch was not run because the tool-call budget was spent. */
  hitToolLimit: boolean;
  /** The identical-call guard: the last call's key and how many times in a row it came. */
  repeat: { key: string; count: number; refused: boolean };
}

/** The inbox during a run, with what build_context last took from it. */
export interface InboxState extends Inbox {
  claimed: UserMessage[];
  claimedFrom?: "steering" | "follow_up";
}

/** How the run is ending, or why it may. */
export interface Outcome {
  /** An error that is not a tool call's own (model request, build_context), for recover to judge. */
  failure?: AgentError;
  /** The state whose actor failed. */
  failedIn?: "build_context" | "call_model" | "ask_permission" | "execute_tool";
  stopReason?: StopReason;
  stopError?: ErrorInfo;
  /** The final assistant text. */
  finalText: string;
  /** With `output`: the answer as validate_output parsed it, once it matched. */
  output?: unknown;
  /** With `output`: the last answer's errors, while it did not match. */
  outputErrors?: string;
  /** With `output`: answers validate_output has checked. */
  outputAttempts?: number;
}

// Declared with the trace format (src/record/), whose suspended line lists them.
export type { PendingCall } from "../record/format.js";

/** Where the run stands as a durable run: its id, the questions it stopped at, the answers it resumed with. */
export interface DurableState {
  /** The run's id, kept across suspension and resume. */
  runId: string;
  /** On a resumed run, until it got there: the state it goes back to (build_context has nothing to build then). */
  resumeAt?: ResumeTarget;
  /** The questions the run stopped at (set when it suspends). */
  pending?: PendingCall[];
  /** Answers given to resume(), by call id. */
  answers?: Readonly<Record<string, PermissionAnswer>>;
  answeredBy?: string;
}

/**
 * The seed's TurnContext: the data one run shares across its states. Kept to a few top-level groups on purpose:
 * every `assign` copies the top level, and a wide object makes each step several times dearer.
 */
export interface EngineContext {
  run: RunConfig;
  loop: LoopSettings;
  deps: EngineDeps;
  /** Model calls started so far. */
  turn: number;
  /** Tool executions so far. */
  toolCallCount: number;
  usage: RunUsage;
  /**
   * The conversation: a value like the rest of the context; adding a message makes a new conversation that shares
   * the earlier one's messages (a copy per step would make a run quadratic in its length).
   */
  messages: Conversation;
  /** Tool calls of the current response, in call order. */
  batch: readonly CallRecord[];
  batchState: BatchState;
  call: CallState;
  inbox: InboxState;
  outcome: Outcome;
  durable: DurableState;
}

/**
 * Where a resumed run re-enters the machine: the question it suspended at (or was asked when its process died), the
 * model call in flight when it died, the tool batch it was running, or the results of a batch that needs no more runs.
 */
export type ResumeTarget = "ask_permission" | "model" | "execute_tool" | "append_tool_result";

/** What a resumed run starts from: the suspended run's state as it was stored (docs/durable.md). */
export interface ResumePoint {
  at: ResumeTarget;
  turn: number;
  toolCallCount: number;
  usage: RunUsage;
  batch: readonly CallRecord[];
  batchState: BatchState;
  call: Pick<CallState, "usageAnchor" | "overflowCompacted" | "modelErrorAttempts">;
  answers: Readonly<Record<string, PermissionAnswer>>;
  answeredBy?: string;
}

/** What `createActor(engineMachine, { input })` needs. */
export interface EngineInput extends Omit<RunConfig, "startedAt" | "deadline"> {
  /** Conversation before this run (a continued session); the new user message is added by build_context. */
  history?: readonly Message[];
  /** Queued messages the run may claim. */
  inbox?: Inbox;
  loop: LoopSettings;
  /** Default: when the actor is created. The deadline is startedAt + timeoutMs. */
  startedAt?: number;
  deps: EngineDeps;
  /** Default: a new id. */
  runId?: string;
  /** Resume a suspended run: the machine re-enters ask_permission with this state (history holds its messages). */
  resume?: ResumePoint;
}
