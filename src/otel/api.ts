import { createRequire } from "node:module";
import { AgentError } from "../errors/agent-error.js";

/** The parts of `@opentelemetry/api` statecraft/otel uses. */
export type OtelApi = typeof import("@opentelemetry/api");

let api: OtelApi | undefined;

/**
 * `@opentelemetry/api`, loaded on first use (an optional peer dependency: `import("statecraft")` never loads it).
 * Loaded synchronously, since an observer is made and called synchronously; the API keeps its state on `globalThis`,
 * so this copy and the application's share one tracer provider and context manager.
 */
export function otelApi(): OtelApi {
  if (api) return api;
  try {
    api = createRequire(import.meta.url)("@opentelemetry/api") as OtelApi;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "MODULE_NOT_FOUND") throw error;
    throw new AgentError(
      "INVALID_OPTIONS",
      "statecraft/otel needs the OpenTelemetry API: npm install @opentelemetry/api (and an SDK to export spans, e.g. @opentelemetry/sdk-trace-node with an exporter)",
    );
  }
  return api;
}

/** Whether the application registered anything with the OpenTelemetry API (a tracer provider, a context manager…). */
export function otelInUse(): boolean {
  return api !== undefined || Object.getOwnPropertySymbols(globalThis).some((s) => s.description?.startsWith("opentelemetry.js.api.") ?? false);
}
