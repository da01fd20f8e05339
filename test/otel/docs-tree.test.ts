/** The span tree docs/observability.md shows is what statecraft/otel makes of that run. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { agentTool, defineTool, query, scriptedModel, type Model } from "../../src/index.js";
import { openTelemetry } from "../../src/otel/index.js";
import { collect, removeDir, tempDir } from "../support/engine.js";
import { memoryTracing, spanTree } from "./tracing.js";

let cwd: string;
beforeEach(() => void (cwd = tempDir("statecraft-otel-docs-")));
afterEach(() => removeDir(cwd));

function detail(span: ReadableSpan): string {
  const a = span.attributes;
  const bits: string[] = [];
  if (a["gen_ai.usage.input_tokens"] !== undefined) bits.push(`in=${a["gen_ai.usage.input_tokens"]} out=${a["gen_ai.usage.output_tokens"]}${a["gen_ai.usage.cache_read.input_tokens"] ? ` cache_read=${a["gen_ai.usage.cache_read.input_tokens"]}` : ""}`);
  if (a["gen_ai.response.finish_reasons"]) bits.push(`finish=${(a["gen_ai.response.finish_reasons"] as string[]).join(",")}`);
  if (a["statecraft.permission.decision"]) bits.push(`permission=${a["statecraft.permission.decision"]} by ${a["statecraft.permission.by"]}`);
  if (a["error.type"]) bits.push(`error.type=${a["error.type"]}`);
  if (a["statecraft.stop_reason"]) bits.push(`stop=${a["statecraft.stop_reason"]}`);
  return bits.length ? ` [${bits.join(" ")}]` : "";
}

it("docs/observability.md's span tree and state events are those of the run it describes", async () => {
  const tracing = memoryTracing();
  const grep = defineTool({ name: "grep", description: "Searches.", inputSchema: { type: "object", properties: { pattern: { type: "string" } } }, risk: "read", executionMode: "sequential", execute: () => "src/a.ts:3: TODO" });
  const write = defineTool({ name: "write_file", description: "Writes.", inputSchema: { type: "object", properties: { path: { type: "string" } } }, risk: "write", execute: () => "written" });
  const childModel = scriptedModel([{ toolCalls: [{ name: "grep", input: { pattern: "TODO" } }], usage: { input: 120, output: 14 } }, { text: "One TODO in src/a.ts", usage: { input: 160, output: 9 } }], { name: "gpt-4o-mini" });
  const researcher = agentTool({ name: "researcher", description: "Researches.", model: childModel, tools: [grep] });
  const model: Model = {
    ...scriptedModel(
      [
        { toolCalls: [{ name: "researcher", input: { prompt: "find TODOs" } }, { name: "grep", input: { pattern: "FIXME" } }], usage: { input: 900, output: 40, cached: 512 } },
        { toolCalls: [{ name: "write_file", input: { path: "notes.md" } }], usage: { input: 1100, output: 30, cached: 896 } },
        { text: "Noted the TODO in notes.md.", usage: { input: 1200, output: 12, cached: 1024 } },
      ],
      { name: "gpt-4o" },
    ),
    provider: "openai",
  };
  await collect(query("Write down the open TODOs", { model, cwd, tools: [researcher, grep, write], permissions: { allow: ["write_file"] }, observers: [openTelemetry({ tracerProvider: tracing.provider, agentName: "notes" })] }));
  const spans = tracing.spans();
  const doc = readFileSync(join(import.meta.dirname, "..", "..", "docs", "observability.md"), "utf8");
  // The fenced blocks with no language: the printouts.
  const blocks: string[] = [];
  let open: { info: string; lines: string[] } | undefined;
  for (const line of doc.split("\n")) {
    if (!line.startsWith("```")) open?.lines.push(line);
    else if (open === undefined) open = { info: line.slice(3), lines: [] };
    else {
      if (open.info === "") blocks.push(open.lines.join("\n"));
      open = undefined;
    }
  }
  const tree = blocks.find((b) => b.startsWith("invoke_agent notes"));
  expect(tree, "docs/observability.md has no span tree starting with invoke_agent notes").toBeDefined();
  expect(spanTree(spans, detail)).toBe(tree);
  const top = spans.find((s) => s.name === "invoke_agent notes")!;
  const states = top.events.filter((e) => e.name === "statecraft.state").map((e) => e.attributes!["statecraft.state"]);
  const documented = blocks.find((b) => b.startsWith("build_context →"))!.replace(/ →\n/g, " → ");
  expect(states.join(" → ")).toBe(documented);
});
