/**
 * The OpenTelemetry GenAI semantic conventions statecraft/otel follows: v1.41.0 (development status). Each name here
 * is the conventions' own, or statecraft's (`statecraft.*`) where they have none.
 */
export const CONVENTIONS_VERSION = "1.41.0";

export const ATTR = {
  operation: "gen_ai.operation.name",
  provider: "gen_ai.provider.name",
  /** The provider's name before v1.37.0, emitted beside gen_ai.provider.name unless the latest conventions are asked for. */
  system: "gen_ai.system",
  agentName: "gen_ai.agent.name",
  conversation: "gen_ai.conversation.id",
  requestModel: "gen_ai.request.model",
  responseModel: "gen_ai.response.model",
  finishReasons: "gen_ai.response.finish_reasons",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  cacheReadTokens: "gen_ai.usage.cache_read.input_tokens",
  reasoningTokens: "gen_ai.usage.reasoning.output_tokens",
  inputMessages: "gen_ai.input.messages",
  outputMessages: "gen_ai.output.messages",
  systemInstructions: "gen_ai.system_instructions",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  toolArguments: "gen_ai.tool.call.arguments",
  toolResult: "gen_ai.tool.call.result",
  errorType: "error.type",
  serverAddress: "server.address",
  serverPort: "server.port",
  // statecraft's own
  state: "statecraft.state",
  turn: "statecraft.turn",
  stopReason: "statecraft.stop_reason",
  runId: "statecraft.run.id",
  runStatus: "statecraft.run.status",
  turns: "statecraft.turns",
  toolCalls: "statecraft.tool_calls",
  pending: "statecraft.pending_calls",
  resumed: "statecraft.resumed",
  parentSession: "statecraft.parent_session",
  depth: "statecraft.depth",
  permissionDecision: "statecraft.permission.decision",
  permissionBy: "statecraft.permission.by",
  permissionRule: "statecraft.permission.rule",
  answeredBy: "statecraft.permission.answered_by",
  toolStatus: "statecraft.tool.status",
  toolDuration: "statecraft.tool.duration_ms",
  retryAttempt: "statecraft.retry.attempt",
  retryDelay: "statecraft.retry.delay_ms",
  tokensBefore: "statecraft.compaction.tokens_before",
  tokensAfter: "statecraft.compaction.tokens_after",
} as const;

/** Span event names. */
export const EVENT = {
  state: "statecraft.state",
  retry: "statecraft.retry",
  compaction: "statecraft.compaction",
  userMessage: "statecraft.user_message",
  suspended: "statecraft.suspended",
} as const;

/**
 * Whether `OTEL_SEMCONV_STABILITY_OPT_IN` asks for the latest experimental GenAI conventions only
 * (`gen_ai_latest_experimental`): then the names the conventions moved away from are not emitted beside the new ones.
 */
export function latestConventionsOnly(env: NodeJS.ProcessEnv = process.env): boolean {
  return (env.OTEL_SEMCONV_STABILITY_OPT_IN ?? "")
    .split(",")
    .map((s) => s.trim())
    .includes("gen_ai_latest_experimental");
}
