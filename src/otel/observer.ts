import type { Context, Tracer, TracerProvider } from "@opentelemetry/api";
import { AgentError } from "../errors/agent-error.js";
import type { EmittedEvent } from "../events.js";
import type { ObservedRun, TraceContext } from "../observers/observed-run.js";
import type { EngineObserver, StateEntered, SubagentStart } from "../observers/observe.js";
import type { RunSummary } from "../observers/run-summary.js";
import { secretValues } from "../record/redact.js";
import { otelApi } from "./api.js";
import { latestConventionsOnly } from "./conventions.js";
import { RunSpans, type SpanSettings } from "./run-spans.js";
import { contextFrom, traceContextOf } from "./trace-context.js";

export interface OpenTelemetryOptions {
  /** The tracer the spans are made with. Default: one of `tracerProvider`'s. */
  tracer?: Tracer;
  /** Default: the global tracer provider (what the application registered with @opentelemetry/api). */
  tracerProvider?: TracerProvider;
  /**
   * Record the conversation: the input and output messages of each model call and of the run, and each tool call's
   * arguments and result, as the GenAI conventions name them, redacted as the trace is. Default false.
   */
  captureContent?: boolean;
  /** `gen_ai.agent.name`, and the run span's name (`invoke_agent {agentName}`). Default "statecraft". */
  agentName?: string;
}

const OPTION_NAMES = ["tracer", "tracerProvider", "captureContent", "agentName"];
const SCOPE = "statecraft";

/**
 * An observer that turns runs into OpenTelemetry spans under the GenAI semantic conventions (docs/observability.md):
 * `invoke_agent` per run, `chat` per model call, `execute_tool` per tool call. Give it to `query({ observers })`,
 * `createSession`, `resume` or `createWorker`; one observer may watch any number of runs, at once or in turn.
 */
export function openTelemetry(options: OpenTelemetryOptions = {}): EngineObserver {
  const fail = (message: string) => new AgentError("INVALID_OPTIONS", `openTelemetry: ${message}`);
  if (options === null || typeof options !== "object") throw fail("options must be an object: { tracer?, tracerProvider?, captureContent?, agentName? }");
  for (const name of Object.keys(options)) if (!OPTION_NAMES.includes(name)) throw fail(`${name} is not an option; the options are ${OPTION_NAMES.join(", ")}`);
  if (options.tracer !== undefined && typeof options.tracer?.startSpan !== "function") throw fail("tracer must be an OpenTelemetry Tracer (with startSpan)");
  if (options.tracerProvider !== undefined && typeof options.tracerProvider?.getTracer !== "function") throw fail("tracerProvider must be an OpenTelemetry TracerProvider (with getTracer)");
  if (options.tracer !== undefined && options.tracerProvider !== undefined) throw fail("give tracer or tracerProvider, not both");
  if (options.captureContent !== undefined && typeof options.captureContent !== "boolean") throw fail("captureContent must be true or false");
  if (options.agentName !== undefined && (typeof options.agentName !== "string" || options.agentName.trim() === "")) throw fail("agentName must be a non-empty string");
  const api = otelApi();
  const tracer = options.tracer ?? (options.tracerProvider ?? api.trace.getTracerProvider()).getTracer(SCOPE);
  const settings: SpanSettings = {
    api,
    tracer,
    agentName: options.agentName ?? "statecraft",
    captureContent: options.captureContent ?? false,
    legacyNames: !latestConventionsOnly(),
    secrets: [],
  };
  return new SpanObserver(settings);
}

/** The observer: the spans of each run it watches, by session (a session has one run at a time). */
class SpanObserver implements EngineObserver {
  private readonly runs = new Map<string, RunSpans>();

  /** `parent`: a subagent's observer starts its runs under the calling tool call's span. */
  constructor(
    private readonly settings: SpanSettings,
    private readonly parent?: Context,
  ) {}

  state(entered: StateEntered): void {
    const sessionId = entered.context.run.sessionId;
    let run = this.runs.get(sessionId);
    if (run === undefined || entered.from === undefined) {
      // The secrets as the run's trace redacts them: the environment's as the run starts.
      run = new RunSpans({ ...this.settings, secrets: secretValues() }, entered, this.parentOf(entered.context));
      this.runs.set(sessionId, run);
    }
    run.state(entered);
  }

  emitted(event: EmittedEvent, context: ObservedRun): void {
    // Text deltas come most often and change no span: passed over first.
    if (event.type === "text_delta" || event.type === "thinking_delta" || event.type === "subagent_event") return;
    const run = this.runs.get(context.run.sessionId);
    if (run === undefined) return;
    run.batch = context.batch;
    switch (event.type) {
      case "tool_start":
        run.toolSpan(event.call);
        return;
      case "tool_result":
        run.toolResult(event.call, event.result, context);
        return;
      case "retry":
        run.retry(event.attempt, event.delayMs, event.error);
        return;
      case "compaction":
        run.compaction(event.tokensBefore, event.tokensAfter);
        return;
      case "user_message":
        run.userMessage(event.source);
        return;
      case "suspended":
        run.suspended(event);
        return;
      default:
        return;
    }
  }

  finished(summary: RunSummary): void {
    const run = this.runs.get(summary.sessionId);
    if (run === undefined) return;
    this.runs.delete(summary.sessionId);
    run.finished(summary, Date.now());
  }

  subagent(start: SubagentStart): EngineObserver | undefined {
    const run = this.runs.get(start.parentSession);
    if (run === undefined) return undefined;
    // The subagent is the agent its tool names (agentTool's name): gen_ai.agent.name and its span's name.
    const { parent, name } = run.subagentContext(start.toolCallId);
    return new SpanObserver({ ...this.settings, agentName: name }, parent);
  }

  // Asked as the run is stored suspended, before its `finished`.
  traceContext(sessionId: string): TraceContext | undefined {
    const run = this.runs.get(sessionId);
    return run ? traceContextOf(run.spanContext()) : undefined;
  }

  /** Where a run's span goes: under the calling tool call, the queued run's client, or the caller's active span. */
  private parentOf(run: ObservedRun): Context {
    if (this.parent) return this.parent;
    const { api } = this.settings;
    return run.run.traceContext ? contextFrom(run.run.traceContext, api.ROOT_CONTEXT) : api.context.active();
  }
}
