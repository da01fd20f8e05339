import type { AnyStateMachine } from "xstate";
import { engineMachine as typedEngineMachine } from "./machine/engine.js";

export { query, type QueryRun } from "./query.js";
export { resume, type ResumeOptions } from "./resume.js";
export { fileRunStore, runsFolder } from "./durable/file-run-store.js";
export type { RunStore, SaveHint, StoredRun, StoredCall, StoredSettings } from "./durable/run-store.js";
export type { RecordedSettings, PermissionSettings, TracedRunOptions, TracedTool } from "./record/settings-record.js";
export type { PendingCall } from "./record/format.js";
export type { CompletedRunResult, SuspendedRunResult } from "./events.js";
export type { QueryOptions } from "./options.js";
export { DEFAULT_MAX_TOOL_CALLS, DEFAULT_MAX_TURNS, DEFAULT_TIMEOUT_MS } from "./options.js";
export type {
  AgentEvent,
  AgentEventType,
  RunResult,
  RunUsage,
  StateEvent,
  TextDeltaEvent,
  ThinkingDeltaEvent,
  RetryEvent,
  ToolStartEvent,
  ToolResultEvent,
  ToolProgressEvent,
  PermissionRequestEvent,
  InspectorEvent,
  UserMessageEvent,
  CompactionEvent,
  SubagentEvent,
  SuspendedEvent,
  TurnEndEvent,
} from "./events.js";
export { AgentError, type AgentErrorCode, type ErrorInfo } from "./errors/agent-error.js";
/**
 * The engine's statechart, for charts (`machineChart(engineMachine)`, the inspector) and XState's own tools. Typed as
 * any machine: its context, events and actors are the engine's own, not part of the API, and change with it.
 */
