import type { Context, SpanContext } from "@opentelemetry/api";
import type { TraceContext } from "../record/run-record.js";
import { otelApi, otelInUse } from "./api.js";

// W3C Trace Context (https://www.w3.org/TR/trace-context/) read and written here rather than through the global
// propagator: a run carries exactly these two fields whatever propagators the application registered.

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** The span context a traceparent names, or undefined when it is not a valid one. */
export function spanContextOf(carried: TraceContext | undefined): SpanContext | undefined {
  if (!carried || typeof carried.traceparent !== "string") return undefined;
  const match = TRACEPARENT.exec(carried.traceparent.trim());
  if (!match || match[1] === "ff" || (match[1] === "00" && match[5] !== undefined)) return undefined;
  const api = otelApi();
  const spanContext: SpanContext = { traceId: match[2], spanId: match[3], traceFlags: parseInt(match[4], 16) & 1, isRemote: true };
  if (!api.isSpanContextValid(spanContext)) return undefined;
  if (typeof carried.tracestate === "string" && carried.tracestate) spanContext.traceState = api.createTraceState(carried.tracestate);
  return spanContext;
}

/** The trace context of a span context. */
export function traceContextOf(spanContext: SpanContext): TraceContext | undefined {
  const api = otelApi();
  if (!api.isSpanContextValid(spanContext)) return undefined;
  const traceparent = `00-${spanContext.traceId}-${spanContext.spanId}-0${(spanContext.traceFlags & 1).toString(16)}`;
  const tracestate = spanContext.traceState?.serialize();
  return tracestate ? { traceparent, tracestate } : { traceparent };
}

/** A context whose parent span is the one a trace context names (the base context when it names none). */
export function contextFrom(carried: TraceContext | undefined, base: Context): Context {
  const spanContext = spanContextOf(carried);
  return spanContext ? otelApi().trace.setSpanContext(base, spanContext) : base;
}

/**
 * The trace context the caller is in (its active span), for a run queued to run elsewhere (statecraft/dbos), or
 * undefined. Loads nothing when the application uses no OpenTelemetry.
 */
export function activeTraceContext(): TraceContext | undefined {
  if (!otelInUse()) return undefined;
  let api;
  try {
    api = otelApi();
  } catch {
    return undefined;
  }
  const span = api.trace.getSpan(api.context.active());
  return span ? traceContextOf(span.spanContext()) : undefined;
}
