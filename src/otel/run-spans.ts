import type { Attributes, Context, Link, Span, Tracer } from "@opentelemetry/api";
import type { ToolCall, ToolResult } from "../models/messages.js";
import type { ObservedCall, ObservedRun } from "../observers/observed-run.js";
import type { StateEntered } from "../observers/observe.js";
import type { RunSummary } from "../observers/run-summary.js";
import type { SuspendedEvent } from "../events.js";
import { redactText } from "../record/redact.js";
import type { OtelApi } from "./api.js";
import { ATTR, EVENT } from "./conventions.js";
import { finalOutput, inputMessages, outputMessages, redactedJson, systemInstructions } from "./content.js";
import { spanContextOf } from "./trace-context.js";

/** What every run of one observer shares: the API, the tracer and the options. */
export interface SpanSettings {
  api: OtelApi;
  tracer: Tracer;
  agentName: string;
  captureContent: boolean;
  /** Emit the names the conventions moved away from beside the new ones (no OTEL_SEMCONV_STABILITY_OPT_IN). */
  legacyNames: boolean;
  /** The values redacted from what a span carries (the run's, set as it starts). */
  secrets: readonly string[];
}

// Every time given is Date.now()'s (as the states' entry times are), so that a backend orders the spans and events
// of a run on one clock.

// SpanKind and SpanStatusCode values (the API's enums, as numbers: the same in every copy of the API).
const INTERNAL = 0;
const CLIENT = 2;
const ERROR = 2;

/**
 * The spans of one run: its `invoke_agent` span, the `chat` span of the model call in progress, and an
 * `execute_tool` span per tool call until its result.
 */
export class RunSpans {
  readonly agent: Span;
  private readonly agentContext: Context;
  private readonly common: Attributes;
  private readonly chatBase: Attributes;
  private chat: Span | undefined;
  private readonly tools = new Map<string, Span>();
  private ended = false;
  /** The calls of the current model response, as last heard. */
  batch: readonly ObservedCall[] = [];
  /** When the last state was entered. */
  private enteredAt = 0;

  constructor(
    private readonly settings: SpanSettings,
    entered: StateEntered,
    parent: Context,
  ) {
    const { api, tracer, agentName } = settings;
    const { context } = entered;
    const model = context.deps.model;
    const provider = model.provider ?? "_OTHER";
    this.common = { [ATTR.provider]: provider, [ATTR.conversation]: context.run.sessionId };
    if (settings.legacyNames) this.common[ATTR.system] = provider;
    // Made once per run: every model call of the run goes to the same model.
    this.chatBase = { [ATTR.operation]: "chat", ...this.common, [ATTR.requestModel]: model.name, ...serverOf(model.baseUrl) };
    const attributes: Attributes = { [ATTR.operation]: "invoke_agent", ...this.common, [ATTR.agentName]: agentName, [ATTR.requestModel]: model.name, ...serverOf(model.baseUrl) };
    const links: Link[] = [];
    const resumedFrom = spanContextOf(context.run.resumedFrom);
    if (resumedFrom) links.push({ context: resumedFrom, attributes: { "statecraft.link": "resumed_from" } });
    if (context.run.resumedFrom) attributes[ATTR.resumed] = true;
    if (settings.captureContent) {
      attributes[ATTR.inputMessages] = redactedJson([{ role: "user", parts: [{ type: "text", content: context.run.userInput }] }], settings.secrets);
      if (context.run.systemPrompt !== undefined) attributes[ATTR.systemInstructions] = redactedJson([{ type: "text", content: context.run.systemPrompt }], settings.secrets);
    }
    this.agent = tracer.startSpan(`invoke_agent ${agentName}`, { kind: INTERNAL, attributes, links, startTime: entered.time }, parent);
    this.agentContext = api.trace.setSpan(parent, this.agent);
  }

  /** A state was entered: its event on the run's span, and the model call's span begun or ended. */
  state(entered: StateEntered): void {
    const { state, context } = entered;
    this.batch = context.batch;
    this.enteredAt = entered.time;
    this.agent.addEvent(EVENT.state, { [ATTR.state]: state, [ATTR.turn]: context.turn }, entered.time);
    if (this.chat !== undefined && state !== "call_model" && state !== "stream_text") this.endChat(entered);
    if (state === "call_model" && this.chat === undefined) this.startChat(entered);
  }