export const engineMachine: AnyStateMachine = typedEngineMachine;
export { ENGINE_STATES, type EngineStateName } from "./record/engine-states.js";
export { STOP_REASONS, type StopReason } from "./record/stop-reasons.js";
export { defineTool, type ToolConfig, type ToolDefinition, type ToolContext, type ToolOutput, type ToolRisk, type ToolExecutionMode, type AnyTool, type ObjectSchema, type SchemaInput, type ToolCallOf } from "./tools/define-tool.js";
export type { InputValidator, InputCheck } from "./tools/validate.js";
export { scriptedModel, type ScriptedModel, type ScriptedStep, type ScriptStep, type ScriptedToolCall } from "./models/scripted.js";
export type { Model, ModelRequest, ModelResponse, ModelStreamEvent, ModelCallOptions, RawToolCall, ToolSpec, Usage, FinishReason } from "./models/model.js";
export type { Message, SystemMessage, UserMessage, AssistantMessage, ToolMessage, ToolCall, ToolResult, AssistantToolCall } from "./models/messages.js";
export type { PermissionMode, PermissionOptions, PermissionRequest, PermissionAnswer, AskAnswer, WhenUnanswered, PermissionRecord, DecidedBy } from "./permissions/types.js";
export {
  TRACE_VERSION,
  TRACE_LINE_KINDS,
  isKnownTraceLine,
  isUnknownTraceLine,
  type TraceLine,
  type TraceLineBase,
  type StateTraceLine,
  type StateDetails,
  type CommonDetails,
  type TracedResponse,
  type TracedToolResult,
  type RetryTraceLine,
  type CompactionTraceLine,
  type SuspendedTraceLine,
  type ResumedTraceLine,
  type UnknownTraceLine,
  type AnyTraceLine,
} from "./record/format.js";
export type { Logger } from "./logger.js";
export { createSession, type Session } from "./session.js";
export type { SessionOptions, QueueMode } from "./options.js";
export type { AgentHooks, BeforeToolCallResult, PrepareNextTurnResult, ModelErrorAction } from "./hooks.js";
export type { Summarize } from "./compaction/compact.js";
export { agentTool, type AgentToolOptions } from "./agent-tool.js";
export type { RunInfo } from "./tools/define-tool.js";
export { openaiModel } from "./models/openai/openai-model.js";
export type { OpenAIModelOptions, OpenAIEnvironment } from "./models/openai/options.js";
export { anthropicModel } from "./models/anthropic/anthropic-model.js";
export type { AnthropicModelOptions, AnthropicEnvironment } from "./models/anthropic/options.js";
export { aiSdkModel } from "./models/ai-sdk/ai-sdk-model.js";
export type { AiSdkLanguageModel, AiSdkModelOptions, AiSdkCallOptions } from "./models/ai-sdk/options.js";
export {
  builtinTools,
  readFileTool,
  writeFileTool,
  editFileTool,
  listDirTool,
  globTool,
  grepTool,
  bashTool,
  type BuiltinToolOptions,
  type ReadFileInput,
  type WriteFileInput,
  type EditFileInput,
  type ListDirInput,
  type GlobInput,
  type GrepInput,
  type BashInput,
} from "./tools/builtin/index.js";
export { confinePath, resolveRealPath, type ConfinedPath, type WorkspaceRoots } from "./tools/confine.js";
export { ConfinementError, openConfinedDir, openConfinedFile, type DirRef, type OpenMode, type OpenTarget, type OpenedFile } from "./tools/confined-open.js";
export { AGENT_DIR, PROJECT_CONFIG_FILE, PROTECTED_RULES, protectedRuleFor } from "./tools/protected-paths.js";
export { runInProcessGroup, killProcessGroup, type ProcessGroupOptions, type ProcessGroupOutcome } from "./tools/process.js";
export { toolEnv } from "./tools/tool-env.js";
export {
  resolveSandbox,
  scrubEnvironment,
  sandboxSupport,
  type SandboxOption,
  type SandboxSettings,
  type SandboxMode,
  type SandboxNetwork,
  type SandboxEnv,
  type ResolvedSandbox,
  type SandboxSupport,
  type RefusedConnection,
  type RunSandbox,
  type ScrubOptions,
} from "./sandbox/index.js";
export { createPermissionPolicy } from "./permissions/policy.js";
export { parseRule, type PermissionRule } from "./permissions/rules.js";
export { PERMISSION_MODES, type PermissionPolicy, type PolicyVerdict, type PolicyContext } from "./permissions/types.js";
export type { PermissionSubjectKind } from "./tools/define-tool.js";
// The inspector and the trace tools have their own entries (statecraft/inspect, statecraft/trace); re-exported here
// so that code written against the main entry keeps working. From the modules themselves rather than the entries'
// index files: two modules fewer to load (the entry-points test checks both entries export the same values).
export { startInspector } from "./inspect/start.js";
export type { Inspector, InspectorOptions } from "./inspect/server.js";
export type { InspectedRun, InspectedRunInfo, PermissionRequestOptions } from "./inspect/run.js";
export type { InspectObserver } from "./inspect/actors.js";
export { machineChart, chartFromDefinition, type MachineChart, type ChartState, type ChartEdge, type ChartAnyState, type ChartEdgeKind } from "./inspect/chart.js";
export { readTrace, type ReadTraceOptions } from "./record/reader.js";
export type { RecordedResponse, RecordedRawCall } from "./debug/recording.js";
export { loadSession, lastSessionId, summarizeSessions, splitRuns, type TraceSession, type SessionSummary, type ForkPoint } from "./debug/session.js";
export { replay, type ReplayOptions, type ReplayResult, type Divergence } from "./debug/replay.js";
export { fork, forkStart, type ForkOptions, type ForkStart } from "./debug/fork.js";
export { scriptOf, type SessionScript } from "./debug/script.js";
export {
  buildTimeline,
  formatTimeline,
  describeLine,
  timeSummary,
  tokensPerTurn,
  type SessionTimeline,
  type RunTimeline,
  type TimelineEntry,
  type TimeSummary,
  type TurnTokens,
} from "./debug/timeline.js";
export { mcpTools, mcpToolName, mcpToolRisk, type McpToolsHandle, type McpServers, type McpServerConfig, type McpStdioServer, type McpHttpServer, type McpToolsOptions, type McpProtocol } from "./mcp/index.js";
export type { ToolProgress } from "./tools/define-tool.js";
// Types the exports above mention: exported so that code using those exports can name them. The engine's own
// (its context, events, effects) are not among them (test/architecture/exported-types.test.ts).
export type { EngineObserver, StateEntered } from "./observers/observe.js";
export type { SubagentStart } from "./tools/define-tool.js";
export type { TraceContext } from "./record/run-record.js";
export type { BlobFilePart, BlobImagePart, BlobPart, RecordedPart } from "./record/blob-parts.js";
export type { ObservedRun, ObservedRunConfig, ObservedCall, ObservedCallStatus, ObservedConversation } from "./observers/observed-run.js";
export type { EmittedEvent } from "./events.js";
export type { RunSummary, CompletedRunSummary, SuspendedRunSummary, RunTotals } from "./observers/run-summary.js";
export type { AuditLine } from "./observers/audit-writer.js";
export type { TranscriptEntry } from "./record/transcript.js";
export type { StoredAt } from "./durable/run-store.js";
export type { AgentErrorOptions } from "./errors/agent-error.js";
export type { ToolAnnotations } from "./mcp/names.js";
export { isStandardSchema, type StandardSchemaV1, type StandardSchemaProps, type StandardSchemaOptions, type StandardSchemaResult, type StandardSchemaIssue, type StandardSchemaTypes, type InferSchemaOutput } from "./tools/standard-schema.js";
export type { StandardInput, StandardToolConfig } from "./tools/define-tool.js";
export type { ContentPart, TextPart, ImagePart, FilePart, BinaryInput, ContentPartInput, UserContent } from "./models/content.js";
export { contentText } from "./models/content.js";
export type { QueryInput, UserMessageInput, ToolMessageInput, InputMessage } from "./models/input.js";
export type { OutputRequest } from "./models/model.js";
export type { OutputSchema, OutputOf } from "./tools/output-schema.js";
export { outputInstructions } from "./models/output.js";
export type { OnDeny } from "./record/permission-options.js";
