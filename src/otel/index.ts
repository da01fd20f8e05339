// statecraft/otel: a run as OpenTelemetry spans under the GenAI semantic conventions (docs/observability.md).
export { openTelemetry, type OpenTelemetryOptions } from "./observer.js";
export { CONVENTIONS_VERSION } from "./conventions.js";
export type { TraceContext } from "../record/run-record.js";