  private startChat(entered: StateEntered): void {
    const { context } = entered;
    const model = context.deps.model;
    const attributes: Attributes = { ...this.chatBase, [ATTR.turn]: context.turn };
    if (this.settings.captureContent) {
      const messages = context.messages.toArray();
      attributes[ATTR.inputMessages] = inputMessages(messages, this.settings.secrets);
      const system = systemInstructions(messages, this.settings.secrets);
      if (system !== undefined) attributes[ATTR.systemInstructions] = system;
    }
    this.chat = this.settings.tracer.startSpan(`chat ${model.name}`, { kind: CLIENT, attributes, startTime: entered.time }, this.agentContext);
  }

  /** The model call ended: with its response, with a failure recover judges, or with the run stopping. */
  private endChat(entered: StateEntered): void {
    const span = this.chat!;
    this.chat = undefined;
    const { context, event } = entered;
    const response = context.call.response;
    if (event.type === "callModel.done" && response) {
      const attributes: Attributes = { [ATTR.finishReasons]: [response.finishReason] };
      const model = response.providerMetadata?.model;
      if (typeof model === "string") attributes[ATTR.responseModel] = model;
      if (response.usage) {
        attributes[ATTR.inputTokens] = response.usage.input;
        attributes[ATTR.outputTokens] = response.usage.output;
        if (response.usage.cached !== undefined) attributes[ATTR.cacheReadTokens] = response.usage.cached;
        if (response.usage.reasoning !== undefined) attributes[ATTR.reasoningTokens] = response.usage.reasoning;
      }
      if (this.settings.captureContent) {
        const ids = entered.state === "done" ? [] : context.batch.map((r) => r.call.id);
        attributes[ATTR.outputMessages] = outputMessages(response, ids, this.settings.secrets);
      }
      span.setAttributes(attributes);
    } else if (entered.state === "recover" && context.outcome.failure) {
      this.fail(span, context.outcome.failure.code, context.outcome.failure.message);
    } else {
      this.fail(span, context.outcome.stopError?.code ?? context.outcome.stopReason ?? "_OTHER", context.outcome.stopError?.message);
    }
    span.end(entered.time);
  }

  /** A retry of the model call in progress (the provider's), or a compaction, or a queued message joining. */
  retry(attempt: number, delayMs: number, error: { code: string; message: string }): void {
    (this.chat ?? this.agent).addEvent(EVENT.retry, {
      [ATTR.retryAttempt]: attempt,
      [ATTR.retryDelay]: delayMs,
      [ATTR.errorType]: error.code,
      "exception.message": redactText(error.message, this.settings.secrets),
    }, Date.now());
  }

  compaction(tokensBefore: number, tokensAfter: number): void {
    // Told after the state its step led into (call_model): it happened as that state was entered.
    this.agent.addEvent(EVENT.compaction, { [ATTR.tokensBefore]: tokensBefore, [ATTR.tokensAfter]: tokensAfter }, this.enteredAt);
  }

  userMessage(source: string): void {
    this.agent.addEvent(EVENT.userMessage, { "statecraft.source": source }, Date.now());
  }

  /** The span of a tool call, begun now if it has none yet (a subagent may ask for it before its start is heard). */
  toolSpan(call: ToolCall): Span {
    let span = this.tools.get(call.id);
    if (span === undefined) {
      const attributes: Attributes = { [ATTR.operation]: "execute_tool", ...this.common, [ATTR.toolName]: call.name, [ATTR.toolCallId]: call.id, [ATTR.toolType]: "function" };
      if (this.settings.captureContent) attributes[ATTR.toolArguments] = redactedJson(call.input, this.settings.secrets);
      span = this.settings.tracer.startSpan(`execute_tool ${call.name}`, { kind: INTERNAL, attributes, startTime: Date.now() }, this.agentContext);
      this.tools.set(call.id, span);
    }
    return span;
  }

  /** Where a subagent run of tool call `id` starts: under the call's span, named for the subagent tool. */
  subagentContext(id: string): { parent: Context; name: string } {
    const call = findCall(this.batch, id)?.call ?? { id, name: this.settings.agentName, input: undefined, sessionId: "" };
    return { parent: this.settings.api.trace.setSpan(this.agentContext, this.toolSpan(call)), name: call.name };
  }

