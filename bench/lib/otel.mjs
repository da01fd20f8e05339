// statecraft/otel for the benches: its observer on a no-op tracer (no SDK registered: the API's own) and on a
// recording one (the SDK's BasicTracerProvider, every span recorded with its attributes and events, then counted and
// dropped by a processor that exports nothing, so the cost measured is the observer's and the SDK's, not a network's).
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import { openTelemetry } from "../../dist/otel/index.js";

/** @param recording false: the no-op tracer @returns { observer, ended(): spans ended so far } */
export function otelObserver(recording) {
  if (!recording) return { observer: openTelemetry(), ended: () => 0 };
  let ended = 0;
  const counter = { onStart() {}, onEnd: () => void ended++, forceFlush: async () => {}, shutdown: async () => {} };
  const provider = new BasicTracerProvider({ spanProcessors: [counter] });
  return { observer: openTelemetry({ tracerProvider: provider }), ended: () => ended };
}
