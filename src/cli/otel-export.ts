import type { EngineObserver } from "../observers/observe.js";
import { UsageError } from "./usage-error.js";

/** A run's spans going out to the OTLP endpoint the environment names, and how to flush them before the process ends. */
export interface OtelExport {
  observer: EngineObserver;
  /** Sends what is still buffered and stops the exporter. */
  shutdown(): Promise<void>;
}

const SDK = ["@opentelemetry/api", "@opentelemetry/sdk-trace-node", "@opentelemetry/resources"];
const EXPORTERS: Record<string, string> = {
  "http/protobuf": "@opentelemetry/exporter-trace-otlp-proto",
  "http/json": "@opentelemetry/exporter-trace-otlp-http",
  grpc: "@opentelemetry/exporter-trace-otlp-grpc",
};

/**
 * `--otel` (or `"otel": true` in the config): spans through the OpenTelemetry SDK, set up from the standard variables
 * (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME,
 * OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_PROTOCOL, …: the exporter and the resource detector read them
 * themselves). The SDK packages are the user's to install; a clear message says which when they are missing.
 */
export async function startOtelExport(env: NodeJS.ProcessEnv = process.env): Promise<OtelExport> {
  const exporterName = env.OTEL_TRACES_EXPORTER?.trim() || "otlp";
  if (exporterName !== "otlp") throw new UsageError(`--otel exports over OTLP; OTEL_TRACES_EXPORTER=${exporterName} is not supported (unset it, or set it to otlp)`);
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? "http/protobuf").trim();
  const exporterPackage = EXPORTERS[protocol];
  if (exporterPackage === undefined) throw new UsageError(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not one of ${Object.keys(EXPORTERS).join(", ")}`);
  const [sdk, resources, exporters] = await loadPackages(["@opentelemetry/sdk-trace-node", "@opentelemetry/resources", exporterPackage], exporterPackage);
  const { NodeTracerProvider, BatchSpanProcessor } = sdk as typeof import("@opentelemetry/sdk-trace-node");
  const { resourceFromAttributes, detectResources, envDetector } = resources as typeof import("@opentelemetry/resources");
  const { OTLPTraceExporter } = exporters as typeof import("@opentelemetry/exporter-trace-otlp-proto");
  // The service is "statecraft" unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise.
  const resource = resourceFromAttributes({ "service.name": "statecraft" }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
  // Registered globally: the context manager keeps the spans of the run and its subagents in one trace.
  provider.register();
  const { openTelemetry } = await import("../otel/index.js");
  return { observer: openTelemetry({ tracerProvider: provider }), shutdown: () => provider.shutdown() };
}

/** Imports the packages, or says how to install every one that is missing. */
async function loadPackages(names: readonly string[], exporter: string): Promise<unknown[]> {
  const loaded: unknown[] = [];
  const missing: string[] = [];
  for (const name of [...SDK, ...names.filter((n) => !SDK.includes(n))]) {
    try {
      const module = await import(name);
      if (names.includes(name)) loaded[names.indexOf(name)] = module;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") throw error;
      missing.push(name);
    }
  }
  if (missing.length > 0) {
    throw new UsageError(
      `--otel sends spans through the OpenTelemetry SDK, which is not installed (missing ${missing.join(", ")}). Install it where statecraft is installed: npm install ${[...SDK, exporter].join(" ")}`,
    );
  }
  return loaded;
}