  /** A tool call's result is known (it ran, failed, or was refused): its span ends with the outcome. */
  toolResult(call: ToolCall, result: ToolResult, run: ObservedRun): void {
    const span = this.toolSpan(call);
    this.tools.delete(call.id);
    const record = findCall(run.batch, call.id);
    const attributes: Attributes = {};
    if (record) {
      attributes[ATTR.toolStatus] = record.status;
      if (record.durationMs !== undefined) attributes[ATTR.toolDuration] = record.durationMs;
      const permission = record.permission;
      if (permission) {
        attributes[ATTR.permissionDecision] = permission.decision;
        attributes[ATTR.permissionBy] = permission.by;
        if (permission.rule) attributes[ATTR.permissionRule] = redactText(permission.rule, this.settings.secrets);
        if (permission.answeredBy !== undefined) attributes[ATTR.answeredBy] = redactText(permission.answeredBy, this.settings.secrets);
      }
    }
    if (this.settings.captureContent) attributes[ATTR.toolResult] = redactText(result.content, this.settings.secrets);
    span.setAttributes(attributes);
    if (result.isError) this.fail(span, record?.error?.code ?? errorCodeOf(record), record?.error?.message ?? result.content);
    span.end(Date.now());
  }

  /** The run stopped at questions: its span ends with the suspension (its resumption links to it). */
  suspended(event: SuspendedEvent): void {
    this.agent.addEvent(EVENT.suspended, { [ATTR.pending]: event.pending.map((p) => p.callId) }, Date.now());
    this.agent.setAttributes({ [ATTR.runId]: event.runId, [ATTR.runStatus]: "suspended" });
  }

  /** The run ended: the totals, the stop reason, the status; spans still open end with it. */
  finished(summary: RunSummary, time: number): void {
    if (this.ended) return;
    this.ended = true;
    const attributes: Attributes = {
      [ATTR.inputTokens]: summary.usage.input,
      [ATTR.outputTokens]: summary.usage.output,
      [ATTR.cacheReadTokens]: summary.usage.cached,
      [ATTR.turns]: summary.turns,
      [ATTR.toolCalls]: summary.toolCalls,
    };
    if (summary.usage.reasoning) attributes[ATTR.reasoningTokens] = summary.usage.reasoning;
    const stopped = summary.status === "completed" ? (summary.error?.code ?? summary.reason) : "suspended";
    if (this.chat) {
      this.fail(this.chat, stopped);
      this.chat.end(time);
      this.chat = undefined;
    }
    for (const span of this.tools.values()) {
      this.fail(span, stopped);
      span.end(time);
    }
    this.tools.clear();
    if (summary.status === "completed") {
      attributes[ATTR.stopReason] = summary.reason;
      attributes[ATTR.runStatus] = "completed";
      attributes[ATTR.finishReasons] = [summary.reason];
      if (this.settings.captureContent) attributes[ATTR.outputMessages] = finalOutput(summary.text, summary.reason, this.settings.secrets);
      this.agent.setAttributes(attributes);
      if (summary.reason !== "final_answer") this.fail(this.agent, summary.error?.code ?? summary.reason, summary.error?.message ?? `the run stopped: ${summary.reason}`);
    } else {
      this.agent.setAttributes(attributes);
    }
    this.agent.end(time);
  }

  /** The run's span as a W3C trace context. */
  spanContext() {
    return this.agent.spanContext();
  }

  private fail(span: Span, type: string, message?: string): void {
    span.setAttribute(ATTR.errorType, type);
    span.setStatus({ code: ERROR, ...(message !== undefined ? { message: redactText(message, this.settings.secrets) } : {}) });
  }
}

function findCall(batch: readonly ObservedCall[], id: string): ObservedCall | undefined {
  for (let i = 0; i < batch.length; i++) if (batch[i].call.id === id) return batch[i];
  return undefined;
}

/** What the audit calls a refused call's error when it has none of its own. */
function errorCodeOf(record: ObservedCall | undefined): string {
  if (record?.status === "denied") return record.permission?.decision === "deny" ? "PERMISSION_DENIED" : "NOT_RUN";
  if (record?.status === "over_limit") return "MAX_TOOL_CALLS";
  return "TOOL_ERROR";
}

/** server.address and server.port of a model's server. */
function serverOf(baseUrl: string | undefined): Attributes {
  if (!baseUrl) return {};
  try {
    const url = new URL(baseUrl);
    const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
    return { [ATTR.serverAddress]: url.hostname, [ATTR.serverPort]: port };
  } catch {
    return {};
  }
}
