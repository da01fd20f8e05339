import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";

/** A tracer provider keeping every ended span in memory, as the SDK's own tests do. */
export function memoryTracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { provider, spans: () => exporter.getFinishedSpans(), reset: () => exporter.reset() };
}

/** The span of this name (the first, or the only one when `only`). */
export function spanNamed(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((s) => s.name === name);
  if (found.length === 0) throw new Error(`no span "${name}" among ${spans.map((s) => s.name).join(", ")}`);
  return found[0];
}

/** The spans as an indented tree of names, children in start order: what docs/observability.md shows. */
export function spanTree(spans: readonly ReadableSpan[], detail: (span: ReadableSpan) => string = () => ""): string {
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  const children = new Map<string | undefined, ReadableSpan[]>();
  for (const span of spans) {
    const parent = span.parentSpanContext?.spanId;
    const key = parent !== undefined && ids.has(parent) ? parent : undefined;
    children.set(key, [...(children.get(key) ?? []), span]);
  }
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    const list = (children.get(parent) ?? []).slice().sort((a, b) => hr(a.startTime) - hr(b.startTime) || a.name.localeCompare(b.name));
    for (const span of list) {
      const extra = detail(span);
      lines.push(`${"  ".repeat(depth)}${span.name}${extra ? ` ${extra}` : ""}`);
      walk(span.spanContext().spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines.join("\n");
}

const hr = (t: [number, number]) => t[0] * 1e9 + t[1];
