/**
 * End to end over the wire: the OpenTelemetry SDK's own OTLP/HTTP exporters send a run's spans to a receiver on
 * 127.0.0.1 that decodes them (JSON and protobuf), from `query()` and from `statecraft run --otel`.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { query, scriptedModel } from "../../src/index.js";
import { openTelemetry } from "../../src/otel/index.js";
import { collect, echoTool as echo } from "../support/engine.js";
import { makeTempDir, removeDir, runCli } from "../cli/helpers/cli-process.js";
import { receivedTree, startReceiver, type ReceivedSpan } from "./receiver.js";

let cwd: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeEach(async () => {
  cwd = makeTempDir("statecraft-otlp-");
  receiver = await startReceiver();
});
afterEach(async () => {
  await receiver.close();
  removeDir(cwd);
});

const named = (spans: readonly ReceivedSpan[], name: string) => spans.filter((s) => s.name === name);
const PLAIN_TREE = ["invoke_agent statecraft", "  chat script", "  chat script", "  execute_tool echo"].join("\n");

/** Checks the spans of a plain run with one echo call, as a backend gets them. */
function expectPlainRun(spans: readonly ReceivedSpan[], sessionId: string) {
  expect(receivedTree(spans)).toBe(PLAIN_TREE);
  expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
  expect(spans[0].traceId).toMatch(/^[0-9a-f]{32}$/);
  const [agent] = named(spans, "invoke_agent statecraft");
  expect(agent.kind).toBe(1); // SPAN_KIND_INTERNAL
  expect(agent.attributes).toMatchObject({ "gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": sessionId, "statecraft.stop_reason": "final_answer", "statecraft.turns": 2 });
  expect(agent.events.filter((e) => e === "statecraft.state").length).toBeGreaterThan(5);
  for (const chat of named(spans, "chat script")) {
    expect(chat.kind).toBe(3); // SPAN_KIND_CLIENT
    expect(chat.attributes).toMatchObject({ "gen_ai.operation.name": "chat", "gen_ai.request.model": "script" });
  }
  const [tool] = named(spans, "execute_tool echo");
  expect(tool.attributes).toMatchObject({ "gen_ai.tool.name": "echo", "gen_ai.tool.type": "function", "statecraft.permission.decision": "allow" });
  expect(tool.attributes["gen_ai.usage.input_tokens"]).toBeUndefined();
  expect(named(spans, "chat script").map((c) => c.attributes["gen_ai.response.finish_reasons"])).toEqual(expect.arrayContaining([["tool_calls"], ["stop"]]));
}

describe("OTLP/HTTP to a local receiver", () => {
  it("from query(): the SDK's JSON exporter delivers the run's span tree", async () => {
    const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${receiver.url}/v1/traces` }))] });
    const model = scriptedModel([{ toolCalls: [{ name: "echo", input: { text: "a" } }] }, { text: "Done." }]);
    const { result } = await collect(query("go", { model, cwd, tools: [echo], observers: [openTelemetry({ tracerProvider: provider })] }));
    await provider.shutdown();
    expect(receiver.contentTypes.every((t) => t.startsWith("application/json"))).toBe(true);
    expectPlainRun(receiver.spans, result.sessionId);
  });

  const script = () => {
    const file = join(cwd, "case.json");
    writeFileSync(file, JSON.stringify([{ toolCalls: [{ name: "read_file", input: { path: "note.txt" } }] }, { text: "Read it." }]));
    writeFileSync(join(cwd, "note.txt"), "hello\n");
    return `script:${file}`;
  };

  for (const protocol of ["http/protobuf", "http/json"] as const) {
    it(`from statecraft run --otel (${protocol}): spans and the service name from the OTEL_* variables`, async () => {
      const result = await runCli(["run", "--otel", "--json", "--model", script(), "read note.txt"], {
        cwd,
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: protocol, OTEL_SERVICE_NAME: "notes-agent", OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test" },
      });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      const end = result.stdout.trim().split("\n").map((l) => JSON.parse(l)).at(-1);
      expect(end).toMatchObject({ type: "turn_end", reason: "final_answer" });
      expect(receiver.contentTypes.length).toBeGreaterThan(0);
      expect(receiver.contentTypes.every((t) => t.startsWith(protocol === "http/json" ? "application/json" : "application/x-protobuf"))).toBe(true);
      const spans = receiver.spans;
      const chat = `chat script:${join(cwd, "case.json")}`;
      expect(receivedTree(spans)).toBe(["invoke_agent statecraft", `  ${chat}`, `  ${chat}`, "  execute_tool read_file"].join("\n"));
      expect(spans[0].resource).toMatchObject({ "service.name": "notes-agent", "deployment.environment": "test" });
      const [agent] = named(spans, "invoke_agent statecraft");
      expect(agent.attributes).toMatchObject({ "gen_ai.conversation.id": end.sessionId, "statecraft.stop_reason": "final_answer", "gen_ai.usage.input_tokens": 0 });
      const [tool] = named(spans, "execute_tool read_file");
      expect(tool.parentSpanId).toBe(agent.spanId);
      expect(tool.attributes).toMatchObject({ "statecraft.permission.decision": "allow", "statecraft.tool.status": "finished" });
    });
  }

  it('"otel": true in statecraft.config.json does what --otel does', async () => {
    writeFileSync(join(cwd, "statecraft.config.json"), JSON.stringify({ otel: true }));
    const result = await runCli(["run", "--json", "--model", script(), "read note.txt"], { cwd, env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" } });
    expect(result.code).toBe(0);
    expect(named(receiver.spans, "invoke_agent statecraft")).toHaveLength(1);
    expect(receiver.spans[0].resource["service.name"]).toBe("statecraft");
  });

  it("says what to install when the SDK's exporter for the protocol is missing, and what is wrong with a bad setting", async () => {
    // The gRPC exporter is not installed here: the CLI names it, and the command to install.
    const missing = await runCli(["run", "--otel", "--model", script(), "x"], { cwd, env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" } });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("missing @opentelemetry/exporter-trace-otlp-grpc");
    expect(missing.stderr).toContain("npm install @opentelemetry/api @opentelemetry/sdk-trace-node @opentelemetry/resources @opentelemetry/exporter-trace-otlp-grpc");
    const protocol = await runCli(["run", "--otel", "--model", script(), "x"], { cwd, env: { OTEL_EXPORTER_OTLP_PROTOCOL: "carrier-pigeon" } });
    expect(protocol.code).toBe(2);
    expect(protocol.stderr).toMatch(/OTEL_EXPORTER_OTLP_PROTOCOL=carrier-pigeon is not one of http\/protobuf, http\/json, grpc/);
    writeFileSync(join(cwd, "statecraft.config.json"), JSON.stringify({ otel: "yes" }));
    const config = await runCli(["run", "--model", script(), "x"], { cwd });
    expect(config.code).toBe(2);
    expect(config.stderr).toMatch(/"otel" must be true or false/);
    expect(receiver.spans).toEqual([]);
  });
});
